// The generator under a lease: fencing by the monotonic and wall deadlines, fills cut short, the high-water mark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, type Clock } from '../clock.js';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout } from '../layout/index.js';
import { Generator } from './generator.js';
import { type GeneratorEvent } from './options.js';
import { START, code, makeLease, expiredOn } from './test-kit.js';

/** A LEASE_EXPIRED refusal because the lease was lost or released (its deadline −∞). */
const lostOrReleased = (e: unknown): boolean =>
  e instanceof FlurryError && e.code === ErrorCode.LEASE_EXPIRED && /lost or released/.test(e.message);

test('GIVEN a lease THEN issuing stops once monotonic time passes the deadline (a pause), with a fenced event, and resumes after renewal', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 1 }, 1000);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({ layout: 'twitter', lease, clock, onEvent: (e) => events.push(e) });
  try {
    assert.deepEqual(gen.node, { datacenter: 5, worker: 1 });
    const a = gen.next();
    clock.advanceMonotonic(1000); // the process was paused: wall frozen, monotonic ran on
    assert.throws(() => gen.next(), code(ErrorCode.LEASE_EXPIRED));
    assert.throws(() => gen.batch(5), code(ErrorCode.LEASE_EXPIRED));
    assert.throws(() => gen.fill(new BigUint64Array(2)), code(ErrorCode.LEASE_EXPIRED));
    assert.deepEqual(events[0], { type: 'fenced', code: ErrorCode.LEASE_EXPIRED });
    lease.deadline = 5000;
    assert.ok(gen.next() > a);
    lease.deadline = Number.NEGATIVE_INFINITY;
    assert.throws(() => gen.next(), lostOrReleased);
  } finally {
    gen.close();
  }
});

test('GIVEN a held lease WHEN wall time jumps past the wall deadline while monotonic time stays frozen (a suspend) THEN next() and batch() throw FLURRY_E_LEASE_EXPIRED before issuing one ID', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 5 }, 800, 0, START + 800);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({ layout: 'twitter', lease, clock, onEvent: (e) => events.push(e) });
  try {
    const a = gen.next();
    clock.stepWall(60_000); // suspended for a minute: CLOCK_MONOTONIC did not count it
    assert.equal(clock.monotonic(), 0, 'monotonic time is frozen, its deadline is far away');
    const issued = gen.stats.issued;
    assert.throws(
      () => gen.next(),
      (e: unknown) =>
        expiredOn('wall')(e) &&
        /suspended/.test((e as Error).message) &&
        (e as FlurryError).details.overByMs === 60_000 - 800,
    );
    assert.throws(() => gen.nextString(), expiredOn('wall'));
    assert.throws(() => gen.batch(5), expiredOn('wall'));
    assert.throws(() => gen.batchStrings(5), expiredOn('wall'));
    const buf = new BigUint64Array(3);
    assert.throws(() => gen.fill(buf), expiredOn('wall'));
    assert.deepEqual([...buf], [0n, 0n, 0n], 'nothing written');
    assert.equal(gen.stats.issued, issued, 'not one ID issued');
    assert.deepEqual(events.at(-1), { type: 'fenced', code: ErrorCode.LEASE_EXPIRED });
    lease.wallDeadline = clock.now() + 800; // a renewal after the resume
    assert.ok(gen.next() > a);
    lease.wallDeadline = Number.NEGATIVE_INFINITY; // lost
    assert.throws(() => gen.next(), lostOrReleased);
  } finally {
    gen.close();
  }
});

test('GIVEN a suspend in the middle of a long fill (the wall clock jumps at a new tick) THEN the fill stops with FLURRY_E_LEASE_EXPIRED', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 6 }, 1e12, 0, START + 800);
  const gen = new Generator({ layout: 'twitter', lease, clock, onExhausted: 'wait' });
  let reads = 0;
  clock.onRead = (c) => {
    if (++reads === 3) c.stepWall(10_000);
  };
  try {
    assert.throws(() => gen.fill(new BigUint64Array(4096 * 10)), expiredOn('wall'));
    assert.ok(gen.lastIssuedUnixMs < START + 800, 'nothing issued at or after the wall deadline');
  } finally {
    clock.onRead = undefined;
    gen.close();
  }
});

test('GIVEN a leased generator WHEN the wall clock steps back by an hour THEN the monotonic deadline still fences on time', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 7 }, 800, 0, START + 800);
  const gen = new Generator({ layout: 'twitter', lease, clock, onClockBackwards: 'tolerate' });
  try {
    const a = gen.next();
    clock.stepWall(-3_600_000);
    clock.advance(799);
    assert.ok(gen.next() > a, 'still inside both deadlines');
    clock.advance(1);
    assert.throws(() => gen.next(), expiredOn('monotonic'));
    assert.throws(() => gen.batch(2), expiredOn('monotonic'));
  } finally {
    gen.close();
  }
});

test('GIVEN a hand-written lease without wallDeadline THEN only the monotonic deadline fences (wall jumps are ignored)', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 8 }, 800);
  const gen = new Generator({ layout: 'twitter', lease, clock });
  try {
    gen.next();
    clock.stepWall(60_000);
    assert.ok(gen.next());
    clock.advanceMonotonic(800);
    assert.throws(() => gen.next(), expiredOn('monotonic'));
  } finally {
    gen.close();
  }
});

test('GIVEN a lease whose deadline passes during a long fill THEN the fill stops with FLURRY_E_LEASE_EXPIRED', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 2 }, 3);
  const gen = new Generator({ layout: 'twitter', lease, clock });
  try {
    assert.throws(() => gen.fill(new BigUint64Array(4096 * 10)), code(ErrorCode.LEASE_EXPIRED));
  } finally {
    gen.close();
  }
});

