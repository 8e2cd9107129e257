import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { FlurryError } from '../errors.js';
import { BASE58_ALPHABET, BASE62_ALPHABET, encodeId } from '../codecs/formats.js';
import { DihedralCheck } from './checksum.js';
import { PublicIdCodec } from './codec.js';
import { generateKey } from './keys.js';

const MAX64 = (1n << 64n) - 1n;
const KEY_A = `fk1_A_${Buffer.from(Uint8Array.from({ length: 32 }, (_, i) => i)).toString('base64url')}`;
const KEY_B = `fk1_B_${Buffer.from(Uint8Array.from({ length: 32 }, (_, i) => 100 + i)).toString('base64url')}`;
/** Same key ID as KEY_A, different secret (a key mix-up). */
const KEY_A_OTHER = `fk1_A_${Buffer.from(Uint8Array.from({ length: 32 }, (_, i) => 200 + i)).toString('base64url')}`;

function expectCode(fn: () => unknown, code: string, messagePart?: RegExp): FlurryError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof FlurryError, `expected a FlurryError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (messagePart) assert.match(caught.message, messagePart);
  return caught;
}

describe('public: PublicIdCodec', () => {
  it('GIVEN the defaults THEN public IDs are 13 base62 characters: key ID, 11 for the ID, check character', () => {
    const codec = PublicIdCodec.create({ keys: KEY_A });
    assert.equal(codec.bits, 64);
    assert.equal(codec.alphabet, 'base62');
    assert.equal(codec.checksum, true);
    assert.equal(codec.length, 13);
    assert.equal(codec.currentKeyId, 'A');
    const s = codec.encode(1859214170478923776n);
    assert.match(s, /^A[0-9A-Za-z]{12}$/);
    assert.equal(PublicIdCodec.create({ keys: KEY_A, checksum: false }).length, 12);
    assert.equal(PublicIdCodec.create({ keys: KEY_A, alphabet: 'base58' }).length, 13);
    assert.equal(PublicIdCodec.create({ keys: KEY_A, bits: 41 }).length, 1 + 7 + 1);
  });

  it('GIVEN any 64-bit ID THEN encode/decode and encrypt/decrypt round-trip, for both alphabets, with and without checksum', () => {
    const codecs = [
      PublicIdCodec.create({ keys: KEY_A }),
      PublicIdCodec.create({ keys: KEY_A, alphabet: 'base58' }),
      PublicIdCodec.create({ keys: KEY_A, checksum: false }),
      PublicIdCodec.create({ keys: KEY_A, alphabet: 'base58', checksum: false }),
    ];
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX64 }), (id) => {
        for (const c of codecs) {
          const s = c.encode(id);
          assert.equal(s.length, c.length);
          const alphabet = c.alphabet === 'base62' ? BASE62_ALPHABET : BASE58_ALPHABET;
          for (const ch of s) assert.ok(alphabet.includes(ch), `${ch} in ${s}`);
          assert.equal(c.decode(s), id);
          const x = c.encrypt(id);
          assert.ok(x >= 0n && x <= MAX64);
          assert.equal(c.decrypt(x), id);
          // The string carries exactly the encrypted value.
          assert.equal(s.slice(1, 1 + c.payloadLength), encodeId(x, c.alphabet, { fixed: true }));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('GIVEN every width 1..64 THEN samples round-trip and public IDs have the width’s fixed length', () => {
    for (let bits = 1; bits <= 64; bits++) {
      const codec = PublicIdCodec.create({ keys: KEY_A, bits });
      const max = (1n << BigInt(bits)) - 1n;
      for (const id of [0n, max, ...fc.sample(fc.bigInt({ min: 0n, max }), { numRuns: 60, seed: bits })]) {
        const s = codec.encode(id);
        assert.equal(s.length, codec.length);
        assert.equal(codec.decode(s), id);
        assert.ok(codec.encrypt(id) <= max);
      }
    }
  });

  it('GIVEN 250,000 consecutive IDs THEN every public ID decodes back and all are distinct (1,000,000 in the Feistel test)', () => {
    const codec = PublicIdCodec.create({ keys: KEY_A, bits: 63 });
    const n = 250_000;
    const seen = new Set<string>();
    const start = 1859214170478923776n;
    for (let i = 0; i < n; i++) {
      const id = start + BigInt(i);
      const s = codec.encode(id);
      seen.add(s);
      assert.equal(codec.decode(s), id);
    }
    assert.equal(seen.size, n);
  });

  it('GIVEN a rotated keyring THEN the newest key encodes and links made with the old key still decode', () => {
    const old = PublicIdCodec.create({ keys: KEY_A });
    const rotated = PublicIdCodec.create({ keys: `${KEY_B},${KEY_A}` });
    assert.deepEqual(rotated.keyIds, ['B', 'A']);
    const ids = fc.sample(fc.bigInt({ min: 0n, max: MAX64 }), { numRuns: 200, seed: 3 });
    for (const id of ids) {
      const oldLink = old.encode(id);
      assert.equal(rotated.decode(oldLink), id);
      const newLink = rotated.encode(id);
      assert.equal(newLink[0], 'B');
      assert.notEqual(newLink.slice(1), oldLink.slice(1));
      assert.equal(rotated.decode(newLink), id);
      assert.equal(rotated.decrypt(rotated.encrypt(id, 'A'), 'A'), id);
      assert.equal(rotated.encrypt(id, 'A'), old.encrypt(id));
    }
    const onlyNew = PublicIdCodec.create({ keys: KEY_B });
    const err = expectCode(() => onlyNew.decode(old.encode(5n)), 'FLURRY_E_PUBLIC_ID_UNKNOWN_KEY', /key "A", which is not in the keyring \("B"\)/);
    assert.deepEqual(err.details.known, ['B']);
    expectCode(() => onlyNew.encrypt(1n, 'Z'), 'FLURRY_E_PUBLIC_ID_UNKNOWN_KEY', /No key "Z"/);
    expectCode(() => onlyNew.decrypt(1n, 'Z'), 'FLURRY_E_PUBLIC_ID_UNKNOWN_KEY');
  });

  it('GIVEN a public ID with one character changed or two adjacent characters swapped THEN decoding fails, never returns an ID', () => {
    const codec = PublicIdCodec.create({ keys: `${KEY_A},${KEY_B}` });
    const other = PublicIdCodec.create({ keys: `${KEY_B},${KEY_A}` });
    let checked = 0;
    for (const id of fc.sample(fc.bigInt({ min: 0n, max: MAX64 }), { numRuns: 40, seed: 9 })) {
      for (const s of [codec.encode(id), other.encode(id)]) {
        for (let i = 0; i < s.length; i++) {
          for (const c of BASE62_ALPHABET) {
            if (c === s[i]) continue;
            const bad = s.slice(0, i) + c + s.slice(i + 1);
            expectCode(() => codec.decode(bad), 'FLURRY_E_PUBLIC_ID_CHECKSUM');
            checked++;
          }
          if (i + 1 < s.length && s[i] !== s[i + 1]) {
            expectCode(() => codec.decode(s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2)), 'FLURRY_E_PUBLIC_ID_CHECKSUM', /changed or two were swapped/);
            checked++;
          }
        }
      }
    }
    assert.ok(checked > 60_000);
  });

  it('GIVEN the wrong length, bad characters or a non-string THEN FLURRY_E_PUBLIC_ID_MALFORMED with the position', () => {
    const codec = PublicIdCodec.create({ keys: KEY_A });
    const s = codec.encode(77n);
    expectCode(() => codec.decode(s.slice(0, -1)), 'FLURRY_E_PUBLIC_ID_MALFORMED', /12 characters long; public IDs here are exactly 13/);
    expectCode(() => codec.decode(`${s}0`), 'FLURRY_E_PUBLIC_ID_MALFORMED', /exactly 13/);
    expectCode(() => codec.decode(''), 'FLURRY_E_PUBLIC_ID_MALFORMED');
    const err = expectCode(() => codec.decode(`${s.slice(0, 4)}-${s.slice(5)}`), 'FLURRY_E_PUBLIC_ID_MALFORMED', /invalid character "-" at position 5 of 13/);
    assert.equal(err.details.position, 5);
    expectCode(() => codec.decode(`${s.slice(0, 12)}é`), 'FLURRY_E_PUBLIC_ID_MALFORMED', /position 13/);
    const b58 = PublicIdCodec.create({ keys: KEY_A, alphabet: 'base58' });
    const t = b58.encode(77n);
    expectCode(() => b58.decode(`${t.slice(0, 3)}0${t.slice(4)}`), 'FLURRY_E_PUBLIC_ID_MALFORMED', /"0" at position 4/);
    for (const v of [undefined, null, 5, 5n, {}]) expectCode(() => codec.decode(v as unknown as string), 'FLURRY_E_PUBLIC_ID_MALFORMED', /must be a string/);
  });

  it('GIVEN a well-formed string whose encrypted part exceeds 2^bits THEN FLURRY_E_PUBLIC_ID_MALFORMED', () => {
    const codec = PublicIdCodec.create({ keys: KEY_A });
    const check = new DihedralCheck(BASE62_ALPHABET);
    const body = `A${'z'.repeat(11)}`; // 62^11 - 1 > 2^64 - 1
    expectCode(() => codec.decode(body + check.checkChar(body)), 'FLURRY_E_PUBLIC_ID_MALFORMED', /larger than the largest 64-bit value/);
    const narrow = PublicIdCodec.create({ keys: KEY_A, bits: 20 });
    const nbody = `A${encodeId(1n << 20n, 'base62').padStart(narrow.payloadLength, '0')}`;
    expectCode(() => narrow.decode(nbody + check.checkChar(nbody)), 'FLURRY_E_PUBLIC_ID_MALFORMED', /20-bit/);
    const noCheck = PublicIdCodec.create({ keys: KEY_A, checksum: false });
    expectCode(() => noCheck.decode(body), 'FLURRY_E_PUBLIC_ID_MALFORMED');
  });

  it('GIVEN a string made with another key under the same key ID THEN IDs decrypting above maxId are rejected as a wrong key', () => {
    const maxId = (1n << 63n) - 1n; // a 63-bit layout's IDs inside a 64-bit codec
    const mine = PublicIdCodec.create({ keys: KEY_A, maxId });
    const theirs = PublicIdCodec.create({ keys: KEY_A_OTHER, maxId });
    let rejected = 0;
    const n = 400;
    for (const id of fc.sample(fc.bigInt({ min: 0n, max: maxId }), { numRuns: n, seed: 5 })) {
      try {
        const got = mine.decode(theirs.encode(id));
        assert.ok(got <= maxId, 'anything returned is at least inside the valid range');
      } catch (e) {
        assert.ok(e instanceof FlurryError);
        assert.equal(e.code, 'FLURRY_E_PUBLIC_ID_MALFORMED');
        assert.match(e.message, /different key under the same key ID/);
        rejected++;
      }
    }
    // Each foreign string decrypts to a uniformly random 64-bit value: about half land above maxId.
    assert.ok(rejected > n * 0.4 && rejected < n * 0.6, `rejected ${rejected} of ${n}`);
    const fullRange = PublicIdCodec.create({ keys: KEY_A });
    expectCode(() => mine.decrypt(fullRange.encrypt(MAX64)), 'FLURRY_E_PUBLIC_ID_MALFORMED', /above the largest valid ID/);
  });

  it('GIVEN IDs out of range THEN encode and encrypt refuse them with ID codes', () => {
    const codec = PublicIdCodec.create({ keys: KEY_A, bits: 41, maxId: 1000n });
    expectCode(() => codec.encode(-1n), 'FLURRY_E_ID_NEGATIVE');
    expectCode(() => codec.encrypt(-1n), 'FLURRY_E_ID_NEGATIVE');
    expectCode(() => codec.encode(1001n), 'FLURRY_E_ID_TOO_WIDE', /above the largest accepted value 1000/);
    expectCode(() => codec.encrypt(1001n), 'FLURRY_E_ID_TOO_WIDE');
    expectCode(() => codec.decrypt(1n << 41n), 'FLURRY_E_ID_TOO_WIDE');
    expectCode(() => codec.decrypt(-5n), 'FLURRY_E_ID_NEGATIVE');
    for (const v of [1.5, '5', null, undefined]) expectCode(() => codec.encode(v as unknown as bigint), 'FLURRY_E_ID_MALFORMED');
    assert.equal(codec.decode(codec.encode(1000)), 1000n, 'safe-integer numbers are accepted');
  });

  it('GIVEN bad options or keys THEN create fails with INVALID_OPTION or PUBLIC_KEY_INVALID', () => {
    expectCode(() => PublicIdCodec.create(undefined as unknown as { keys: string }), 'FLURRY_E_INVALID_OPTION');
    for (const bits of [0, 65, 1.5]) expectCode(() => PublicIdCodec.create({ keys: KEY_A, bits }), 'FLURRY_E_INVALID_OPTION', /bits/);
    expectCode(() => PublicIdCodec.create({ keys: KEY_A, alphabet: 'base64' as 'base62' }), 'FLURRY_E_INVALID_OPTION', /alphabet/);
    expectCode(() => PublicIdCodec.create({ keys: KEY_A, bits: 8, maxId: 256n }), 'FLURRY_E_INVALID_OPTION', /maxId/);
    expectCode(() => PublicIdCodec.create({ keys: KEY_A, maxId: -1n }), 'FLURRY_E_INVALID_OPTION', /maxId/);
    expectCode(() => PublicIdCodec.create({ keys: KEY_A, checksum: 'yes' as unknown as boolean }), 'FLURRY_E_INVALID_OPTION', /checksum/);
    expectCode(() => PublicIdCodec.create({ keys: '' }), 'FLURRY_E_PUBLIC_KEY_INVALID', /empty/);
    expectCode(() => PublicIdCodec.create({ keys: [] }), 'FLURRY_E_PUBLIC_KEY_INVALID', /empty/);
    expectCode(() => PublicIdCodec.create({ keys: 'fk1_A_nope' }), 'FLURRY_E_PUBLIC_KEY_INVALID');
    expectCode(() => PublicIdCodec.create({ keys: [KEY_A, KEY_A_OTHER] }), 'FLURRY_E_PUBLIC_KEY_INVALID', /share the key ID "A"/);
  });

  it('GIVEN a codec THEN its string, JSON and inspect forms carry no key material', () => {
    const key = generateKey('Q');
    const codec = PublicIdCodec.create({ keys: key });
    for (const v of [String(codec), JSON.stringify(codec), inspect(codec), inspect(codec, { customInspect: false, showHidden: true, depth: 8 })]) {
      assert.ok(!v.includes(key.slice(6)), v);
      assert.doesNotMatch(v, /Int32Array|PublicIdKey|FeistelPermutation|fingerprint/, 'no key objects, secrets or round keys reachable by inspection');
    }
    assert.equal(String(codec), 'PublicIdCodec(bits=64, base62, checksum, keys=Q)');
    assert.deepEqual(JSON.parse(JSON.stringify(codec)), {
      bits: 64,
      maxId: MAX64.toString(),
      alphabet: 'base62',
      checksum: true,
      length: 13,
      keyIds: ['Q'],
      currentKeyId: 'Q',
    });
  });
});
