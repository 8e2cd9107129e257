import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ManualClock } from '@flurry/core';
import { IdBuffer, PrefetchSizer, type SizerSettings } from './id-buffer.js';

const ids = (from: number, n: number): BigUint64Array => BigUint64Array.from({ length: n }, (_, i) => BigInt(from + i));

test('GIVEN two chunks THEN IDs come out first-in first-out, each once, and the buffer then reports empty', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, 1_000);
  buf.push(ids(10, 3), clock.monotonic());
  buf.push(ids(100, 2), clock.monotonic());
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
  buf.push(ids(1, 4), clock.monotonic());
  assert.equal(buf.take(), 1n);
  clock.advance(50);
  buf.push(ids(50, 2), clock.monotonic());
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
  buf.push(ids(1, 2), clock.monotonic() + 90); // sent later, arrived first
  buf.push(ids(10, 3), clock.monotonic());
  clock.advance(101);
  assert.equal(buf.discardStale(), 3);
  assert.equal(buf.size, 2);
  assert.deepEqual([buf.take(), buf.take(), buf.take()], [1n, 2n, undefined]);
});

test('GIVEN takeMany(n) THEN it returns n IDs when n fresh ones are held (with oneAnswer, in the first answer) and nothing (taking none) when fewer are', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, Infinity);
  buf.push(ids(0, 5), 0);
  buf.push(ids(5, 5), 0);
  assert.equal(buf.takeMany(11), undefined);
  assert.equal(buf.size, 10);
  assert.deepEqual(buf.takeMany(7), [0n, 1n, 2n, 3n, 4n, 5n, 6n]);
  assert.deepEqual(buf.takeMany(3), [7n, 8n, 9n]);
  assert.equal(buf.take(), undefined);
  buf.push(ids(20, 2), 0);
  buf.push(ids(22, 2), 0);
  assert.equal(buf.takeMany(3, true), undefined, 'oneAnswer: 3 are held, but not in the first answer');
  assert.deepEqual(buf.takeMany(2, true), [20n, 21n]);
});

test('GIVEN any interleaving of pushes, takes, clock advances and discards THEN no ID is handed out twice, none from a stale chunk, and each chunk comes out in order', () => {
  type Op =
    | { k: 'push'; n: number }
    | { k: 'take'; n: number }
    | { k: 'advance'; ms: number }
    | { k: 'discard' }
    | { k: 'many'; n: number };
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
          buf.push(chunk, clock.monotonic());
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
      for (let k = 1; k < order.length; k++) assert.ok(order[k] > order[k - 1]);
    }),
    { numRuns: 300, seed: 11 },
  );
});

test('GIVEN clear() THEN everything held is dropped and never handed out', () => {
  const clock = new ManualClock();
  const buf = new IdBuffer(clock, 1_000);
  buf.push(ids(0, 3), 0);
  assert.equal(buf.clear(), 3);
  assert.equal(buf.take(), undefined);
  assert.equal(buf.size, 0);
});

/**
 * A consumer taking IDs at a given rate from an IdBuffer that is refilled as the client
 * does it with one server: below the low-water mark (counting what is in flight), one
 * request for `target − level` IDs, answered `latencyMs` later; the sizer is updated at
 * every refill decision.
 */
class RefillSim {
  readonly clock = new ManualClock();
  readonly buf: IdBuffer;
  readonly sizer: PrefetchSizer;
  refills = 0;
  private nextId = 0;
  private carry = 0;
  private inflight: { at: number; n: number; sentAt: number } | undefined;

  constructor(
    readonly p: SizerSettings,
    readonly latencyMs = 1,
  ) {
    this.buf = new IdBuffer(this.clock, p.maxAgeMs);
    this.sizer = new PrefetchSizer(this.clock, p);
  }

  private refill(): void {
    if (this.inflight) return; // the one server is busy: wait for its answer
    this.buf.discardStale();
    this.sizer.update(this.buf.taken, this.latencyMs);
    const level = this.buf.size;
    if (level >= this.sizer.lowWater) return;
    const now = this.clock.monotonic();
    this.inflight = { at: now + this.latencyMs, n: Math.max(this.sizer.target - level, 1), sentAt: now };
    this.refills++;
  }

  /** Takes `perMs` IDs a millisecond (fractions carried over) for `ms` milliseconds; `each` runs after every millisecond. */
  run(perMs: number, ms: number, each: () => void = () => {}): void {
    for (let t = 0; t < ms; t++) {
      const f = this.inflight;
      if (f && f.at <= this.clock.monotonic()) {
        this.inflight = undefined;
        this.buf.push(ids(this.nextId, f.n), f.sentAt);
        this.nextId += f.n;
        this.refill();
      }
      this.carry += perMs;
      for (; this.carry >= 1; this.carry--) {
        this.buf.take();
        if (this.buf.size < this.sizer.lowWater) this.refill();
      }
      this.clock.advance(1);
      each();
    }
  }
}

