import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ErrorCode, FlurryError, Generator, Layout, ManualClock } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { LeaseRegistry } from './registry.js';

test('GIVEN a Generator built on a registry lease itself WHEN the lease is lost and re-acquired as another node THEN it refuses while lost, then follows the lease: never the old node ID another holder now has, above all it issued, even with the wall clock back in its last tick; a generator on the old claim refuses for good', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-direct-'));
  const clock = new ManualClock(Date.UTC(2025, 5, 1), 1_000_000);
  const open = (s: string) =>
    new LeaseRegistry(createFileDriver(dir, { clock }), {
      cluster: 'c',
      ttlMs: 1000,
      marginMs: 200,
      clock,
      autoRenew: false,
      stateDir: path.join(dir, `state-${s}`),
    });
  const layout = Layout.parse('timestamp:41,worker:1,sequence:12');
  const a = open('a');
  const b = open('b');
  const expired = (e: unknown) => e instanceof FlurryError && e.code === ErrorCode.LEASE_EXPIRED;
  try {
    const la = await a.acquire(layout);
    const ga = new Generator({ layout, lease: la, clock }); // the lease itself: it follows
    const claim0 = new Generator({
      layout: Layout.parse('timestamp:41,worker:1,sequence:11'),
      lease: la.forGenerator(),
      clock,
    }); // one claim only
    const before = [ga.next(), ga.next()];
    claim0.next();
    const lastMs = layout.decode(before[1]).unixMs;
    assert.deepEqual(ga.node, { worker: 0 });
    clock.advance(1500); // no renewal: A's lease expires
    assert.throws(() => ga.next(), expired);
    const lb = await b.acquire(layout);
    assert.deepEqual(lb.node, { worker: 0 }, 'B takes the expired node ID');
    await la.renewNow();
    await la.renewNow(); // A notices the loss and re-acquires: the other node ID
    assert.equal(la.valid(), true);
    assert.deepEqual(la.node, { worker: 1 });
    assert.deepEqual(ga.node, { worker: 1 }, "the generator's node is the lease's");
    clock.stepWall(lastMs - clock.now()); // the wall clock back in the tick of A's last ID
    const issued = ga.stats.issued;
    const after = [ga.next(), ...ga.batch(3)];
    assert.equal(ga.stats.issued, issued + 4);
    for (const id of after) {
      assert.deepEqual(layout.decode(id).fields, { worker: 1 }, 'never under worker 0, which B holds');
      assert.ok(layout.decode(id).unixMs > lastMs, 'a new tick above everything it issued');
    }
    assert.throws(() => claim0.next(), expired, 'a generator on the old claim never issues again');
    assert.throws(() => claim0.fill(new BigUint64Array(4)), expired);
    const again = new Generator({ layout: Layout.parse('timestamp:41,worker:1,sequence:10'), lease: la, clock });
    assert.deepEqual(again.node, { worker: 1 }, 'a generator built now gets the new node ID');
    again.close();
    claim0.close();
    ga.close();
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
