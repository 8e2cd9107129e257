import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout, ManualClock } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { claimFloor, LeaseRegistry, type ManagedLease } from './lease-manager.js';
import { resolveRegistryOptions } from './options.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-lm-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const TTL = 1000;
const MARGIN = 200;

/** Two registries (two "processes") on one directory and one manual clock. */
function setup(extra: { ttlMs?: number } = {}) {
  const dir = path.join(base, `r${n++}`);
  const clock = new ManualClock(Date.UTC(2025, 5, 1), 1_000_000);
  const open = () =>
    new LeaseRegistry(createFileDriver(dir, { clock }), { cluster: 'c', ttlMs: extra.ttlMs ?? TTL, marginMs: MARGIN, clock, autoRenew: false, stateDir: path.join(dir, 'state') });
  return { dir, clock, open };
}
const twoSlots = Layout.parse('timestamp:41,worker:1,sequence:12');
const oneSlot = Layout.parse('timestamp:41,datacenter:2,sequence:12');

function events(lease: ManagedLease): string[] {
  const seen: string[] = [];
  for (const ev of ['renewed', 'renew-failed', 'lost', 'reacquired', 'node-changed']) lease.on(ev, () => seen.push(ev));
  return seen;
}

async function rejectsCode(p: Promise<unknown> | (() => unknown), code: string): Promise<FlurryError> {
  try {
    if (typeof p === 'function') await p();
    else await p;
  } catch (e) {
    assert.ok(e instanceof FlurryError, `a FlurryError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected ${code}`);
}

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

  test('GIVEN a successful renewal THEN the deadline moves to that renewal\'s start + ttl − margin', async () => {
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
    const reg = new LeaseRegistry(driver, { cluster: 'c', ttlMs: TTL, marginMs: MARGIN, clock, autoRenew: false, stateDir: path.join(dir, 'state') });
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
    assert.deepEqual(seen.filter((e) => e === 'lost'), ['lost']);
    await lease.release();
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
    assert.ok(a.notBeforeMs >= bIssued, 'the floor is B\'s final mark');
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

describe('lease manager: high-water floor', () => {
  test('GIVEN claimFloor THEN a clean release gives the mark, an expiry the mark + the unreported window, no history 0', () => {
    assert.equal(claimFloor({ highWaterMs: 5000, releasedCleanly: true }, 1200), 5000);
    assert.equal(claimFloor({ highWaterMs: 5000, releasedCleanly: false }, 1200), 6200);
    assert.equal(claimFloor({ highWaterMs: 0, releasedCleanly: false }, 1200), 0);
  });

  test('GIVEN a clean release THEN the next holder\'s notBeforeMs is exactly the highest issued timestamp', async () => {
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

  test('GIVEN a holder that died after a renewal THEN the next holder\'s floor is its last report + ttl + margin', async () => {
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
    const b = await open().acquire(oneSlot);
    assert.equal(b.notBeforeMs, floorA);
    await b.renewNow();
    clock.advance(TTL + 1);
    const c = await open().acquire(oneSlot);
    assert.ok(c.notBeforeMs >= floorA + TTL + MARGIN, `floor ${c.notBeforeMs} carries A's ${floorA}`);
    void a;
  });
});

describe('lease manager: options and lifecycle', () => {
  test('GIVEN defaults THEN ttl 10 s, renew every ttl/3, margin 1 s, wait 5 s', () => {
    const o = resolveRegistryOptions({});
    assert.equal(o.ttlMs, 10_000);
    assert.equal(o.renewIntervalMs, 3333);
    assert.equal(o.marginMs, 1000);
    assert.equal(o.highWaterWaitMs, 5000);
    assert.equal(o.cluster, 'default');
    const short = resolveRegistryOptions({ ttlMs: 1500 });
    assert.equal(short.marginMs, 300);
    assert.equal(short.renewIntervalMs, 500);
  });

  test('GIVEN out-of-range options THEN FLURRY_E_REGISTRY_OPTION names the option and its range', async () => {
    let e = await rejectsCode(() => resolveRegistryOptions({ ttlMs: 50 }), 'FLURRY_E_REGISTRY_OPTION');
    assert.match(e.message, /ttlMs must be an integer from 100 to 3600000/);
    e = await rejectsCode(() => resolveRegistryOptions({ ttlMs: 1000, renewIntervalMs: 900 }), 'FLURRY_E_REGISTRY_OPTION');
    assert.match(e.message, /renewIntervalMs/);
    e = await rejectsCode(() => resolveRegistryOptions({ ttlMs: 1000, marginMs: 600 }), 'FLURRY_E_REGISTRY_OPTION');
    assert.match(e.message, /marginMs/);
    for (const cluster of ['a/b', '..', '', 'x'.repeat(65)]) await rejectsCode(() => resolveRegistryOptions({ cluster }), 'FLURRY_E_REGISTRY_OPTION');
  });

  test('GIVEN a closed registry THEN acquire rejects with FLURRY_E_REGISTRY_CLOSED AND its leases were released', async () => {
    const { open } = setup();
    const reg = open();
    const lease = await reg.acquire(twoSlots);
    await reg.close();
    assert.equal(lease.state, 'released');
    await rejectsCode(reg.acquire(twoSlots), 'FLURRY_E_REGISTRY_CLOSED');
    const again = await open().acquire(twoSlots);
    assert.equal(again.slot, 0, 'the released slot is free again');
  });

  test('GIVEN a pin THEN it becomes part of the namespace AND the node; an unknown field is refused', async () => {
    const { open } = setup();
    const reg = open();
    const lease = await reg.acquire(Layout.from('twitter'), { pin: { datacenter: 3 } });
    assert.equal(lease.namespace, 'c/datacenter-3');
    assert.deepEqual(lease.node, { datacenter: 3, worker: 0 });
    await rejectsCode(reg.acquire(Layout.from('twitter'), { pin: { rack: 1 } }), 'FLURRY_E_REGISTRY_OPTION');
    await rejectsCode(reg.acquire(Layout.from('twitter'), { pin: { datacenter: 32 } }), 'FLURRY_E_REGISTRY_OPTION');
    await reg.close();
  });

  test('GIVEN a restarted holder THEN it asks for the slot it held last first (the local cache)', async () => {
    const { clock, open } = setup();
    const r1 = open();
    const l0 = await r1.acquire(Layout.parse('timestamp:41,worker:3,sequence:12'));
    const r2 = open();
    const l1 = await r2.acquire(Layout.parse('timestamp:41,worker:3,sequence:12'));
    assert.equal(l1.slot, 1);
    await r1.close();
    await r2.close(); // the cache now says slot 1
    clock.advance(5);
    const r3 = open();
    const l = await r3.acquire(Layout.parse('timestamp:41,worker:3,sequence:12'));
    assert.equal(l.slot, 1, 'slot 0 is free too, but the cached slot comes first');
    await r3.close();
    void l0;
  });
});
