import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hkdfSync } from 'node:crypto';
import fc from 'fast-check';
import { FlurryError } from '../errors.js';
import { chaskeyTag } from '../testing/chaskey-reference.js';
import { decrypt, decryptNumber, encrypt, encryptNumber } from '../testing/feistel-kit.js';
import { FEISTEL_ROUNDS, FeistelPermutation } from './feistel.js';

const SECRET = Uint8Array.from({ length: 32 }, (_, i) => i);
const OTHER = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);

describe('public: Feistel permutation', () => {
  it('GIVEN the documented derivation THEN each round function is Chaskey-12 of (x, i, N, "FLRY") under the HKDF round key', () => {
    for (const bits of [1, 17, 41, 63, 64]) {
      const p = FeistelPermutation.fromSecret(SECRET, bits);
      const okm = new Uint8Array(
        hkdfSync(
          'sha256',
          SECRET,
          'flurry/public-id/v1',
          `feistel-chaskey12;bits=${bits};rounds=12`,
          16 * FEISTEL_ROUNDS,
        ),
      );
      const dv = new DataView(okm.buffer);
      for (let i = 0; i < FEISTEL_ROUNDS; i++) {
        const key = Uint32Array.from({ length: 4 }, (_, w) => dv.getUint32(16 * i + 4 * w, true));
        for (const x of [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 123456789]) {
          const expected = chaskeyTag(key, Uint32Array.of(x, i, bits, 0x59524c46), 12)[0];
          assert.equal(p.roundFunction(i, x) >>> 0, expected, `bits ${bits} round ${i} x ${x}`);
        }
      }
    }
  });

  it('GIVEN every width from 1 to 18 bits THEN encryption is a bijection of [0, 2^N) and decryption inverts it (exhaustive)', () => {
    for (let bits = 1; bits <= 18; bits++) {
      const p = FeistelPermutation.fromSecret(SECRET, bits);
      const size = 2 ** bits;
      const hit = new Uint8Array(size);
      for (let x = 0; x < size; x++) {
        const y = encryptNumber(p, x);
        assert.ok(Number.isInteger(y) && y >= 0 && y < size, `bits ${bits}: ${x} -> ${y} out of range`);
        assert.equal(hit[y], 0, `bits ${bits}: collision at ${y}`);
        hit[y] = 1;
        assert.equal(decryptNumber(p, y), x);
      }
    }
  });

  it('GIVEN every width from 1 to 64 bits THEN samples round-trip through bigint encrypt/decrypt and stay in range', () => {
    for (let bits = 1; bits <= 64; bits++) {
      const p = FeistelPermutation.fromSecret(SECRET, bits);
      const max = (1n << BigInt(bits)) - 1n;
      const samples = [
        0n,
        1n,
        max,
        max - 1n,
        max >> 1n,
        ...fc.sample(fc.bigInt({ min: 0n, max }), { numRuns: 200, seed: bits }),
      ];
      for (const x of samples) {
        const y = encrypt(p, x);
        assert.ok(y >= 0n && y <= max, `bits ${bits}: ${x} -> ${y}`);
        assert.equal(decrypt(p, y), x, `bits ${bits}: ${x}`);
      }
    }
  });

  it('GIVEN 1,000,000 consecutive 64-bit IDs THEN all encrypt to distinct values that decrypt back', () => {
    const p = FeistelPermutation.fromSecret(SECRET, 64);
    const n = 1_000_000;
    const start = 1859214170478923776n;
    const out = new BigUint64Array(n);
    for (let i = 0; i < n; i++) {
      const id = start + BigInt(i);
      const y = encrypt(p, id);
      out[i] = y;
      if (i % 97 === 0) assert.equal(decrypt(p, y), id);
    }
    out.sort();
    for (let i = 1; i < n; i++) if (out[i] === out[i - 1]) assert.fail(`collision ${out[i]}`);
  });

  it('GIVEN the same secret at different widths, or different secrets THEN the permutations are unrelated', () => {
    const a = FeistelPermutation.fromSecret(SECRET, 64);
    const b = FeistelPermutation.fromSecret(OTHER, 64);
    const c = FeistelPermutation.fromSecret(SECRET, 63);
    let sameAB = 0;
    let sameAC = 0;
    for (let i = 0n; i < 1000n; i++) {
      if (encrypt(a, i) === encrypt(b, i)) sameAB++;
      if ((encrypt(a, i) & ((1n << 63n) - 1n)) === encrypt(c, i)) sameAC++;
    }
    assert.equal(sameAB, 0);
    assert.equal(sameAC, 0);
  });

  it('GIVEN values outside [0, 2^N) or a bad secret THEN coded errors', () => {
    const p = FeistelPermutation.fromSecret(SECRET, 41);
    const code = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        assert.ok(e instanceof FlurryError);
        return e.code;
      }
      return 'none';
    };
    assert.equal(
      code(() => encrypt(p, -1n)),
      'FLURRY_E_ID_NEGATIVE',
    );
    assert.equal(
      code(() => encrypt(p, 1n << 41n)),
      'FLURRY_E_ID_TOO_WIDE',
    );
    assert.equal(
      code(() => decrypt(p, 1n << 41n)),
      'FLURRY_E_ID_TOO_WIDE',
    );
    assert.equal(
      code(() => encrypt(p, 5 as unknown as bigint)),
      'FLURRY_E_ID_MALFORMED',
    );
    assert.equal(
      code(() => FeistelPermutation.fromSecret(new Uint8Array(16), 64)),
      'FLURRY_E_PUBLIC_KEY_INVALID',
    );
    assert.equal(
      code(() => FeistelPermutation.fromSecret(SECRET, 65)),
      'FLURRY_E_INVALID_OPTION',
    );
  });
});
