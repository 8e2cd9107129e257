import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ErrorCode, FlurryError, Generator, Layout, ManualClock } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { LeaseRegistry } from './registry.js';

test('GIVEN a Generator built on a registry lease itself WHEN the lease is lost and re-acquired as another node THEN that generator refuses for good, never issuing under the old node ID another holder now has', async () => {
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
  try {
    const la = await a.acquire(layout);
    const ga = new Generator({ layout, lease: la, clock }); // the lease itself, not a view
    ga.next();
    assert.deepEqual(ga.node, { worker: 0 });
    clock.advance(1500); // no renewal: A's lease expires
    const lb = await b.acquire(layout);
    assert.deepEqual(lb.node, { worker: 0 }, 'B takes the expired node ID');
    await la.renewNow();
    await la.renewNow(); // A notices the loss and re-acquires: the other node ID
    assert.equal(la.valid(), true);
    assert.deepEqual(la.node, { worker: 1 });
    for (let k = 0; k < 6; k++) {
      clock.advance(300);
      await la.renewNow();
      await lb.renewNow();
    }
    assert.throws(
      () => ga.next(),
      (e: unknown) => e instanceof FlurryError && e.code === ErrorCode.LEASE_EXPIRED,
      'the old generator must not issue under worker 0, which B holds',
    );
    assert.throws(
      () => ga.fill(new BigUint64Array(4)),
      (e: unknown) => e instanceof FlurryError && e.code === ErrorCode.LEASE_EXPIRED,
    );
    const again = new Generator({ layout, lease: la, clock });
    assert.deepEqual(again.node, { worker: 1 }, 'a generator built now gets the new node ID');
    assert.deepEqual(layout.decode(again.next()).fields, { worker: 1 });
    again.close();
    ga.close();
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
