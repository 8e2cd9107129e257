/**
 * Statistical checks that public IDs of consecutive IDs show no order, time or node: the
 * outputs for runs of consecutive and of Snowflake-shaped IDs must look like independent
 * uniform draws. The key is fixed, so the test is deterministic; the bounds are 5 standard
 * deviations (a random permutation fails one of them with probability < 1e-4).
 *
 * The authentication tag of the string form is checked the same way: a key that did not
 * issue a string must agree with its tag no more often than chance (1/radix³).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '../errors.js';
import { PublicIdCipher } from './cipher.js';

const KEY = 'fk1_S_c3RhdGlzdGljcy10ZXN0LWtleS0wMTIzNDU2Nzg5YWI';

/** Twitter-layout-shaped IDs: 41-bit ms timestamp, datacenter 3, worker 7, 12-bit sequence 0..perMs-1 each ms. */
function snowflakeIds(n: number, perMs: number): bigint[] {
  const out: bigint[] = [];
  let ts = 533_000_000_000n;
  for (let seq = 0; out.length < n; seq = (seq + 1) % perMs) {
    if (seq === 0) ts++;
    out.push((ts << 22n) | (3n << 17n) | (7n << 12n) | BigInt(seq));
  }
  return out;
}

function consecutive(n: number, start: bigint): bigint[] {
  return Array.from({ length: n }, (_, i) => start + BigInt(i));
}

function checkUniform(name: string, bits: number, outputs: bigint[]): void {
  const n = outputs.length;
  const sd = (p: number, m: number): number => Math.sqrt(m * p * (1 - p));
  // 1. Every output bit is balanced.
  const ones = new Array<number>(bits).fill(0);
  const sameAsNext = new Array<number>(bits).fill(0);
  const hi = outputs.map((y) => Number(y >> 32n));
  const lo = outputs.map((y) => Number(y & 0xffffffffn));
  const bitOf = (t: number, b: number): number => (b < 32 ? (lo[t] >>> b) & 1 : (hi[t] >>> (b - 32)) & 1);
  for (let t = 0; t < n; t++) {
    for (let b = 0; b < bits; b++) {
      const bit = bitOf(t, b);
      ones[b] += bit;
      if (t + 1 < n && bitOf(t + 1, b) === bit) sameAsNext[b]++;
    }
  }
  for (let b = 0; b < bits; b++) {
    assert.ok(Math.abs(ones[b] - n / 2) < 5 * sd(0.5, n), `${name}: bit ${b} set ${ones[b]} of ${n} times`);
    // 2. A bit of one output does not predict the same bit of the next.
    assert.ok(
      Math.abs(sameAsNext[b] - (n - 1) / 2) < 5 * sd(0.5, n - 1),
      `${name}: bit ${b} repeats ${sameAsNext[b]} of ${n - 1} times`,
    );
  }
  // 3. No monotone runs: ascents ≈ (n − 1)/2 (variance (n + 1)/12) and the longest run stays short.
  let ascents = 0;
  let run = 1;
  let longest = 1;
  let dir = 0;
  for (let t = 1; t < n; t++) {
    const d = outputs[t] > outputs[t - 1] ? 1 : -1;
    if (d > 0) ascents++;
    run = d === dir ? run + 1 : 2;
    dir = d;
    longest = Math.max(longest, run);
  }
  assert.ok(
    Math.abs(ascents - (n - 1) / 2) < 5 * Math.sqrt((n + 1) / 12),
    `${name}: ${ascents} ascents in ${n - 1} steps`,
  );
  assert.ok(longest <= 12, `${name}: a monotone run of ${longest}`);
  // 4. Consecutive outputs, and outputs against their position, are uncorrelated.
  const scale = 2 ** bits;
  const u = outputs.map((y) => Number(y) / scale);
  const corr = (xs: number[], ys: number[]): number => {
    const m = xs.length;
    const mx = xs.reduce((a, b) => a + b, 0) / m;
    const my = ys.reduce((a, b) => a + b, 0) / m;
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (let i = 0; i < m; i++) {
      sxy += (xs[i] - mx) * (ys[i] - my);
      sxx += (xs[i] - mx) ** 2;
      syy += (ys[i] - my) ** 2;
    }
    return sxy / Math.sqrt(sxx * syy);
  };
  const bound = 5 / Math.sqrt(n);
  const lag1 = corr(u.slice(0, -1), u.slice(1));
  const trend = corr(
    u.map((_, i) => i),
    u,
  );
  assert.ok(Math.abs(lag1) < bound, `${name}: lag-1 correlation ${lag1}`);
  assert.ok(Math.abs(trend) < bound, `${name}: correlation with position ${trend}`);
}

