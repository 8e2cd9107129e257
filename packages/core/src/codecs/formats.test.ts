import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { expectCode } from '../test-support.js';
import {
  BASE58_ALPHABET,
  BASE62_ALPHABET,
  CROCKFORD_ALPHABET,
  FORMATS,
  SORTABLE_BASE64URL_ALPHABET,
  codecs,
  decodeId,
  encodeId,
  getCodec,
  isIdFormat,
  type IdFormat,
} from './formats.js';

const MAX64 = (1n << 64n) - 1n;
const ALPHABETS: Record<IdFormat, string> = {
  decimal: '0123456789',
  hex: '0123456789abcdef',
  base32: CROCKFORD_ALPHABET,
  base58: BASE58_ALPHABET,
  base62: BASE62_ALPHABET,
  base64url: SORTABLE_BASE64URL_ALPHABET,
};

/** Independent reference: repeated bigint division, most significant digit first. */
function reference(id: bigint, alphabet: string, width = 0): string {
  const r = BigInt(alphabet.length);
  let s = '';
  do {
    s = alphabet[Number(id % r)] + s;
    id /= r;
  } while (id > 0n);
  return s.padStart(width, alphabet[0]);
}

const id64 = fc.bigInt({ min: 0n, max: MAX64 });
const widthAndId = fc
  .integer({ min: 1, max: 64 })
  .chain((bits) => fc.tuple(fc.constant(bits), fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n })));

