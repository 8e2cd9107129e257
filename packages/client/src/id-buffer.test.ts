import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ManualClock } from '@flurry/core';
import { IdBuffer } from './id-buffer.js';

const ids = (from: number, n: number): BigUint64Array => BigUint64Array.from({ length: n }, (_, i) => BigInt(from + i));

test('GIVEN two chunks THEN IDs come out first-in first-out, each once, and the buffer then reports empty', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, 1_000);
  buf.push(ids(10, 3), clock.monotonic(), 'a');
  buf.push(ids(100, 2), clock.monotonic(), 'b');
  assert.equal(buf.size, 5);
  const out = [];
  for (let k = 0; k < 7; k++) out.push(buf.take());
  assert.deepEqual(out, [10n, 11n, 12n, 100n, 101n, undefined, undefined]);
  assert.equal(buf.size, 0);
  assert.equal(buf.taken, 5);
});

test('GIVEN a chunk older than maxAgeMs THEN it is discarded whole and none of its IDs is handed out, even after the clock steps back', () => {
  const clock = new ManualClock(Date.UTC(2025, 0, 1), 1_000);
  const buf = new IdBuffer(clock, 100);
  buf.push(ids(1, 4), clock.monotonic(), 'old');
  assert.equal(buf.take(), 1n);
  clock.advance(50);
  buf.push(ids(50, 2), clock.monotonic(), 'new');
  clock.advance(51); // first chunk is 101 ms old, second 51 ms
  assert.equal(buf.take(), 50n);
  assert.equal(buf.discarded, 3);
  clock.stepWall(-10_000); // wall steps do not matter: ages are monotonic
  assert.equal(buf.take(), 51n);
  assert.equal(buf.take(), undefined);
  assert.equal(buf.size, 0);
});

test('GIVEN a stale chunk behind a fresh one THEN discardStale drops it from the middle of the queue and size counts only fresh IDs', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, 100);
  buf.push(ids(1, 2), clock.monotonic() + 90, 'late-arriving fresh'); // sent later, arrived first
  buf.push(ids(10, 3), clock.monotonic(), 'older');
  clock.advance(101);
  assert.equal(buf.discardStale(), 3);
  assert.equal(buf.size, 2);
  assert.deepEqual([buf.take(), buf.take(), buf.take()], [1n, 2n, undefined]);
});

test('GIVEN takeMany(n) THEN it returns n IDs when n fresh ones are held and nothing (taking none) when fewer are', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, Infinity);
  buf.push(ids(0, 5), 0, 'a');
  buf.push(ids(5, 5), 0, 'b');
  assert.equal(buf.takeMany(11), undefined);
  assert.equal(buf.size, 10);
  assert.deepEqual(buf.takeMany(7), [0n, 1n, 2n, 3n, 4n, 5n, 6n]);
  assert.deepEqual(buf.takeMany(3), [7n, 8n, 9n]);
  assert.equal(buf.take(), undefined);
});

test('GIVEN any interleaving of pushes, takes, clock advances and discards THEN no ID is handed out twice, none from a stale chunk, and each chunk comes out in order', () => {
  type Op = { k: 'push'; n: number } | { k: 'take'; n: number } | { k: 'advance'; ms: number } | { k: 'discard' } | { k: 'many'; n: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ k: fc.constant('push' as const), n: fc.integer({ min: 0, max: 20 }) }),
    fc.record({ k: fc.constant('take' as const), n: fc.integer({ min: 1, max: 30 }) }),
    fc.record({ k: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 60 }) }),
    fc.record({ k: fc.constant('discard' as const) }),
    fc.record({ k: fc.constant('many' as const), n: fc.integer({ min: 1, max: 25 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const clock = new ManualClock();
      const buf = new IdBuffer(clock, 100);
      let next = 0;
      const pushedAt = new Map<bigint, number>();
      const seen = new Set<bigint>();
      const check = (v: bigint | undefined): void => {
        if (v === undefined) return;
        assert.ok(!seen.has(v), `ID ${v} handed out twice`);
        seen.add(v);
        assert.ok(clock.monotonic() - pushedAt.get(v)! <= 100, `ID ${v} handed out stale`);
      };
      for (const o of ops) {
        if (o.k === 'push') {
          const chunk = ids(next, o.n);
          for (const v of chunk) pushedAt.set(v, clock.monotonic());
          next += o.n;
          buf.push(chunk, clock.monotonic(), 's');
        } else if (o.k === 'take') {
          for (let k = 0; k < o.n; k++) check(buf.take());
        } else if (o.k === 'many') {
          const got = buf.takeMany(o.n);
          if (got) {
            assert.equal(got.length, o.n);
            got.forEach(check);
          }
        } else if (o.k === 'advance') clock.advance(o.ms);
        else buf.discardStale();
        assert.ok(buf.size >= 0);
      }
      // Pushed in increasing order, so hand-out order must be increasing too.
      const order = [...seen];
      for (let k = 1; k < order.length; k++) assert.ok(order[k]! > order[k - 1]!);
    }),
    { numRuns: 300, seed: 11 },
  );
});

test('GIVEN clear() THEN everything held is dropped and never handed out', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, 1_000);
  buf.push(ids(0, 3), 0, 'a');
  assert.equal(buf.clear(), 3);
  assert.equal(buf.take(), undefined);
  assert.equal(buf.size, 0);
});
