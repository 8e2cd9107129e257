import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Generator, ManualClock, sleepSync, systemClock, type Clock, type GeneratorEvent } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { cleanFloorDriver } from './drivers/test-kit.js';
import { claimFloor } from './floor.js';
import { freshDir, layouts, MARGIN, rejectsCode, setup, TTL } from './lease-test-kit.js';
import type { ManagedLease } from './lease-types.js';
import { LeaseRegistry } from './registry.js';

const { oneSlot, realClockLayout, reacquireLayout, tenMsLayout } = layouts;

describe('lease manager: high-water floor', () => {
  test('GIVEN claimFloor THEN a clean release gives the mark, an expiry the mark + the unreported window, no history 0', () => {
    assert.equal(claimFloor({ highWaterMs: 5000, releasedCleanly: true }, 1200), 5000);
    assert.equal(claimFloor({ highWaterMs: 5000, releasedCleanly: false }, 1200), 6200);
    assert.equal(claimFloor({ highWaterMs: 0, releasedCleanly: false }, 1200), 0);
  });

  test("GIVEN a clean release THEN the next holder's notBeforeMs is exactly the highest issued timestamp", async () => {
    const { clock, open } = setup();
    const regA = open();
    const a = await regA.acquire(oneSlot);
    const issued = clock.now() + 3; // e.g. a borrowed tick
    a.attach(() => issued);
    clock.advance(10);
    await a.release();
    assert.equal(a.state, 'released');
    assert.equal(a.valid(), false);
    await a.release(); // idempotent
    const b = await open().acquire(oneSlot);
    assert.equal(b.notBeforeMs, issued);
  });

  test("GIVEN a holder that died after a renewal THEN the next holder's floor is its last report + ttl + margin", async () => {
    const { clock, open } = setup();
    const a = await open().acquire(oneSlot);
    a.attach(() => 0);
    clock.advance(100);
    const reportedAt = clock.now();
    await a.renewNow(); // reports max(issued, now) = now
    clock.advance(TTL + 1); // A never renews again: its record expires
    const b = await open().acquire(oneSlot);
    assert.equal(b.notBeforeMs, reportedAt + TTL + MARGIN);
  });

  test('GIVEN a holder that died before its first periodic renewal THEN its claim-time clock was recorded AND bounds the next floor', async () => {
    const { clock, open } = setup();
    const claimedAt = clock.now();
    await open().acquire(oneSlot);
    clock.advance(TTL + 1);
    const b = await open().acquire(oneSlot);
    assert.equal(b.notBeforeMs, claimedAt + TTL + MARGIN);
  });

  test('GIVEN a chain of crashed holders whose clocks were behind THEN the floor never goes down', async () => {
    const { clock, open } = setup();
    const a = await open().acquire(oneSlot);
    const floorA = clock.now() + TTL + MARGIN;
    clock.advance(TTL + 1);
    clock.stepWall(-60_000); // B's clock is a minute behind
    // Within the default 5 s bound B refuses (and gives the slot back with the floor intact)…
    const refused = await rejectsCode(open().acquire(oneSlot), 'FLURRY_E_CLOCK_BEHIND_HIGH_WATER');
    assert.ok(Number(refused.details.behindMs) > 60_000);
    // …a patient B waits for its clock to pass A's floor before it gets the lease.
    const b = await open({ highWaterWaitMs: 120_000 }).acquire(oneSlot);
    assert.equal(b.notBeforeMs, floorA);
    assert.ok(clock.now() > floorA, 'acquire resolved only after the clock passed the floor');
    await b.renewNow();
    clock.advance(TTL + 1);
    const c = await open().acquire(oneSlot);
    assert.ok(c.notBeforeMs >= floorA + TTL + MARGIN, `floor ${c.notBeforeMs} carries A's ${floorA}`);
    void a;
  });
});

