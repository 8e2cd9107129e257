import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout, ManualClock, systemClock, type GeneratorEvent } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { cleanFloorDriver } from './drivers/test-kit.js';
import { LeaseRegistry } from './registry.js';
import { leasedGenerator } from './leased-generator.js';
import { openRegistry } from './open-registry.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-lg-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const TTL = 1000;
const layout = Layout.parse('timestamp:41,worker:1,sequence:12');

function setup(start = Date.UTC(2025, 5, 1)) {
  const dir = path.join(base, `r${n++}`);
  const clock = new ManualClock(start, 1_000_000);
  const open = (o: { highWaterWaitMs?: number; ttlMs?: number } = {}) =>
    new LeaseRegistry(createFileDriver(dir, { clock }), {
      cluster: 'c',
      ttlMs: TTL,
      marginMs: 200,
      clock,
      autoRenew: false,
      stateDir: path.join(dir, 'state'),
      ...o,
    });
  return { clock, open, dir };
}

/** A registry on `clock` whose one slot was released cleanly by a holder that issued up to `floor`. */
function cleanFloorRegistry(clock: ManualClock, floor: number, marginMs: number): LeaseRegistry {
  const driver = cleanFloorDriver(floor);
  return new LeaseRegistry(driver, {
    cluster: 'c',
    ttlMs: TTL,
    marginMs,
    clock,
    autoRenew: false,
    stateDir: path.join(base, `r${n++}`, 'state'),
  });
}

