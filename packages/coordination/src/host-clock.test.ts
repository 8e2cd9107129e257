import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, systemClock, sleepSync, type Clock } from '@flurry/core';
import { bootId, hostMonotonicMs, timeSourceFor } from './host-clock.js';

describe('host clock: the time source lease files expire by', () => {
  test("GIVEN the system clock or a real-time clock THEN expiry runs on the host's monotonic clock and boot ID", () => {
    const ahead: Clock = { now: () => Date.now() + 300, monotonic: () => performance.now(), sleep: sleepSync };
    for (const clock of [systemClock, ahead]) {
      const time = timeSourceFor(clock);
      assert.equal(time.boot, bootId());
      const before = hostMonotonicMs();
      const t = time.monotonic();
      assert.ok(t >= before && t <= hostMonotonicMs(), `${t} read between ${before} and now`);
    }
  });

  test('GIVEN a ManualClock THEN expiry runs on its own monotonic time under an epoch of its own, stable per clock', () => {
    const a = new ManualClock(Date.UTC(2025, 0, 1), 5000);
    const b = new ManualClock(Date.UTC(2025, 0, 1), 5000);
    const ta = timeSourceFor(a);
    assert.equal(ta.monotonic(), 5000);
    a.advance(250);
    assert.equal(ta.monotonic(), 5250);
    assert.equal(timeSourceFor(a).boot, ta.boot, 'one clock, one epoch');
    assert.notEqual(timeSourceFor(b).boot, ta.boot, 'two clocks, two epochs');
    assert.notEqual(ta.boot, bootId());
    assert.match(ta.boot, /^manual-[0-9a-f]{12}$/);
  });
});