test('GIVEN a high take rate that grew the prefetch target THEN after the rate drops the target shrinks to the minimum within two refills, staying within [64, size] throughout', () => {
  for (const maxAgeMs of [5_000, 2_000, Infinity]) {
    const p: SizerSettings = { size: 10_000, lowWater: 3_000, maxAgeMs, adaptive: true };
    const sim = new RefillSim(p);
    const bounds = (): void => {
      assert.ok(
        sim.sizer.target >= PrefetchSizer.MIN_TARGET && sim.sizer.target <= p.size,
        `target ${sim.sizer.target} outside [64, ${p.size}]`,
      );
      assert.ok(
        sim.sizer.lowWater >= 0 && sim.sizer.lowWater < sim.sizer.target,
        `lowWater ${sim.sizer.lowWater} outside [0, target)`,
      );
    };
    assert.equal(sim.sizer.target, PrefetchSizer.MIN_TARGET, 'starts at the minimum');
    // 50,000 IDs/s for 3 s: the target grows to the ceiling.
    sim.run(50, 3_000, bounds);
    assert.equal(sim.sizer.target, p.size, `grew to size at 50k IDs/s (maxAgeMs ${maxAgeMs})`);
    // Then 10 IDs/s: a target of 1 s of consumption is 10 IDs, so the minimum.
    const before = sim.refills;
    let shrunkAfter: { refills: number; ms: number } | undefined;
    let ms = 0;
    sim.run(0.01, 3_600_000, () => {
      bounds();
      ms++;
      if (!shrunkAfter && sim.sizer.target === PrefetchSizer.MIN_TARGET)
        shrunkAfter = { refills: sim.refills - before, ms };
    });
    assert.ok(shrunkAfter, `the target never shrank back (still ${sim.sizer.target}, maxAgeMs ${maxAgeMs})`);
    assert.ok(shrunkAfter.refills <= 2, `shrank only after ${shrunkAfter.refills} refills (maxAgeMs ${maxAgeMs})`);
    // A refill comes when the held IDs age out (noticed at the next take, 100 ms apart at 10/s) or run down:
    // the two refills take at most that long each.
    const bound = Number.isFinite(maxAgeMs) ? 2 * (maxAgeMs + 100 + sim.latencyMs) : (p.size / 0.01) * 1.1;
    assert.ok(shrunkAfter.ms <= bound, `shrank only after ${shrunkAfter.ms} ms (bound ${bound}, maxAgeMs ${maxAgeMs})`);
    assert.equal(sim.sizer.target, PrefetchSizer.MIN_TARGET, 'and stays there while the rate stays low');
    // And it grows again when the rate comes back.
    sim.run(50, 3_000, bounds);
    assert.equal(sim.sizer.target, p.size);
  }
});

test('GIVEN any sequence of take rates THEN the target stays within [min(size, 64), size] and the low-water mark below it; with adaptive off they stay at size and lowWater', () => {
  const phase = fc.record({
    perMs: fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 80, noNaN: true })),
    ms: fc.integer({ min: 1, max: 1_500 }),
  });
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20_000 }),
      fc.double({ min: 0, max: 0.99, noNaN: true }),
      fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 10_000 })),
      fc.boolean(),
      fc.integer({ min: 0, max: 50 }),
      fc.array(phase, { minLength: 1, maxLength: 5 }),
      (size, lowFrac, maxAgeMs, adaptive, latencyMs, phases) => {
        const p: SizerSettings = { size, lowWater: Math.floor(size * lowFrac), maxAgeMs, adaptive };
        const sim = new RefillSim(p, latencyMs);
        const min = Math.min(size, PrefetchSizer.MIN_TARGET);
        const check = (): void => {
          const { target, lowWater } = sim.sizer;
          if (!adaptive) {
            assert.equal(target, size);
            assert.equal(lowWater, p.lowWater);
            return;
          }
          assert.ok(
            Number.isInteger(target) && target >= min && target <= size,
            `target ${target} outside [${min}, ${size}]`,
          );
          assert.ok(
            Number.isInteger(lowWater) && lowWater >= 0 && (lowWater < target || (target === 1 && lowWater === 0)),
            `lowWater ${lowWater}, target ${target}`,
          );
        };
        check();
        for (const ph of phases) sim.run(ph.perMs, ph.ms, check);
      },
    ),
    { numRuns: 60, seed: 7 },
  );
});