describe('public: statistics of consecutive IDs', () => {
  const n = 40_000;
  for (const bits of [64, 63, 41]) {
    const codec = PublicIdCipher.create({ keys: KEY, bits });
    const mask = (1n << BigInt(bits)) - 1n;
    it(`GIVEN ${n} consecutive IDs (${bits}-bit space) THEN outputs are bit-balanced, without runs or correlation`, () => {
      checkUniform(
        `consecutive/${bits}`,
        bits,
        consecutive(n, 1859214170478923776n & mask).map((id) => codec.encrypt(id)),
      );
    });
    it(`GIVEN ${n} Snowflake IDs of one node, 5 per ms (${bits}-bit space) THEN outputs show no time or node`, () => {
      checkUniform(
        `snowflake/${bits}`,
        bits,
        snowflakeIds(n, 5).map((id) => codec.encrypt(id & mask)),
      );
    });
  }

  it('GIVEN any one input bit flipped THEN each output bit flips about half the time (avalanche)', () => {
    const codec = PublicIdCipher.create({ keys: KEY });
    const samples = 1500;
    const flips = Array.from({ length: 64 }, () => new Array<number>(64).fill(0));
    let x = 0x9e3779b97f4a7c15n;
    for (let s = 0; s < samples; s++) {
      x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n); // fixed LCG inputs
      const y = codec.encrypt(x);
      for (let j = 0; j < 64; j++) {
        const d = y ^ codec.encrypt(x ^ (1n << BigInt(j)));
        const dLo = Number(d & 0xffffffffn);
        const dHi = Number(d >> 32n);
        for (let i = 0; i < 32; i++) {
          flips[j][i] += (dLo >>> i) & 1;
          flips[j][i + 32] += (dHi >>> i) & 1;
        }
      }
    }
    const bound = 5 * Math.sqrt(samples * 0.25);
    for (let j = 0; j < 64; j++) {
      for (let i = 0; i < 64; i++) {
        assert.ok(
          Math.abs(flips[j][i] - samples / 2) < bound,
          `input bit ${j} flips output bit ${i} ${flips[j][i]} of ${samples} times`,
        );
      }
    }
  });
});

describe('public: statistics of the authentication tag', () => {
  /** Same key ID S as KEY, another secret: the "wrong key" of these tests. */
  const WRONG = 'fk1_S_d3Jvbmcta2V5LW9mLXRoZS10YWctc3RhdGlzdGljcy0';

  for (const [alphabet, n] of [
    ['base62', 200_000],
    ['base58', 100_000],
  ] as const) {
    it(`GIVEN ${n.toLocaleString('en-US')} random encrypted values (${alphabet}) THEN a wrong key's tag agrees in 1, 2 and 3 characters at the rates 1/r, 1/r², 1/r³ (false accept within its bound), and tag characters are uniform`, () => {
      const right = PublicIdCipher.create({ keys: KEY, alphabet });
      const wrong = PublicIdCipher.create({ keys: WRONG, alphabet });
      const r = alphabet === 'base62' ? 62 : 58;
      const p = right.payloadLength;
      let x = 0x243f6a8885a308d3n;
      const agree = [0, 0, 0];
      const firstChar = new Map<string, number>();
      let decodedByWrongKey = 0;
      for (let i = 0; i < n; i++) {
        x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n); // fixed LCG: random encrypted values
        // The strings that each key makes for the same encrypted value x: same key ID and payload, their own tags.
        const s = right.encode(right.decrypt(x));
        const t = wrong.encode(wrong.decrypt(x));
        assert.equal(s.slice(0, 1 + p), t.slice(0, 1 + p));
        const a = s.slice(1 + p, 4 + p);
        const b = t.slice(1 + p, 4 + p);
        firstChar.set(a[0], (firstChar.get(a[0]) ?? 0) + 1);
        for (let k = 0; k < 3 && a[k] === b[k]; k++) agree[k]++;
        if (a === b || i % 20 === 0) {
          // Decoding the right key's string with the wrong key accepts exactly when the tags agree.
          try {
            wrong.decode(s);
            decodedByWrongKey++;
            assert.equal(a, b);
          } catch (e) {
            assert.ok(e instanceof FlurryError && e.code === 'FLURRY_E_PUBLIC_ID_WRONG_KEY', String(e));
            assert.notEqual(a, b);
          }
        }
      }
      for (let k = 0; k < 2; k++) {
        const q = r ** -(k + 1);
        const sd = Math.sqrt(n * q * (1 - q));
        assert.ok(
          Math.abs(agree[k] - n * q) < 5 * sd,
          `${k + 1} tag characters agree ${agree[k]} times of ${n}, expected ${(n * q).toFixed(1)} ± ${sd.toFixed(1)}`,
        );
      }
      // 3 characters: a Poisson count with mean n/r³ (0.84 for base62, 0.51 for base58); P(count ≥ 7) < 3e-5.
      assert.ok(
        agree[2] <= 6,
        `a wrong key passed the full tag ${agree[2]} times in ${n} (expected ${(n / r ** 3).toFixed(2)})`,
      );
      assert.equal(decodedByWrongKey, agree[2]);
      // The first tag character is uniform over the alphabet (chi-square, r − 1 degrees of freedom, mean + 5 sd).
      const e = n / r;
      let chi2 = 0;
      for (const ch of new Set([...firstChar.keys()])) chi2 += ((firstChar.get(ch) ?? 0) - e) ** 2 / e;
      chi2 += (r - firstChar.size) * e;
      assert.ok(
        chi2 < r - 1 + 5 * Math.sqrt(2 * (r - 1)),
        `chi-square ${chi2.toFixed(1)} for ${r - 1} degrees of freedom`,
      );
    });
  }
});
