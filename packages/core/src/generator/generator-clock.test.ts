// The generator when the wall clock steps back or jumps forward: the throw, wait and tolerate policies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../clock.js';
import { FlurryError, ErrorCode } from '../errors.js';
import { Generator } from './generator.js';
import { type GeneratorEvent } from './options.js';
import { START, code } from './test-kit.js';

test('GIVEN onClockBackwards=throw and a 1 ms step back THEN FLURRY_E_CLOCK_BACKWARDS names 1 ms, and IDs resume above the last once the clock catches up', () => {
  const clock = new ManualClock(START);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({
    layout: 'twitter',
    node: { datacenter: 2, worker: 2 },
    clock,
    onClockBackwards: 'throw',
    onEvent: (e) => events.push(e),
  });
  try {
    const a = gen.next();
    clock.stepWall(-1);
    assert.throws(
      () => gen.next(),
      (e: unknown) =>
        e instanceof FlurryError &&
        e.code === ErrorCode.CLOCK_BACKWARDS &&
        e.details.byMs === 1 &&
        /went back by 1 ms/.test(e.message),
    );
    assert.deepEqual(events, [{ type: 'clock-backwards', byMs: 1, action: 'threw' }]);
    clock.stepWall(1);
    assert.ok(gen.next() > a);
  } finally {
    gen.close();
  }
});

test('GIVEN onClockBackwards=wait THEN a 3 ms step back is waited out and a 10 ms one (beyond 5 ms) throws naming 10 ms', () => {
  const clock = new ManualClock(START);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({
    layout: 'twitter',
    node: { datacenter: 2, worker: 3 },
    clock,
    onClockBackwards: 'wait',
    onEvent: (e) => events.push(e),
  });
  try {
    const a = gen.next();
    clock.stepWall(-3);
    const b = gen.next();
    assert.ok(b > a);
    assert.ok(clock.now() >= START, 'the generator slept until the wall clock caught up');
    assert.deepEqual(events, [{ type: 'clock-backwards', byMs: 3, action: 'waited' }]);
    clock.stepWall(-10 - (clock.now() - START));
    assert.throws(
      () => gen.next(),
      (e: unknown) =>
        e instanceof FlurryError && e.code === ErrorCode.CLOCK_BACKWARDS && /went back by 10 ms/.test(e.message),
    );
  } finally {
    gen.close();
  }
});

test('GIVEN onClockBackwards=tolerate (default) and a 10 s step back THEN IDs continue the last tick, borrow within maxBorrowMs, then throw naming ~10000 ms', () => {
  const clock = new ManualClock(START);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({
    layout: 'twitter',
    node: { datacenter: 2, worker: 4 },
    clock,
    maxBorrowMs: 2,
    onEvent: (e) => events.push(e),
  });
  try {
    const first = gen.next();
    clock.stepWall(-10_000);
    const l = gen.layout;
    const second = gen.next();
    assert.ok(second > first);
    assert.equal(l.decode(second).unixMs, START, 'continues the last tick');
    assert.equal(l.decode(second).sequence, 1);
    const rest = gen.batch(4094 + 4096 * 2);
    assert.equal(l.decode(rest[rest.length - 1]).unixMs, START + 2);
    assert.throws(
      () => gen.next(),
      (e: unknown) =>
        e instanceof FlurryError && e.code === ErrorCode.CLOCK_BACKWARDS && Number(e.details.byMs) >= 10_000,
    );
    assert.equal(gen.stats.clockBackwards, 1);
    assert.equal(events.filter((e) => e.type === 'clock-backwards' && e.action === 'tolerated').length, 1);
    clock.stepWall(10_003);
    assert.ok(gen.next() > rest[rest.length - 1]);
  } finally {
    gen.close();
  }
});

test('GIVEN the wall clock jumps forward THEN IDs follow it, and stepping back to the old time is a clock step back', () => {
  const clock = new ManualClock(START);
  const gen = new Generator({
    layout: 'twitter',
    node: { datacenter: 2, worker: 5 },
    clock,
    onClockBackwards: 'throw',
  });
  try {
    gen.next();
    clock.stepWall(60_000);
    const far = gen.next();
    assert.equal(gen.layout.decode(far).unixMs, START + 60_000);
    clock.stepWall(-60_000);
    assert.throws(() => gen.next(), code(ErrorCode.CLOCK_BACKWARDS));
  } finally {
    gen.close();
  }
});

test('GIVEN the real clock frozen (Date.now and process.hrtime stop) THEN onExhausted=wait gives FLURRY_E_SEQUENCE_EXHAUSTED after one tick instead of spinning forever', () => {
  const realDate = Date.now;
  const realHrtime = process.hrtime;
  const elapsed = (): bigint => realHrtime.bigint(); // the test's own stopwatch keeps running
  const frozenAt = Date.now();
  const frozenHr = realHrtime();
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 6, worker: 4 } });
  Date.now = () => frozenAt;
  process.hrtime = Object.assign((): [number, number] => [frozenHr[0], frozenHr[1]], { bigint: elapsed });
  try {
    const ids = gen.batch(4096);
    assert.equal(new Set(ids).size, 4096);
    const t0 = elapsed();
    assert.throws(() => gen.next(), code(ErrorCode.SEQUENCE_EXHAUSTED));
    assert.ok(elapsed() - t0 < 10_000_000_000n, 'gave up within 10 s');
  } finally {
    Date.now = realDate;
    process.hrtime = realHrtime;
    gen.close();
  }
});
