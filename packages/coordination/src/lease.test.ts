import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { FlurryError, Generator, systemClock } from '@flurry/core';
import type { RegistryDriver } from './driver.js';
import { createFileDriver } from './drivers/file.js';
import { delay, events, freshDir, layouts, MARGIN, setup, slowDriver, TTL } from './lease-test-kit.js';
import { LeaseRegistry } from './registry.js';

const { twoSlots, oneSlot, suspendLayout, stepBackLayout } = layouts;

describe('lease manager: fencing deadline', () => {
  test('GIVEN a fresh acquire THEN the deadline is claim start + ttl − margin on the monotonic clock', async () => {
    const { clock, open } = setup();
    const reg = open();
    const t0 = clock.monotonic();
    const lease = await reg.acquire(twoSlots);
    assert.equal(lease.deadline, t0 + TTL - MARGIN);
    assert.equal(lease.msUntilDeadline(), TTL - MARGIN);
    assert.deepEqual(lease.node, { worker: 0 });
    assert.equal(lease.namespace, 'c');
    clock.advance(TTL - MARGIN - 1);
    assert.ok(lease.valid());
    clock.advance(1);
    assert.ok(!lease.valid(), 'fenced exactly at the deadline');
    assert.equal(lease.msUntilDeadline(), 0);
    await reg.close();
  });

  test("GIVEN a successful renewal THEN the deadline moves to that renewal's start + ttl − margin", async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(twoSlots);
    const seen = events(lease);
    clock.advance(300);
    const start = clock.monotonic();
    assert.equal(await lease.renewNow(), true);
    assert.equal(lease.deadline, start + TTL - MARGIN);
    assert.equal(lease.stats.renewals, 1);
    assert.deepEqual(seen, ['renewed']);
    await reg.close();
  });

  test('GIVEN a paused holder (monotonic time jumps past the deadline) THEN it is invalid before any renewal runs', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(twoSlots);
    clock.advanceMonotonic(5000);
    assert.equal(lease.valid(), false);
    await reg.close();
  });

  test('GIVEN the registry says the lease is gone WHEN renewing THEN the lease is fenced at once, before its deadline', async () => {
    const { dir, open } = setup();
    const reg = open();
    const lease = await reg.acquire(oneSlot);
    const seen = events(lease);
    const slotDir = path.join(dir, 'c', 'datacenter-0', 'slots', '0');
    for (const f of readdirSync(slotDir)) if (f.endsWith('.lease')) unlinkSync(path.join(slotDir, f));
    await lease.renewNow();
    assert.equal(lease.valid(), false);
    assert.equal(lease.deadline, -Infinity);
    assert.deepEqual(seen.slice(0, 2), ['renew-failed', 'lost']);
    assert.equal(lease.stats.lost, 1);
    await reg.close();
  });

  test('GIVEN renewals failing (engine unavailable) THEN failures are counted, the lease stays valid until its deadline, then is lost', async () => {
    const { clock, dir } = setup();
    const driver = createFileDriver(dir, { clock });
    const reg = new LeaseRegistry(driver, {
      cluster: 'c',
      ttlMs: TTL,
      marginMs: MARGIN,
      clock,
      autoRenew: false,
      stateDir: path.join(dir, 'state'),
    });
    const lease = await reg.acquire(twoSlots);
    const seen = events(lease);
    await driver.close(); // every call now fails
    clock.advance(400);
    assert.equal(await lease.renewNow(), false);
    assert.equal(lease.stats.renewFailures, 1);
    assert.ok(lease.valid(), 'still inside the deadline');
    clock.advance(400);
    assert.equal(lease.valid(), false);
    await lease.renewNow();
    assert.equal(lease.state, 'lost');
    assert.deepEqual(
      seen.filter((e) => e === 'lost'),
      ['lost'],
    );
    await lease.release();
  });
});

/** A driver that runs `before()` (e.g. a suspend) while a renewal is in flight. */
function slowRenewals(inner: RegistryDriver, before: () => Promise<void> | void): RegistryDriver {
  return {
    kind: inner.kind,
    url: inner.url,
    claim: (req) => inner.claim(req),
    renew: async (claim, o) => {
      await before();
      return inner.renew(claim, o);
    },
    release: (claim, o) => inner.release(claim, o),
    holders: (ns) => inner.holders(ns),
    close: () => inner.close(),
  };
}

const fencedOn = (clock: 'wall' | 'monotonic') => (e: unknown) =>
  e instanceof FlurryError && e.code === 'FLURRY_E_LEASE_EXPIRED' && e.details.clock === clock;