describe('leasedGenerator', () => {
  test('GIVEN a leased generator THEN its IDs carry the leased node AND close() hands the exact mark to the next holder', async () => {
    const { clock, open } = setup();
    const ids = await leasedGenerator({ registry: open(), layout });
    assert.ok(ids.ready());
    const a = ids.next();
    clock.advance(3);
    const b = ids.next();
    assert.ok(b > a);
    assert.equal(layout.decode(a).fields.worker, 0);
    const last = layout.decode(ids.batch(5).at(-1)!).unixMs;
    await ids.close();
    assert.equal(ids.ready(), false);
    const next = await open().acquire(layout);
    assert.equal(next.slot, 0);
    assert.equal(next.notBeforeMs, last);
  });

  test('GIVEN the lease is lost THEN every call is refused; WHEN it is re-acquired as another node THEN the same generator follows it, above everything issued', async () => {
    const { clock, open } = setup();
    const ids = await leasedGenerator({ registry: open(), layout });
    const first = ids.generator;
    for (let i = 0; i < 3; i++) ids.next();
    clock.advance(5);
    const lastOld = ids.next();
    clock.advance(TTL + 1); // paused past the TTL: another process takes node 0
    assert.throws(
      () => ids.next(),
      (e: FlurryError) => e.code === 'FLURRY_E_LEASE_EXPIRED',
    );
    assert.equal(ids.ready(), false);
    const other = await open().acquire(layout);
    assert.equal(other.slot, 0);
    clock.stepWall(-50); // and our wall clock stepped back meanwhile
    assert.equal(await ids.lease.renewNow(), true);
    assert.deepEqual(ids.lease.node, { worker: 1 });
    assert.ok(ids.ready());
    assert.deepEqual(ids.generator.node, { worker: 1 }, "the generator's node is the lease's at once");
    const issued = first.stats.issued;
    const id = ids.next();
    assert.equal(ids.generator, first, 'not rebuilt');
    assert.equal(first.stats.issued, issued + 1, 'its count goes on');
    const d = layout.decode(id);
    assert.equal(d.fields.worker, 1);
    assert.ok(d.unixMs > layout.decode(lastOld).unixMs, 'never below what this process issued');
    await ids.close();
  });

  test("GIVEN the previous holder's floor is ahead of the clock THEN it waits when allowed AND fails with FLURRY_E_CLOCK_BEHIND_HIGH_WATER when not, releasing the node ID", async () => {
    const { clock, open } = setup();
    const one = Layout.parse('timestamp:41,datacenter:1,sequence:12');
    const first = await leasedGenerator({ registry: open(), layout: one });
    first.next();
    clock.advance(2);
    const mark = layout.decode(first.next()).unixMs;
    await first.close();
    clock.stepWall(-800);
    await assert.rejects(
      leasedGenerator({ registry: open({ highWaterWaitMs: 500 }), layout: one }),
      (e: FlurryError) => {
        assert.equal(e.code, 'FLURRY_E_CLOCK_BEHIND_HIGH_WATER');
        assert.match(e.message, /behind/);
        assert.ok(Number(e.details.behindMs) > 500);
        return true;
      },
    );
    // (no background renewals with autoRenew off: a TTL longer than the wait)
    const patient = await leasedGenerator({ registry: open({ highWaterWaitMs: 2000, ttlMs: 5000 }), layout: one });
    assert.ok(clock.now() > mark, 'waited for the clock to pass the mark');
    assert.ok(one.decode(patient.next()).unixMs > mark);
    await patient.close();
  });

  test('GIVEN a borrowing holder whose lease is taken away and re-acquired with its floor ahead of the clock THEN the re-acquisition waits for it AND the rebuilt generator never sleeps', async () => {
    const { clock, open, dir } = setup();
    const tiny = Layout.parse('timestamp:41,worker:1,sequence:4'); // 16 IDs per ms
    const events: GeneratorEvent[] = [];
    const ids = await leasedGenerator({
      registry: open(),
      layout: tiny,
      generator: { onExhausted: 'borrow', onEvent: (e) => events.push(e) },
    });
    const burst = ids.batch(16 * 150); // ~150 ms of borrowed ticks ahead of the frozen clock
    const top = tiny.decode(burst.at(-1)!).unixMs;
    assert.ok(top > clock.now() + 100);
    const slotDir = path.join(dir, 'c', 'slots', '0');
    for (const f of readdirSync(slotDir)) if (f.endsWith('.lease')) unlinkSync(path.join(slotDir, f)); // the engine forgot us
    assert.equal(await ids.lease.renewNow(), false);
    assert.equal(ids.lease.state, 'lost');
    assert.throws(
      () => ids.next(),
      (e: FlurryError) => e.code === 'FLURRY_E_LEASE_EXPIRED',
    );
    assert.equal(await ids.lease.renewNow(), true);
    assert.ok(ids.lease.notBeforeMs >= top);
    assert.ok(clock.now() > ids.lease.notBeforeMs, 're-acquired only once the clock passed the floor');
    const id = ids.next();
    assert.ok(tiny.decode(id).unixMs > top);
    assert.ok(!events.some((e) => e.type === 'high-water-wait'), 'no generator slept for the floor');
    await ids.close();
  });

  test('GIVEN the sonyflake layout (10 ms ticks), a margin of 5 ms and a floor 101 ms ahead THEN the first next() after acquire issues above the floor without waiting or an error', async () => {
    const clock = new ManualClock(Date.UTC(2025, 5, 1), 1_000_000);
    const floor = clock.now() + 101;
    const registry = cleanFloorRegistry(clock, floor, 5);
    const events: GeneratorEvent[] = [];
    const ids = await leasedGenerator({ registry, layout: 'sonyflake', generator: { onEvent: (e) => events.push(e) } });
    try {
      assert.ok(ids.ready());
      const sonyflake = Layout.from('sonyflake');
      assert.ok(sonyflake.decode(ids.next()).unixMs > floor);
      assert.ok(
        !events.some((e) => e.type === 'high-water-wait'),
        'the registry waited for the first tick above the floor',
      );
    } finally {
      await ids.close();
      await registry.close();
    }
  });

  test("GIVEN the sonyflake layout and a margin of 5 ms WHEN the wall clock steps back 8 ms (under one 10 ms tick) right after acquire THEN the generator's own wait (at least one tick) covers it: next() waits and issues above the floor", async () => {
    const clock = new ManualClock(Date.UTC(2025, 6, 1), 1_000_000);
    const floor = clock.now() + 101;
    const registry = cleanFloorRegistry(clock, floor, 5);
    const events: GeneratorEvent[] = [];
    const ids = await leasedGenerator({ registry, layout: 'sonyflake', generator: { onEvent: (e) => events.push(e) } });
    try {
      clock.stepWall(-8); // 8 ms before the first tick above the floor: more than the margin
      const sonyflake = Layout.from('sonyflake');
      assert.ok(sonyflake.decode(ids.next()).unixMs > floor);
      assert.ok(
        events.some((e) => e.type === 'high-water-wait'),
        'the generator waited for the tick',
      );
    } finally {
      await ids.close();
      await registry.close();
    }
  });

  test("GIVEN a generator clock other than the registry's THEN FLURRY_E_REGISTRY_OPTION", async () => {
    const { open } = setup();
    await assert.rejects(
      leasedGenerator({ registry: open(), layout, generator: { clock: systemClock } }),
      (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_OPTION',
    );
  });

  test("GIVEN the default file registry and the real clock WHEN two runs follow each other THEN the second run's IDs are all above the first's; WHEN two run at once THEN their nodes differ", async () => {
    const dir = path.join(base, `seq${n++}`);
    const open = () => openRegistry(`file:${dir}`, { cluster: 'cli', stateDir: path.join(dir, 'state') });
    const twitter = Layout.from('twitter');
    const r1 = await open();
    const g1 = await leasedGenerator({ registry: r1, layout: twitter });
    const first = g1.batch(5000);
    await g1.close();
    await r1.close();
    const r2 = await open();
    const g2 = await leasedGenerator({ registry: r2, layout: twitter });
    const second = g2.batch(10);
    assert.ok(second[0] > first[first.length - 1], 'a second run continues above the first');
    const r3 = await open();
    const g3 = await leasedGenerator({ registry: r3, layout: twitter });
    assert.notDeepEqual(g3.lease.node, g2.lease.node, 'two at once get different node IDs');
    await g2.close();
    await g3.close();
    await r2.close();
    await r3.close();
  });

  test('GIVEN a borrowing holder that bursts just before its deadline and dies THEN its successor never re-issues its borrowed ticks', async () => {
    const { clock, open } = setup();
    const tiny = Layout.parse('timestamp:41,datacenter:1,sequence:4'); // 16 IDs per ms
    await assert.rejects(
      leasedGenerator({ registry: open(), layout: tiny, generator: { onExhausted: 'borrow', maxBorrowMs: 1000 } }),
      (e: FlurryError) =>
        e.code === 'FLURRY_E_REGISTRY_OPTION' && /maxBorrowMs 1000 exceeds the lease margin of 200 ms/.test(e.message),
    );
    const a = await leasedGenerator({ registry: open(), layout: tiny, generator: { onExhausted: 'borrow' } });
    clock.advance(TTL - 200 - 1); // 1 ms before the fencing deadline
    const issued: bigint[] = [];
    for (let i = 0; i < 16 * 2000; i++) {
      try {
        issued.push(a.next()); // the whole burst runs within one millisecond of wall time
      } catch {
        break;
      }
    }
    const aMax = Math.max(...issued.map((id) => tiny.decode(id).unixMs));
    assert.ok(aMax > clock.now() + 100, `A borrowed ahead of its clock (to ${aMax - clock.now()} ms)`);
    // A dies here (no release, no renewal). B takes the node ID once the lease expired.
    a.generator.close(); // (only frees the in-process node claim; the lease is not released)
    clock.advance(200 + 2);
    const b = await leasedGenerator({ registry: open(), layout: tiny });
    assert.ok(
      b.lease.notBeforeMs >= aMax,
      `the registry's floor ${b.lease.notBeforeMs} covers A's borrowed ticks up to ${aMax}`,
    );
    const bIds = b.batch(64);
    const seen = new Set(issued);
    for (const id of bIds) assert.ok(!seen.has(id), `B re-issued ${id}`);
    assert.ok(tiny.decode(bIds[0]).unixMs > aMax);
    await b.close();
  });
});
