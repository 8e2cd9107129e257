/**
 * What the generator's tests share: clocks that stall, freeze and track their highest wall
 * time, a seeded PRNG, hand-made leases, and the chaos driver that runs a generator through
 * stalls, steps back and jumps forward. Test support only; not exported by the package.
 */
import assert from 'node:assert/strict';
import { ManualClock, type Clock } from '../clock.js';
import { FlurryError, ErrorCode } from '../errors.js';
import type { NodeLease } from '../lease.js';
import { Generator } from './generator.js';
import type { BackwardsPolicy, ExhaustedPolicy } from './options.js';

/** The instant the tests' clocks start at. */
export const START = Date.UTC(2025, 0, 1);

/** A predicate for `assert.throws` matching a FlurryError with code `c`. */
export const code = (c: string) => (e: unknown) => e instanceof FlurryError && e.code === c;

/** A ManualClock that remembers the highest wall time it ever returned. */
export class TrackingClock extends ManualClock {
  maxWall = Number.NEGATIVE_INFINITY;
  override now(): number {
    const v = super.now();
    if (v > this.maxWall) this.maxWall = v;
    return v;
  }
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A lease as a registry hands it out (plain object implementing the core contract). */
export function makeLease(node: Record<string, number>, deadline: number, notBeforeMs = 0, wallDeadline?: number) {
  const lease = {
    node,
    deadline,
    wallDeadline,
    notBeforeMs,
    highWater: undefined as undefined | (() => number),
    attach(fn: () => number) {
      lease.highWater = fn;
    },
  };
  return lease satisfies NodeLease;
}

/**
 * Drives one generator through `count` IDs while the wall clock advances, stalls, steps
 * back 1 ms, 10 ms and 10 s, and jumps forward; checks every ID is strictly greater than
 * the previous one and never further ahead of the wall clock than the policy allows.
 */
export function chaos(
  layoutName: 'twitter' | 'sonyflake',
  onExhausted: ExhaustedPolicy,
  onClockBackwards: BackwardsPolicy,
  count: number,
  seed: number,
  sequenceStart: 'zero' | 'random' = 'zero',
) {
  const clock = new TrackingClock(START);
  const rand = rng(seed);
  let reads = 0;
  let events = 0;
  const steps = { back1: 0, back10: 0, back10s: 0, forward: 0, stall: 0 };
  clock.onRead = (c) => {
    if (++reads % 409 !== 0) return;
    const r = rand();
    if (++events % 97 === 50) {
      c.stepWall(-10_000);
      steps.back10s++;
    } else if (r < 0.5) c.advance(1 + Math.floor(rand() * 3));
    else if (r < 0.62) steps.stall++;
    else if (r < 0.77) {
      c.stepWall(-1);
      steps.back1++;
    } else if (r < 0.89) {
      c.stepWall(-10);
      steps.back10++;
    } else {
      c.stepWall(1 + Math.floor(rand() * 3000));
      steps.forward++;
    }
  };
  const maxBorrowMs = 200;
  const node: Record<string, number> = layoutName === 'twitter' ? { datacenter: 3, worker: 17 } : { machine: 4242 };
  const gen = new Generator({
    layout: layoutName,
    node,
    clock,
    onExhausted,
    onClockBackwards,
    maxBorrowMs,
    sequenceStart,
  });
  const layout = gen.layout;
  const mayLead =
    onExhausted === 'borrow' || onClockBackwards === 'tolerate' ? maxBorrowMs + layout.unitMs : layout.unitMs;
  const errors = new Map<string, number>();
  let prev = -1n;
  let issued = 0;
  try {
    for (let attempts = 0; issued < count && attempts < count * 2; attempts++) {
      let id: bigint;
      try {
        id = gen.next();
      } catch (e) {
        assert.ok(e instanceof FlurryError, String(e));
        errors.set(e.code, (errors.get(e.code) ?? 0) + 1);
        clock.advance(7); // the caller backs off; time passes
        continue;
      }
      if (!(id > prev))
        assert.fail(
          `ID ${issued} (${id}) is not greater than the previous one (${prev}) under ${onExhausted}/${onClockBackwards}`,
        );
      prev = id;
      issued++;
      if ((issued & 1023) === 0) {
        const d = layout.decode(id);
        assert.deepEqual(d.fields, node);
        assert.ok(
          d.unixMs <= clock.maxWall + mayLead,
          `ID at ${d.unixMs} is ${d.unixMs - clock.maxWall} ms ahead of the highest wall time under ${onExhausted}/${onClockBackwards}`,
        );
      }
    }
  } finally {
    gen.close();
  }
  assert.equal(issued, count, `only ${issued} IDs issued; errors: ${JSON.stringify([...errors])}`);
  for (const c of errors.keys()) assert.equal(c, ErrorCode.CLOCK_BACKWARDS, `unexpected error code ${c}`);
  assert.ok(
    steps.back1 > 0 && steps.back10 > 0 && steps.back10s > 0 && steps.forward > 0 && steps.stall > 0,
    JSON.stringify(steps),
  );
  return { errors, steps, stats: gen.stats };
}

/** A wall clock frozen at one instant whose sleep only moves monotonic time. */
export function frozenClock(at: number): Clock & { thaw(ms: number): void } {
  let wall = at;
  let mono = 0;
  return {
    now: () => wall,
    monotonic: () => mono,
    sleep: (ms: number) => {
      mono += ms;
    },
    thaw(ms: number) {
      wall += ms;
      mono += ms;
    },
  };
}

/**
 * A predicate for `assert.throws` matching FLURRY_E_LEASE_EXPIRED fenced by the `wall` or `monotonic` deadline.
 */
export const expiredOn = (clock: 'wall' | 'monotonic') => (e: unknown) =>
  e instanceof FlurryError && e.code === ErrorCode.LEASE_EXPIRED && e.details.clock === clock;
