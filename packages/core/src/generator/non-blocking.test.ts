// A clock that cannot block (Clock.nonBlocking: the system clock on a browser's main thread and in workerd,
// docs/runtimes.md): a generator never sleeps and never spins on it. Where it would wait for the next tick it
// borrows within maxBorrowMs, whatever onExhausted says, then throws the coded error at once; a wait for a clock
// that stepped back throws at once too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, type Clock } from '../clock.js';
import { FlurryError } from '../errors.js';
import { UuidGenerator } from '../uuid/generator.js';
import { Generator } from './generator.js';

/** A hand-driven clock that cannot block: any sleep fails the test. */
function nonBlocking(manual: ManualClock): Clock {
  return {
    now: () => manual.now(),
    monotonic: () => manual.monotonic(),
    sleep: (ms) => assert.fail(`slept ${ms} ms on a clock that cannot block`),
    nonBlocking: true,
  };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof FlurryError ? e.code : String(e);
  }
  return '';
}

test('GIVEN a clock that cannot block and onExhausted wait THEN the generator borrows within maxBorrowMs, never sleeps, then throws FLURRY_E_SEQUENCE_EXHAUSTED', () => {
  for (const onExhausted of ['wait', 'borrow'] as const) {
    const manual = new ManualClock(Date.UTC(2026, 0, 1));
    const gen = new Generator({
      layout: 'twitter',
      node: { datacenter: 2, worker: 1 + (onExhausted === 'wait' ? 0 : 1) },
      clock: nonBlocking(manual),
      onExhausted,
      maxBorrowMs: 3,
    });
    try {
      const ids = gen.batch(4 * 4096);
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
      let err: unknown;
      try {
        gen.next();
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof FlurryError && err.code === 'FLURRY_E_SEQUENCE_EXHAUSTED', String(err));
      assert.match(err.message, /3 ms \(maxBorrowMs\).*cannot block/);
      // Once the clock moves (after an await in Workers), IDs continue after the borrowed ticks.
      manual.advance(4);
      assert.ok(gen.next() > ids[ids.length - 1]);
    } finally {
      gen.close();
    }
  }
});

test('GIVEN a clock that cannot block and steps back THEN a generator whose policy would wait throws FLURRY_E_CLOCK_BACKWARDS at once', () => {
  const manual = new ManualClock(Date.UTC(2026, 0, 1));
  const gen = new Generator({
    layout: 'twitter',
    node: { datacenter: 2, worker: 9 },
    clock: nonBlocking(manual),
    onClockBackwards: 'wait',
  });
  try {
    gen.next();
    manual.stepWall(-3); // within maxBackwardsWaitMs (5): a blocking clock would wait it out
    assert.equal(
      codeOf(() => gen.next()),
      'FLURRY_E_CLOCK_BACKWARDS',
    );
  } finally {
    gen.close();
  }
});

test('GIVEN a UUID generator on a clock that cannot block THEN it borrows within maxBorrowMs, then throws the coded error without sleeping', () => {
  const manual = new ManualClock(Date.UTC(2026, 0, 1));
  const gen = new UuidGenerator({ node: 5, sequenceBits: 12, clock: nonBlocking(manual), maxBorrowMs: 2 });
  try {
    const seen = new Set<string>();
    let code = '';
    for (let i = 0; i < 1_000_000 && code === ''; i++) {
      code = codeOf(() => seen.add(gen.next()));
    }
    assert.equal(code, 'FLURRY_E_SEQUENCE_EXHAUSTED');
    assert.equal(seen.size, 3 * 4096, 'three ticks of 4,096 (the current one and two borrowed), then the error');
  } finally {
    gen.close();
  }
});