test('GIVEN a lease high-water mark ahead of the clock THEN the first ID is after notBeforeMs (waiting), and too far ahead throws FLURRY_E_CLOCK_BEHIND_HIGH_WATER', () => {
  const clock = new ManualClock(START, 0);
  const lease = makeLease({ datacenter: 5, worker: 3 }, 1e12, START + 3);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({ layout: 'twitter', lease, clock, onEvent: (e) => events.push(e) });
  try {
    assert.equal(gen.lastIssuedUnixMs, START + 3, 'before any ID: the inherited mark');
    const id = gen.next();
    const d = gen.layout.decode(id);
    assert.equal(d.unixMs, START + 4);
    assert.equal(events[0].type, 'high-water-wait');
    assert.equal(lease.highWater!(), START + 4, 'the lease reads the generator high-water mark');
  } finally {
    gen.close();
  }
  const far = makeLease({ datacenter: 5, worker: 4 }, 1e12, START + 5000);
  const g2 = new Generator({ layout: 'twitter', lease: far, clock });
  try {
    assert.throws(
      () => g2.next(),
      (e: unknown) =>
        e instanceof FlurryError &&
        e.code === ErrorCode.CLOCK_BEHIND_HIGH_WATER &&
        /\d+ ms behind/.test(e.message) &&
        Number(e.details.behindMs) > 4000,
    );
  } finally {
    g2.close();
  }
});

test('GIVEN a node that differs from the lease node, or a clock that returns NaN THEN coded errors and no ID', () => {
  const lease = makeLease({ datacenter: 6, worker: 1 }, 1e12);
  assert.throws(
    () => new Generator({ layout: 'twitter', lease, node: { datacenter: 6, worker: 2 } }),
    code(ErrorCode.INVALID_OPTION),
  );
  const same = new Generator({
    layout: 'twitter',
    lease,
    node: { datacenter: 6, worker: 1 },
    clock: new ManualClock(START),
  });
  same.close();
  const broken: Clock = { now: () => Number.NaN, monotonic: () => 0, sleep: () => undefined };
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 6, worker: 3 }, clock: broken });
  try {
    assert.throws(() => gen.next(), code(ErrorCode.INVALID_OPTION));
    assert.throws(() => gen.fill(new BigUint64Array(2)), code(ErrorCode.INVALID_OPTION));
  } finally {
    gen.close();
  }
});

test('GIVEN a fill() that the wall deadline interrupts partway THEN stats.issued counts the IDs it wrote (they are used up)', () => {
  const clock = new ManualClock(START, 1e6);
  const layout = Layout.parse('timestamp:41,worker:1,sequence:2'); // 4 IDs per ms, so the fill crosses ticks
  const lease = makeLease({ worker: 1 }, Infinity, 0, START + 2); // worker 1: no ID is 0, so unwritten slots show
  const gen = new Generator({ layout, lease, clock });
  try {
    const buf = new BigUint64Array(20);
    assert.throws(() => gen.fill(buf), expiredOn('wall'));
    const written = buf.filter((x) => x !== 0n).length;
    assert.ok(written > 0 && written < 20, `wrote ${written}`);
    assert.equal(gen.stats.issued, written);
  } finally {
    gen.close();
  }
});

test('GIVEN a lease re-acquired as another node, then as the same one THEN the same generator refuses while lost, then follows it: the new node at once, a new tick above its last ID and the new floor, exact counts; a closed one never follows', () => {
  const clock = new ManualClock(START, 0);
  let claim = makeLease({ datacenter: 1, worker: 1 }, 1000);
  const lease = Object.assign(makeLease({ datacenter: 1, worker: 1 }, 1000), { forGenerator: () => claim });
  const events: GeneratorEvent[] = [];
  const gen = new Generator({ layout: 'twitter', lease, clock, onEvent: (e) => events.push(e) });
  const twitter = Layout.from('twitter');
  try {
    const a = gen.next();
    claim.deadline = Number.NEGATIVE_INFINITY; // lost
    assert.throws(() => gen.next(), lostOrReleased);
    assert.equal(gen.stats.issued, 1);
    claim = makeLease({ datacenter: 1, worker: 2 }, 5000, START + 50); // re-acquired as worker 2, its floor ahead
    assert.deepEqual(gen.node, { datacenter: 1, worker: 2 });
    const b = gen.next();
    assert.deepEqual(twitter.decode(b).fields, { datacenter: 1, worker: 2 });
    assert.ok(b > a && twitter.decode(b).unixMs > START + 50);
    assert.ok(events.some((e) => e.type === 'high-water-wait'));
    const last = twitter.decode(gen.batch(3)[2]).unixMs;
    claim.deadline = Number.NEGATIVE_INFINITY;
    claim = makeLease({ datacenter: 1, worker: 2 }, 9000); // the same node again, no floor
    clock.stepWall(last - clock.now()); // the wall clock back in the tick of the last ID
    const c = gen.next();
    assert.ok(twitter.decode(c).unixMs > last, 'a new tick');
    assert.equal(gen.stats.issued, 6);
    const again = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, clock });
    again.close(); // worker 1 was handed back when the generator followed to worker 2
    gen.close();
    claim.deadline = Number.NEGATIVE_INFINITY;
    claim = makeLease({ datacenter: 1, worker: 3 }, 9000);
    assert.throws(() => gen.next(), lostOrReleased, 'a closed generator does not follow');
  } finally {
    gen.close();
  }
});