describe('codecs: formats', () => {
  it('GIVEN the format list THEN it names exactly the six codecs, each alphabet ascending in ASCII order', () => {
    assert.deepEqual([...FORMATS], ['decimal', 'hex', 'base32', 'base58', 'base62', 'base64url']);
    for (const f of FORMATS) {
      assert.equal(codecs[f].name, f);
      assert.equal(codecs[f].alphabet, ALPHABETS[f]);
      assert.equal(codecs[f].radix, ALPHABETS[f].length);
      const chars = [...codecs[f].alphabet];
      assert.deepEqual([...chars].sort(), chars, `${f} alphabet must ascend`);
      assert.equal(new Set(chars).size, chars.length);
    }
    assert.match(SORTABLE_BASE64URL_ALPHABET, /^[A-Za-z0-9_-]{64}$/);
    assert.equal(CROCKFORD_ALPHABET.length, 32);
    assert.doesNotMatch(CROCKFORD_ALPHABET, /[ILOU]/);
    assert.doesNotMatch(BASE58_ALPHABET, /[0OIl]/);
  });

  it('GIVEN any width THEN the fixed length is the fewest digits that hold every value of that width', () => {
    assert.deepEqual(
      FORMATS.map((f) => codecs[f].fixedLength()),
      [20, 16, 13, 11, 11, 11],
    );
    for (const f of FORMATS) {
      const r = BigInt(codecs[f].radix);
      for (let bits = 1; bits <= 64; bits++) {
        const len = codecs[f].fixedLength(bits);
        assert.ok(r ** BigInt(len) >= 1n << BigInt(bits), `${f} ${bits}: ${len} digits hold 2^${bits} values`);
        assert.ok(r ** BigInt(len - 1) < 1n << BigInt(bits), `${f} ${bits}: ${len - 1} digits do not`);
      }
    }
  });

  it('GIVEN any 64-bit ID THEN every format encodes it like the reference and decodes it back (shortest and fixed)', () => {
    fc.assert(
      fc.property(id64, (id) => {
        for (const f of FORMATS) {
          const short = encodeId(id, f);
          const fixed = encodeId(id, f, { fixed: true });
          assert.equal(short, reference(id, ALPHABETS[f]), `${f} ${id}`);
          assert.equal(fixed, reference(id, ALPHABETS[f], codecs[f].fixedLength(64)), `${f} fixed ${id}`);
          assert.equal(decodeId(short, f), id);
          assert.equal(decodeId(fixed, f), id);
          assert.equal(decodeId(fixed, f, { fixed: true }), id);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('GIVEN the edges of every width THEN they round-trip (0, 1, 2^32 boundaries, 2^52/2^53 boundaries, max)', () => {
    const edges = [
      0n,
      1n,
      61n,
      62n,
      63n,
      64n,
      (1n << 32n) - 1n,
      1n << 32n,
      (1n << 52n) - 1n,
      1n << 52n,
      (1n << 53n) - 1n,
      1n << 53n,
      (1n << 53n) + 1n,
      (1n << 63n) - 1n,
      1n << 63n,
      MAX64 - 1n,
      MAX64,
    ];
    for (const f of FORMATS) {
      for (const id of edges) {
        assert.equal(encodeId(id, f), reference(id, ALPHABETS[f]), `${f} ${id}`);
        assert.equal(decodeId(encodeId(id, f, { fixed: true }), f, { fixed: true }), id);
      }
      for (let bits = 1; bits <= 64; bits++) {
        const max = (1n << BigInt(bits)) - 1n;
        const s = encodeId(max, f, { fixed: true, bits });
        assert.equal(s.length, codecs[f].fixedLength(bits));
        assert.equal(decodeId(s, f, { fixed: true, bits }), max);
      }
    }
  });

  it('GIVEN any width 1..64 and an ID of that width THEN the fixed form has the width’s length and round-trips', () => {
    fc.assert(
      fc.property(widthAndId, ([bits, id]) => {
        for (const f of FORMATS) {
          const s = encodeId(id, f, { fixed: true, bits });
          assert.equal(s.length, codecs[f].fixedLength(bits));
          assert.equal(decodeId(s, f, { fixed: true, bits }), id);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('GIVEN two IDs THEN their fixed-width strings compare exactly as the IDs do, in every format and width', () => {
    fc.assert(
      fc.property(widthAndId, fc.bigInt({ min: 0n, max: MAX64 }), ([bits, a], raw) => {
        const b = raw & ((1n << BigInt(bits)) - 1n);
        for (const f of FORMATS) {
          const sa = encodeId(a, f, { fixed: true, bits });
          const sb = encodeId(b, f, { fixed: true, bits });
          assert.equal(Math.sign(Number(a - b)), sa < sb ? -1 : sa > sb ? 1 : 0, `${f} ${bits}: ${a} vs ${b}`);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('GIVEN 2,000 random IDs sorted as strings THEN the order equals the numeric order', () => {
    const ids = fc.sample(id64, { numRuns: 2000, seed: 7 });
    const numeric = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const f of FORMATS) {
      const sorted = ids.map((id) => encodeId(id, f, { fixed: true })).sort();
      assert.deepEqual(
        sorted.map((s) => decodeId(s, f)),
        numeric,
        f,
      );
    }
  });

  it('GIVEN safe-integer numbers THEN they encode exactly like the same bigint', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        for (const f of FORMATS) assert.equal(encodeId(n, f, { fixed: true }), encodeId(BigInt(n), f, { fixed: true }));
      }),
    );
  });

  it('GIVEN known values THEN the strings are the documented ones', () => {
    assert.equal(encodeId(255n, 'hex'), 'ff');
    assert.equal(encodeId(255n, 'hex', { fixed: true }), '00000000000000ff');
    assert.equal(encodeId(42n, 'hex', { fixed: true, bits: 41 }), '0000000002a');
    assert.equal(encodeId(42n, 'base62', { fixed: true }), '0000000000g');
    assert.equal(encodeId(1859214170478923776n, 'base62'), '2DLDg5GS06C');
    assert.equal(encodeId(255n, 'base58', { fixed: true, bits: 41 }), '111115Q');
    assert.equal(codecs.base32.encode(1234567890n), '14SC0PJ');
    assert.equal(codecs.decimal.encode(5n, { fixed: true }), '00000000000000000005');
    assert.equal(encodeId(MAX64, 'base64url'), 'Ezzzzzzzzzz');
    assert.equal(encodeId(0n, 'base64url', { fixed: true }), '-----------');
    assert.equal(encodeId(0n, 'base58'), '1');
  });

  it('GIVEN Crockford base32 in lower case or with the I/L/O aliases THEN it decodes; hex decodes upper case', () => {
    assert.equal(codecs.base32.decode('14sc0pj'), 1234567890n);
    assert.equal(decodeId('1I', 'base32'), 33n);
    assert.equal(decodeId('1i', 'base32'), 33n);
    assert.equal(decodeId('LL', 'base32'), 33n);
    assert.equal(decodeId('ll', 'base32'), 33n);
    assert.equal(decodeId('1O', 'base32'), 32n);
    assert.equal(decodeId('1o', 'base32'), 32n);
    assert.equal(decodeId('FF', 'hex'), 255n);
    assert.equal(decodeId('fF', 'hex'), 255n);
    expectCode(() => decodeId('1U', 'base32'), 'FLURRY_E_ID_MALFORMED', /'U' at position 2 of 2/);
    // base58/base62/base64url are case-sensitive: 'a' and 'A' are different digits.
    assert.notEqual(decodeId('a', 'base62'), decodeId('A', 'base62'));
  });

  it('GIVEN a bad character THEN the error names the character and its 1-based position, for every format', () => {
    const bad: Record<IdFormat, string> = {
      decimal: 'a',
      hex: 'g',
      base32: 'U',
      base58: '0',
      base62: '-',
      base64url: '+',
    };
    for (const f of FORMATS) {
      const text = `${ALPHABETS[f][1]}${ALPHABETS[f][2]}${bad[f]}${ALPHABETS[f][1]}`;
      const err = expectCode(
        () => decodeId(text, f),
        'FLURRY_E_ID_MALFORMED',
        new RegExp(`'${bad[f].replace(/[+-]/g, '\\$&')}' at position 3 of 4`),
      );
      assert.equal(err.details.position, 3);
      assert.equal(err.details.char, bad[f]);
      assert.equal(err.details.format, f);
    }
    expectCode(() => decodeId('12 3', 'decimal'), 'FLURRY_E_ID_MALFORMED', /U\+0020 at position 3/);
    expectCode(() => decodeId('12é', 'decimal'), 'FLURRY_E_ID_MALFORMED', /U\+00E9 at position 3/);
    expectCode(() => decodeId('1😀', 'base62'), 'FLURRY_E_ID_MALFORMED', /U\+1F600 at position 2/);
    expectCode(() => decodeId('-1', 'decimal'), 'FLURRY_E_ID_MALFORMED', /'-' at position 1/);
    expectCode(() => decodeId('+1', 'decimal'), 'FLURRY_E_ID_MALFORMED', /'\+' at position 1/);
  });

  it('GIVEN empty input or a non-string THEN decoding fails with FLURRY_E_ID_MALFORMED', () => {
    for (const f of FORMATS) {
      expectCode(() => decodeId('', f), 'FLURRY_E_ID_MALFORMED', /is empty/);
      for (const v of [undefined, null, 12, 12n, {}, ['1']])
        expectCode(() => decodeId(v as string, f), 'FLURRY_E_ID_MALFORMED', /must be a string/);
    }
  });

  it('GIVEN a value beyond the width THEN decoding fails with FLURRY_E_ID_TOO_WIDE (overflow or too many digits)', () => {
    for (const f of FORMATS) {
      const len = codecs[f].fixedLength(64);
      const top = ALPHABETS[f][ALPHABETS[f].length - 1];
      // Every digit at its top value overflows 64 bits, except in hex where 16 f's are exactly 2^64 - 1.
      if (f === 'hex') assert.equal(decodeId(top.repeat(len), f), MAX64);
      else
        expectCode(() => decodeId(top.repeat(len), f), 'FLURRY_E_ID_TOO_WIDE', /larger than the largest 64-bit value/);
      expectCode(() => decodeId(ALPHABETS[f][1].repeat(len + 1), f), 'FLURRY_E_ID_TOO_WIDE', /at most/);
      expectCode(() => decodeId(ALPHABETS[f][0].repeat(len + 1), f), 'FLURRY_E_ID_TOO_WIDE', /at most/);
      for (const bits of [1, 7, 31, 32, 33, 41, 53, 63]) {
        const s = encodeId(1n << BigInt(bits), f);
        const err = expectCode(() => decodeId(s, f, { bits }), 'FLURRY_E_ID_TOO_WIDE');
        assert.equal(err.details.bits, bits);
        assert.equal(decodeId(encodeId((1n << BigInt(bits)) - 1n, f), f, { bits }), (1n << BigInt(bits)) - 1n);
      }
    }
    expectCode(() => decodeId('18446744073709551616', 'decimal'), 'FLURRY_E_ID_TOO_WIDE');
    assert.equal(decodeId('18446744073709551615', 'decimal'), MAX64);
    expectCode(() => decodeId('10000000000000000', 'hex'), 'FLURRY_E_ID_TOO_WIDE');
  });

  it('GIVEN fixed: true and the wrong length THEN decoding fails with FLURRY_E_ID_MALFORMED naming both lengths', () => {
    for (const f of FORMATS) {
      const len = codecs[f].fixedLength(64);
      const err = expectCode(
        () => decodeId(ALPHABETS[f][1], f, { fixed: true }),
        'FLURRY_E_ID_MALFORMED',
        new RegExp(`is 1 character long.*exactly ${len}`),
      );
      assert.equal(err.details.expectedLength, len);
      expectCode(
        () => decodeId(ALPHABETS[f][0].repeat(len + 1), f, { fixed: true }),
        'FLURRY_E_ID_MALFORMED',
        /exactly/,
      );
      expectCode(
        () => decodeId(ALPHABETS[f][0].repeat(len), f, { fixed: true, bits: 41 }),
        'FLURRY_E_ID_MALFORMED',
        /41-bit/,
      );
    }
  });

  it('GIVEN a negative, too wide or non-integer ID THEN encoding fails with the matching code', () => {
    for (const f of FORMATS) {
      expectCode(() => encodeId(-1n, f), 'FLURRY_E_ID_NEGATIVE', /cannot be negative/);
      expectCode(() => encodeId(-1, f), 'FLURRY_E_ID_NEGATIVE');
      expectCode(() => encodeId(MAX64 + 1n, f), 'FLURRY_E_ID_TOO_WIDE', /does not fit 64 bits/);
      expectCode(() => encodeId(1n << 41n, f, { bits: 41 }), 'FLURRY_E_ID_TOO_WIDE', /does not fit 41 bits/);
      expectCode(() => encodeId(2 ** 41, f, { bits: 41 }), 'FLURRY_E_ID_TOO_WIDE');
      for (const v of [1.5, Number.NaN, Infinity, 2 ** 53, '12', null, undefined, {}]) {
        expectCode(() => encodeId(v as bigint, f), 'FLURRY_E_ID_MALFORMED', /non-negative integer/);
      }
    }
  });

  it('GIVEN a bad bits option THEN encoding, decoding and fixedLength fail with FLURRY_E_INVALID_OPTION', () => {
    for (const bits of [0, 65, -1, 1.5, Number.NaN, '64']) {
      expectCode(() => encodeId(1n, 'hex', { bits: bits as number }), 'FLURRY_E_INVALID_OPTION', /from 1 to 64/);
      expectCode(() => decodeId('1', 'hex', { bits: bits as number }), 'FLURRY_E_INVALID_OPTION', /from 1 to 64/);
      expectCode(() => codecs.hex.fixedLength(bits as number), 'FLURRY_E_INVALID_OPTION');
    }
  });

  it('GIVEN an unknown format name THEN FLURRY_E_CODEC_UNKNOWN lists the known ones', () => {
    for (const name of ['b64', 'BASE62', '', 'toString', '__proto__', 'constructor']) {
      assert.equal(isIdFormat(name), false);
      const err = expectCode(
        () => encodeId(1n, name),
        'FLURRY_E_CODEC_UNKNOWN',
        /use one of decimal, hex, base32, base58, base62, base64url/,
      );
      assert.deepEqual(err.details.allowed, [...FORMATS]);
      expectCode(() => decodeId('1', name), 'FLURRY_E_CODEC_UNKNOWN');
      expectCode(() => getCodec(name), 'FLURRY_E_CODEC_UNKNOWN');
    }
    for (const f of FORMATS) assert.equal(getCodec(f), codecs[f]);
  });
});
