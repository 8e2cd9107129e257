import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from './backoff.js';

test('GIVEN no jitter THEN delays double from initialMs and stop at maxMs', () => {
  const b = new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0 });
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 100, 10_000].map((n) => b.delayFor(n)),
    [100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000],
  );
  assert.equal(b.delayFor(0), 100);
});

test('GIVEN jitter 0.5 THEN a delay lies between the base and 1.5 × the base', () => {
  assert.equal(new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0.5, random: () => 0 }).delayFor(2), 200);
  assert.equal(new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0.5, random: () => 0.999999 }).delayFor(2), 300);
  const b = new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0.5 });
  for (let k = 0; k < 100; k++) {
    const d = b.delayFor(20);
    assert.ok(d >= 1_000 && d <= 1_500, String(d));
  }
});
