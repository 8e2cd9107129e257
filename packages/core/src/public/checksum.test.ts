import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BASE58_ALPHABET, BASE62_ALPHABET } from '../codecs/formats.js';
import { DihedralCheck } from './checksum.js';

for (const [name, alphabet] of [
  ['base62', BASE62_ALPHABET],
  ['base58', BASE58_ALPHABET],
] as const) {
  describe(`public: dihedral check character (${name})`, () => {
    const check = new DihedralCheck(alphabet);
    const size = alphabet.length;

    it('GIVEN the tables THEN they are the definitions: (a,f)·(b,g) = (a + (−1)^f·b mod n, f ⊕ g), φ(r^k) = r^−k, φ(r^k·s) = r^(k+1)·s, φ^e by repetition (exhaustive)', () => {
      const n = size / 2;
      const el = (k: number, f: number) => (((k % n) + n) % n) + n * f;
      for (let x = 0; x < size; x++)
        for (let y = 0; y < size; y++) {
          const [a, f, b, g] = [x % n, x < n ? 0 : 1, y % n, y < n ? 0 : 1];
          if (check.multiply(x, y) !== el(f ? a - b : a + b, f ^ g)) assert.fail(`product ${x}·${y}`);
        }
      const phi = (x: number) => (x < n ? el(-x, 0) : el(x - n + 1, 1));
      for (let x = 0; x < size; x++) {
        let p = x;
        for (let e = 0; e <= DihedralCheck.MAX_LENGTH; e++, p = phi(p))
          if (check.phi(x, e) !== p) assert.fail(`φ^${e}(${x})`);
      }
    });

    it('GIVEN the multiplication table THEN it is a group: identity 0, inverses, associativity (exhaustive)', () => {
      for (let x = 0; x < size; x++) {
        assert.equal(check.multiply(0, x), x);
        assert.equal(check.multiply(x, 0), x);
        const row = new Set<number>();
        for (let y = 0; y < size; y++) row.add(check.multiply(x, y));
        assert.equal(row.size, size, 'each row is a permutation');
        for (let y = 0; y < size; y++) {
          const xy = check.multiply(x, y);
          for (let z = 0; z < size; z++) {
            if (check.multiply(xy, z) !== check.multiply(x, check.multiply(y, z)))
              assert.fail(`not associative at ${x},${y},${z}`);
          }
        }
      }
      // Non-abelian, as an anti-symmetric mapping requires for order 2·odd.
      assert.notEqual(check.multiply(1, size / 2), check.multiply(size / 2, 1));
    });

    it('GIVEN φ THEN it is a bijection and anti-symmetric: φ(x)·y ≠ φ(y)·x for every x ≠ y (exhaustive proof of transposition detection)', () => {
      const image = new Set<number>();
      for (let x = 0; x < size; x++) image.add(check.phi(x));
      assert.equal(image.size, size);
      for (let x = 0; x < size; x++) {
        for (let y = 0; y < size; y++) {
          if (x !== y && check.multiply(check.phi(x), y) === check.multiply(check.phi(y), x))
            assert.fail(`φ not anti-symmetric at ${x}, ${y}`);
        }
      }
    });

    it('GIVEN 1,500 random strings (the lengths of public IDs up to 16 characters) THEN every single-character substitution and every adjacent transposition is rejected', () => {
      const body = fc.string({ unit: fc.constantFrom(...alphabet), minLength: 11, maxLength: 15 });
      let substitutions = 0;
      let transpositions = 0;
      for (const b of fc.sample(body, { numRuns: 1500, seed: 42 })) {
        const full = b + check.checkChar(b);
        assert.ok(check.verify(full), full);
        for (let i = 0; i < full.length; i++) {
          for (const c of alphabet) {
            if (c === full[i]) continue;
            const bad = full.slice(0, i) + c + full.slice(i + 1);
            if (check.verify(bad)) assert.fail(`substitution undetected: ${full} -> ${bad}`);
            substitutions++;
          }
          if (i + 1 < full.length && full[i] !== full[i + 1]) {
            const swapped = full.slice(0, i) + full[i + 1] + full[i] + full.slice(i + 2);
            if (check.verify(swapped)) assert.fail(`transposition undetected: ${full} -> ${swapped}`);
            transpositions++;
          }
        }
      }
      assert.ok(substitutions > 1_000_000 && transpositions > 15_000);
    });

    it('GIVEN digit values instead of a string THEN checkValue and verifyValues agree with checkChar and verify', () => {
      for (const b of fc.sample(fc.string({ unit: fc.constantFrom(...alphabet), minLength: 1, maxLength: 40 }), {
        numRuns: 3000,
        seed: 7,
      })) {
        const v = new Uint8Array(b.length + 1);
        for (let i = 0; i < b.length; i++) v[i] = alphabet.indexOf(b[i]);
        v[b.length] = check.checkValue(v, b.length);
        assert.equal(alphabet[v[b.length]], check.checkChar(b));
        assert.equal(check.verifyValues(v, v.length), true);
        v[b.length] = (v[b.length] + 1) % size;
        assert.equal(check.verifyValues(v, v.length), check.verify(b + alphabet[v[b.length]]));
        assert.equal(check.verifyValues(v, v.length), false);
      }
    });

    it('GIVEN the extreme characters THEN the substitution a weighted sum mod 61 would miss is caught', () => {
      // 0 and 61 (or 57) are congruent modulo 61 (or 57): a mod-prime check would miss this.
      const body = `${alphabet[0]}${alphabet[5]}${alphabet[7]}`;
      const full = body + check.checkChar(body);
      const swappedExtreme = alphabet[size - 1] + full.slice(1);
      assert.equal(check.verify(swappedExtreme), false);
    });
  });
}