describe('lease manager: wall-clock deadline (system suspend)', () => {
  test('GIVEN a fresh acquire or a renewal THEN wallDeadline is its wall-clock start + ttl − margin, also on the generator view', async () => {
    const { clock, open } = setup();
    const reg = open();
    const w0 = clock.now();
    const lease = await reg.acquire(twoSlots);
    assert.equal(lease.wallDeadline, w0 + TTL - MARGIN);
    const view = lease.forGenerator();
    assert.equal(view.wallDeadline, lease.wallDeadline);
    clock.advance(300);
    const w1 = clock.now();
    assert.equal(await lease.renewNow(), true);
    assert.equal(lease.wallDeadline, w1 + TTL - MARGIN);
    assert.equal(view.wallDeadline, w1 + TTL - MARGIN, 'the view follows renewals');
    await reg.close();
    assert.equal(lease.wallDeadline, -Infinity);
    assert.equal(view.wallDeadline, -Infinity);
  });

  test('GIVEN a held lease WHEN wall time jumps past the TTL while monotonic time stays frozen (a suspend) THEN next() and batch() throw FLURRY_E_LEASE_EXPIRED before issuing one ID AND the lease manager reports it lost', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(suspendLayout);
    const seen = events(lease);
    const lostErrors: FlurryError[] = [];
    lease.on('lost', (e: FlurryError) => lostErrors.push(e));
    const gen = new Generator({ layout: suspendLayout, lease: lease.forGenerator(), clock });
    try {
      const before = gen.next();
      clock.stepWall(5 * TTL); // the machine slept: the registry's TTL ran out, CLOCK_MONOTONIC did not move
      assert.equal(lease.valid(), false);
      assert.equal(lease.msUntilDeadline(), 0);
      const issued = gen.stats.issued;
      assert.throws(() => gen.next(), fencedOn('wall'));
      assert.throws(() => gen.batch(10), fencedOn('wall'));
      assert.equal(gen.stats.issued, issued, 'not one ID after the resume');
      await lease.renewNow();
      assert.equal(seen[0], 'lost', 'reported lost before anything else');
      assert.match(lostErrors[0].message, /wall-clock fencing deadline.*suspended/);
      assert.equal(lease.stats.lost, 1);
      assert.throws(
        () => gen.next(),
        (e: FlurryError) => e.code === 'FLURRY_E_LEASE_EXPIRED',
        'a generator of the old claim never issues again',
      );
      if (lease.state === 'held') {
        // Re-acquired (the slot was still free): a fresh generator continues above.
        gen.close();
        const next = new Generator({ layout: suspendLayout, lease: lease.forGenerator(), clock });
        assert.ok(next.next() > before);
        next.close();
      }
    } finally {
      gen.close();
      await reg.close();
    }
  });

  test('GIVEN autoRenew WHEN the machine resumes from a suspend THEN the deadline timer reports lost promptly, long before the monotonic deadline', async (t) => {
    const { clock, open } = setup();
    const reg = open({ ttlMs: 60_000, marginMs: 1000, autoRenew: true }); // first periodic renewal in 20 s
    const lease = await reg.acquire(twoSlots);
    try {
      const lost = new Promise<FlurryError>((resolve) => lease.once('lost', resolve));
      clock.stepWall(120_000);
      const t0 = performance.now();
      const err = await Promise.race([
        lost,
        new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no lost event within 3 s')), 3000)),
      ]);
      const tookMs = performance.now() - t0;
      t.diagnostic(`lost ${Math.round(tookMs)} ms after the resume`);
      assert.ok(tookMs < 1000, `lost after ${Math.round(tookMs)} ms (the poll is 250 ms)`);
      assert.equal(err.code, 'FLURRY_E_LEASE_LOST');
      assert.ok(clock.monotonic() < 1_000_000 + 59_000, 'the monotonic deadline had not come');
    } finally {
      await reg.close();
    }
  });

  test('GIVEN a renewal in flight across a suspend THEN it does not extend either deadline AND the lease is then lost', async () => {
    const { clock, dir } = setup();
    let suspend = false;
    const driver = slowRenewals(createFileDriver(dir, { clock }), () => {
      if (suspend) clock.stepWall(3 * TTL); // sent before the suspend, answered after it
    });
    const reg = new LeaseRegistry(driver, {
      cluster: 'c',
      ttlMs: TTL,
      marginMs: MARGIN,
      clock,
      autoRenew: false,
      stateDir: path.join(dir, 'state'),
    });
    const lease = await reg.acquire(twoSlots);
    const seen = events(lease);
    const failures: FlurryError[] = [];
    lease.on('renew-failed', (e: FlurryError) => failures.push(e));
    const { deadline, wallDeadline } = lease;
    clock.advance(100);
    suspend = true;
    assert.equal(await lease.renewNow(), false);
    suspend = false;
    assert.equal(lease.deadline, deadline, 'monotonic deadline not extended');
    assert.equal(lease.wallDeadline, wallDeadline, 'wall deadline not extended');
    assert.match(failures[0].message, /wall-clock fencing deadline/);
    assert.equal(lease.valid(), false);
    assert.equal(lease.stats.renewals, 0);
    await lease.renewNow();
    assert.deepEqual(seen.slice(0, 2), ['renew-failed', 'lost']);
    await reg.close();
  });

  test('GIVEN the wall clock steps back by an hour THEN the monotonic deadline still fences on time AND the next renewal re-bases the wall deadline', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(stepBackLayout);
    const gen = new Generator({ layout: stepBackLayout, lease: lease.forGenerator(), clock });
    try {
      gen.next();
      clock.stepWall(-3_600_000);
      clock.advance(TTL - MARGIN - 1);
      assert.ok(lease.valid());
      gen.next();
      clock.advance(1);
      assert.equal(lease.valid(), false, 'fenced exactly at the monotonic deadline');
      assert.throws(() => gen.next(), fencedOn('monotonic'));
    } finally {
      gen.close();
    }
    const reg2 = open();
    const lease2 = await reg2.acquire(stepBackLayout);
    clock.stepWall(-3_600_000);
    clock.advance(10);
    const w = clock.now();
    assert.equal(await lease2.renewNow(), true);
    assert.equal(lease2.wallDeadline, w + TTL - MARGIN, 'not left an hour late');
    await reg.close();
    await reg2.close();
  });

  test('GIVEN an NTP step forward THEN the lease fences early (conservative) AND a renewal lifts the wall deadline again; a step beyond the deadline loses and re-acquires it', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(twoSlots);
    clock.stepWall(500);
    assert.ok(lease.valid());
    assert.equal(lease.msUntilDeadline(), TTL - MARGIN - 500, 'fences 500 ms early');
    assert.equal(await lease.renewNow(), true);
    assert.equal(lease.msUntilDeadline(), TTL - MARGIN);
    const seen = events(lease);
    clock.stepWall(TTL);
    assert.equal(lease.valid(), false);
    assert.equal(await lease.renewNow(), true, 're-acquired at once');
    assert.deepEqual(seen, ['lost', 'reacquired']);
    assert.ok(lease.valid());
    await reg.close();
  });
});