describe('lease manager: waiting for the floor (asynchronously)', () => {
  test("GIVEN a previous holder's mark 300 ms ahead of our wall clock THEN acquire resolves after ≈300 ms AND the event loop keeps running during the wait AND the generator never waits", async (t) => {
    const dir = path.join(freshDir());
    const ahead: Clock = { now: () => Date.now() + 300, monotonic: () => performance.now(), sleep: sleepSync };
    const opts = { cluster: 'c', ttlMs: 10_000, autoRenew: false, stateDir: path.join(dir, 'state') };
    const regA = new LeaseRegistry(createFileDriver(dir, { clock: ahead }), { ...opts, clock: ahead });
    const a = await regA.acquire(realClockLayout);
    a.attach(() => ahead.now()); // A issued up to its (fast) wall clock
    await regA.close(); // clean release: the mark is A's clock, ≈300 ms ahead of ours
    const reg = new LeaseRegistry(createFileDriver(dir, { clock: systemClock }), { ...opts, clock: systemClock });
    const ourNow = Date.now();
    let ticks = 0;
    const interval = setInterval(() => ticks++, 10);
    const t0 = performance.now();
    let lease: ManagedLease;
    try {
      lease = await reg.acquire(realClockLayout);
    } finally {
      clearInterval(interval);
    }
    const tookMs = performance.now() - t0;
    t.diagnostic(
      `acquire took ${Math.round(tookMs)} ms for a floor ${lease.notBeforeMs - ourNow} ms ahead; a 10 ms interval ticked ${ticks} times meanwhile`,
    );
    assert.ok(
      lease.notBeforeMs - ourNow > 200,
      `the floor (A's mark) was ${lease.notBeforeMs - ourNow} ms ahead of our clock`,
    );
    assert.ok(Date.now() > lease.notBeforeMs, 'resolved only after the clock passed the floor');
    assert.ok(tookMs >= 200 && tookMs < 2000, `acquire took ${Math.round(tookMs)} ms`);
    assert.ok(ticks >= 5, `a 10 ms interval ticked ${ticks} times during the wait (the loop was not blocked)`);
    const seen: GeneratorEvent[] = [];
    const gen = new Generator({ layout: realClockLayout, lease: lease.forGenerator(), onEvent: (e) => seen.push(e) });
    const t1 = performance.now();
    assert.ok(realClockLayout.decode(gen.next()).unixMs > lease.notBeforeMs);
    assert.ok(performance.now() - t1 < 50, 'the first next() did not sleep');
    assert.ok(!seen.some((e) => e.type === 'high-water-wait'));
    gen.close();
    await reg.close();
  });

  test('GIVEN a mark further ahead than highWaterWaitMs THEN acquire fails at once with FLURRY_E_CLOCK_BEHIND_HIGH_WATER saying how far behind the clock is AND the slot stays usable', async () => {
    const { clock, open } = setup();
    const a = await open().acquire(oneSlot);
    const mark = clock.now() + 10_000;
    a.attach(() => mark);
    await a.release();
    const t0 = clock.monotonic();
    const e = await rejectsCode(open({ highWaterWaitMs: 1000 }).acquire(oneSlot), 'FLURRY_E_CLOCK_BEHIND_HIGH_WATER');
    assert.equal(e.details.behindMs, 10_001);
    assert.match(e.message, /is 10001 ms behind the high-water mark of slot 0 of c\/datacenter-0/);
    assert.match(e.message, /more than the 1000 ms allowed \(highWaterWaitMs\)/);
    assert.equal(clock.monotonic(), t0, 'refused without waiting');
    const b = await open({ highWaterWaitMs: 20_000 }).acquire(oneSlot);
    assert.equal(b.slot, 0, 'the refused claim was given back');
    assert.equal(b.notBeforeMs, mark);
    assert.ok(clock.now() > mark);
    assert.ok(b.valid(), 'the claim was renewed while waiting 10 s with a 1 s TTL');
    await b.release();
  });

  test('GIVEN a 10 ms-unit layout and a floor 101 ms ahead THEN acquire waits until the first tick above the floor starts, so a generator allowed no wait of its own issues at once', async () => {
    const clock = new ManualClock(Date.UTC(2025, 5, 1), 1_000_000);
    const floor = clock.now() + 101;
    const driver = cleanFloorDriver(floor);
    const reg = new LeaseRegistry(driver, {
      cluster: 'c',
      ttlMs: TTL,
      marginMs: 5,
      clock,
      autoRenew: false,
      stateDir: path.join(freshDir(), 'state'),
    });
    const lease = await reg.acquire(tenMsLayout);
    const tickStart = Date.UTC(2025, 5, 1) + 110; // the first 10 ms tick above the floor (+101 ms)
    assert.equal(lease.notBeforeMs, floor);
    assert.equal(clock.now(), tickStart, 'resolved as that tick started, not 1 ms past the floor');
    const seen: GeneratorEvent[] = [];
    const gen = new Generator({
      layout: tenMsLayout,
      lease: lease.forGenerator(),
      clock,
      highWaterWaitMs: 0,
      onEvent: (e) => seen.push(e),
    });
    assert.ok(tenMsLayout.decode(gen.next()).unixMs > floor);
    assert.ok(!seen.some((e) => e.type === 'high-water-wait'));
    gen.close();
    await reg.close();
  });

  test('GIVEN a lost lease whose floor is ahead of the clock (borrowed ticks) WHEN re-acquired THEN it is held only once the clock passed the floor, so the rebuilt generator never waits', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(reacquireLayout);
    lease.attach(() => clock.now() + 150); // issued 150 ms ahead of the wall clock
    clock.advance(TTL); // paused past the deadline
    const t = clock.now();
    assert.equal(await lease.renewNow(), true);
    assert.equal(lease.state, 'held');
    assert.equal(lease.notBeforeMs, t + 150, 'the floor covers the borrowed ticks');
    assert.ok(clock.now() > lease.notBeforeMs, 'held only after the clock passed the floor');
    const seen: GeneratorEvent[] = [];
    const gen = new Generator({
      layout: reacquireLayout,
      lease: lease.forGenerator(),
      clock,
      onEvent: (e) => seen.push(e),
    });
    gen.next();
    assert.ok(!seen.some((e) => e.type === 'high-water-wait'));
    gen.close();
    await reg.close();
  });
});
