import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '@flurry/core';
import { clientError } from './errors.js';
import { backoffDelay, ServerPool } from './server-pool.js';

const urls = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3/prefix/'].map((u) => new URL(u));
const err = clientError('NETWORK', 'refused');

test('GIVEN round-robin THEN servers take turns and a failed one is skipped until its backoff has passed', () => {
  const clock = new ManualClock();
  const pool = new ServerPool(urls, 'round-robin', { initialMs: 100, maxMs: 1_000, jitter: 0 }, clock, 10_000);
  const [a, b, c] = pool.servers;
  assert.deepEqual([pool.pick(), pool.pick(), pool.pick(), pool.pick()], [a, b, c, a]);
  assert.equal(c.url, 'http://127.0.0.1:3/prefix');
  pool.failed(b, err);
  assert.deepEqual([pool.pick(), pool.pick(), pool.pick()], [c, a, c]);
  clock.advance(99);
  assert.equal(pool.eligible(b), false);
  clock.advance(1);
  assert.equal(pool.eligible(b), true);
  pool.failed(b, err); // second failure: 200 ms
  assert.equal(pool.report()[1].retryInMs, 200);
  assert.equal(pool.report()[1].state, 'down');
  assert.equal(pool.report()[1].lastError!.code, 'FLURRY_E_CLIENT_NETWORK');
  pool.succeeded(b, 3);
  assert.equal(pool.report()[1].state, 'up');
  assert.equal(b.failures, 0);
});

test('GIVEN least-latency THEN unmeasured servers are tried first, then the fastest answers; exclusions and refills in flight are honoured', () => {
  const clock = new ManualClock();
  const pool = new ServerPool(urls, 'least-latency', { jitter: 0 }, clock, 10_000);
  const [a, b, c] = pool.servers;
  pool.succeeded(a, 5);
  pool.succeeded(b, 1);
  assert.equal(pool.pick(), c); // not measured yet
  pool.succeeded(c, 9);
  assert.equal(pool.pick(), b);
  assert.equal(pool.pick(), b);
  assert.equal(pool.pick({ exclude: new Set([b]) }), a);
  b.refilling = true;
  assert.equal(pool.pick({ forRefill: true }), a);
  assert.equal(pool.pick(), b);
});

test('GIVEN every server down or refused THEN pick() gives nothing and msUntilRetry tells when; all refused → allUnauthorized', () => {
  const clock = new ManualClock();
  const pool = new ServerPool(urls, 'round-robin', { initialMs: 100, jitter: 0 }, clock, 10_000);
  const [a, b, c] = pool.servers;
  pool.failed(a, err);
  pool.failed(b, err);
  pool.refused(c, clientError('UNAUTHORIZED', '401'));
  assert.equal(pool.pick(), undefined);
  assert.equal(pool.msUntilRetry(), 100);
  assert.equal(pool.allUnauthorized(), false);
  clock.advance(100);
  assert.ok(pool.pick() === a || pool.pick() === b);
  pool.refused(a, err);
  pool.refused(b, err);
  assert.equal(pool.allUnauthorized(), true);
  assert.equal(pool.msUntilRetry(), Infinity);
  clock.advance(1_000_000);
  assert.equal(pool.pick(), undefined); // a refused server is never asked again
});

test('GIVEN a Retry-After longer than the backoff THEN the server waits the Retry-After', () => {
  const clock = new ManualClock();
  const pool = new ServerPool(urls.slice(0, 1), 'round-robin', { initialMs: 100, jitter: 0 }, clock, 10_000);
  pool.failed(pool.servers[0], err, 2_000);
  assert.equal(pool.msUntilRetry(), 2_000);
});

test('GIVEN no jitter THEN delays double from initialMs and stop at maxMs', () => {
  const b = { initialMs: 100, maxMs: 1_000, jitter: 0 };
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 100, 10_000].map((n) => backoffDelay(b, n)),
    [100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000],
  );
  assert.equal(backoffDelay(b, 0), 100);
});

test('GIVEN jitter 0.5 THEN a delay lies between the base and 1.5 × the base', () => {
  assert.equal(backoffDelay({ initialMs: 100, maxMs: 1_000, jitter: 0.5, random: () => 0 }, 2), 200);
  assert.equal(backoffDelay({ initialMs: 100, maxMs: 1_000, jitter: 0.5, random: () => 0.999999 }, 2), 300);
  const b = { initialMs: 100, maxMs: 1_000, jitter: 0.5 };
  for (let k = 0; k < 100; k++) {
    const d = backoffDelay(b, 20);
    assert.ok(d >= 1_000 && d <= 1_500, String(d));
  }
});