describe('lease manager: loss and re-acquisition', () => {
  test('GIVEN the deadline passed and nobody took the slot THEN renewNow reports lost, then re-acquires the same slot (clean hand-over to itself)', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(twoSlots);
    const seen = events(lease);
    lease.attach(() => clock.now() - 5);
    clock.advance(TTL); // past the deadline, record not yet expired for others
    assert.equal(await lease.renewNow(), true);
    assert.deepEqual(seen, ['lost', 'reacquired']);
    assert.equal(lease.state, 'held');
    assert.equal(lease.epoch, 1);
    assert.deepEqual(lease.node, { worker: 0 });
    assert.ok(lease.valid());
    assert.ok(lease.notBeforeMs >= clock.now() - 5, 'the floor covers what this process issued');
    assert.equal(lease.stats.reacquired, 1);
    await reg.close();
  });

  test('GIVEN another holder took the slot while we were paused THEN our renewal fails AND we re-acquire the other slot with node-changed', async () => {
    const { clock, open } = setup();
    const regA = open();
    const a = await regA.acquire(twoSlots);
    const seen = events(a);
    clock.advance(TTL + 1); // A's record expired
    const regB = open();
    const b = await regB.acquire(twoSlots);
    assert.equal(b.slot, 0, 'B takes the expired slot 0');
    assert.equal(await a.renewNow(), true);
    assert.deepEqual(seen, ['lost', 'node-changed', 'reacquired']);
    assert.deepEqual(a.node, { worker: 1 });
    await regA.close();
    await regB.close();
  });

  test('GIVEN every slot is held after a loss THEN re-acquisition keeps failing (counted) AND succeeds once one is released', async () => {
    const { clock, open } = setup();
    const regA = open();
    const a = await regA.acquire(oneSlot);
    const aIssued = clock.now();
    a.attach(() => aIssued);
    clock.advance(TTL + 1);
    const regB = open();
    const b = await regB.acquire(oneSlot);
    const bIssued = clock.now() + 50; // B issued a little ahead
    b.attach(() => bIssued);
    assert.equal(await a.renewNow(), false);
    assert.equal(a.state, 'lost');
    assert.ok(a.stats.renewFailures >= 1);
    assert.equal(await a.renewNow(), false);
    await b.release();
    assert.equal(await a.renewNow(), true);
    assert.ok(a.notBeforeMs >= bIssued, "the floor is B's final mark");
    await regA.close();
    await regB.close();
  });

  test('GIVEN a generator view from before a re-acquisition THEN it stays fenced even though the lease is valid again', async () => {
    const { clock, open } = setup();
    const reg = open();
    const lease = await reg.acquire(twoSlots);
    const view = lease.forGenerator(123);
    assert.equal(view.notBeforeMs, Math.max(123, lease.notBeforeMs));
    assert.equal(view.deadline, lease.deadline);
    clock.advance(TTL);
    await lease.renewNow();
    assert.ok(lease.valid());
    assert.equal(view.deadline, -Infinity);
    assert.equal(lease.forGenerator().deadline, lease.deadline);
    await reg.close();
  });
});

