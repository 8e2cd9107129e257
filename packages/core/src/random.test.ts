import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBelow, randomFill, randomHex } from './random.js';

test('GIVEN randomHex(12) THEN 24 lower-case hex digits, and 2000 draws never repeat', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const h = randomHex(12);
    assert.match(h, /^[0-9a-f]{24}$/);
    seen.add(h);
  }
  assert.equal(seen.size, 2000);
});

test('GIVEN 64 KiB from randomFill THEN every byte value occurs and none is far from its share', () => {
  const buf = randomFill(new Uint8Array(65536));
  const counts = new Array<number>(256).fill(0);
  for (const b of buf) counts[b]++;
  // 256 per value on average; a binomial(65536, 1/256) stays within ±6 σ (σ ≈ 16) but for a broken source.
  for (let v = 0; v < 256; v++) assert.ok(counts[v] > 160 && counts[v] < 352, `byte ${v} occurred ${counts[v]} times`);
});

test('GIVEN a byte count outside 1 to 1024 THEN randomHex throws a RangeError naming the range', () => {
  for (const bad of [0, -1, 1.5, 1025, Number.NaN]) assert.throws(() => randomHex(bad), /from 1 to 1024/);
});

test('GIVEN randomBelow(n) THEN every value lies in 0 … n − 1 and, for n = 3, each third appears about a third of the time', () => {
  const counts = [0, 0, 0];
  for (let i = 0; i < 30_000; i++) counts[randomBelow(3)]++;
  for (const c of counts) assert.ok(c > 9_400 && c < 10_600, `counts ${counts.join(', ')}`); // σ ≈ 82
  for (const n of [1, 2, 1024, 2 ** 47, 2 ** 48]) {
    for (let i = 0; i < 200; i++) {
      const v = randomBelow(n);
      assert.ok(Number.isInteger(v) && v >= 0 && v < n, `${v} for n = ${n}`);
    }
  }
  for (const bad of [0, -1, 2.5, 2 ** 48 + 1, Number.NaN]) assert.throws(() => randomBelow(bad), /from 1 to 2\^48/);
});