describe('lease manager: renewal schedule after a floor wait', () => {
  // ttl 1000, margin 200: the deadline is 800 ms after the last renewal's start, and the
  // interval is at its maximum, (1000 − 200) / 2. A floor 790 ms ahead makes the claim wait
  // with a renewal at ≈0 and ≈400 ms; it resolves at ≈790 ms with a last start ≈390 ms old.
  const opts = { cluster: 'c', ttlMs: 1000, marginMs: 200, renewIntervalMs: 400, clock: systemClock } as const;
  const SLACK_MS = 150; // timer jitter; the bug gave ≈770 ms

  test('GIVEN a floor that makes acquire wait with renewals during the wait THEN the first renewal after acquire resolves starts within renewIntervalMs of the last one AND the lease is never lost', async (t) => {
    const { driver, renewStarts, state } = slowDriver(70);
    state.aheadMs = 790;
    const reg = new LeaseRegistry(driver, { ...opts, stateDir: path.join(freshDir(), 'state') });
    try {
      const lease = await reg.acquire(twoSlots);
      const resolvedAt = performance.now();
      const lost: unknown[] = [];
      lease.on('lost', (e) => lost.push(e));
      const during = renewStarts.filter((s) => s <= resolvedAt);
      assert.ok(during.length >= 2, `renewed during the wait (${during.length} renewals)`);
      // Past the deadline of the last renewal during the wait (≈430 ms after resolving).
      await delay(700);
      const next = renewStarts.find((s) => s > resolvedAt);
      assert.ok(next !== undefined, 'renewed after acquire resolved');
      const gap = next - during.at(-1)!;
      t.diagnostic(
        `acquire resolved ${Math.round(resolvedAt - during.at(-1)!)} ms after the last renewal's start; the next started ${Math.round(gap)} ms after it`,
      );
      assert.ok(
        gap <= opts.renewIntervalMs + SLACK_MS,
        `the first renewal after acquire started ${Math.round(gap)} ms after the last one (interval ${opts.renewIntervalMs})`,
      );
      assert.deepEqual(lost, [], 'never lost');
      assert.equal(lease.stats.lost, 0);
      assert.ok(lease.stats.renewals >= 1);
      assert.ok(lease.valid());
    } finally {
      await reg.close();
    }
  });

  test('GIVEN a lost lease whose re-acquisition waits for a floor with renewals during the wait THEN the first renewal after it starts within renewIntervalMs of the last one AND the lease is not lost again', async (t) => {
    const { driver, renewStarts, state } = slowDriver(70);
    const reg = new LeaseRegistry(driver, { ...opts, stateDir: path.join(freshDir(), 'state') });
    try {
      const lease = await reg.acquire(twoSlots);
      const reacquired = new Promise<void>((resolve) => lease.once('reacquired', () => resolve()));
      state.aheadMs = 790;
      state.loseNext = true; // the next periodic renewal finds the lease gone
      await Promise.race([reacquired, delay(3000).then(() => assert.fail('not re-acquired within 3 s'))]);
      const resolvedAt = performance.now();
      let lostAgain = 0;
      lease.on('lost', () => lostAgain++);
      const during = renewStarts.filter((s) => s <= resolvedAt);
      await delay(700);
      const next = renewStarts.find((s) => s > resolvedAt);
      assert.ok(next !== undefined, 'renewed after the re-acquisition');
      const gap = next - during.at(-1)!;
      t.diagnostic(
        `re-acquired ${Math.round(resolvedAt - during.at(-1)!)} ms after the last renewal's start; the next started ${Math.round(gap)} ms after it`,
      );
      assert.ok(
        gap <= opts.renewIntervalMs + SLACK_MS,
        `the first renewal after the re-acquisition started ${Math.round(gap)} ms after the last one (interval ${opts.renewIntervalMs})`,
      );
      assert.equal(lostAgain, 0, 'not lost again');
      assert.equal(lease.stats.lost, 1);
      assert.equal(lease.stats.reacquired, 1);
      assert.ok(lease.valid());
    } finally {
      await reg.close();
    }
  });
});
