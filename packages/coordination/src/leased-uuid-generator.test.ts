// leasedUuidGenerator on the file registry (namespaces shared with Snowflake layouts, or not, by choice;
// the high-water mark handed on; re-acquisition) and on a real Redis beside leasedGenerator.
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout, ManualClock, decodeUuid } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { LeaseRegistry } from './registry.js';
import { leasedGenerator } from './leased-generator.js';
import { leasedUuidGenerator, uuidGeneratorOnLease } from './leased-generator.js';
import { openRegistry } from './open-registry.js';
import { startEngine, type RunningEngine } from './testing/harness.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-luuid-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const TTL = 1000;
const twoWorkers = Layout.parse('timestamp:41,worker:1,sequence:12');
const hasCode = (c: string) => (e: unknown) => e instanceof FlurryError && e.code === c;

function setup(start = Date.UTC(2025, 5, 1)) {
  const dir = path.join(base, `r${n++}`);
  const clock = new ManualClock(start, 1_000_000);
  const open = () =>
    new LeaseRegistry(createFileDriver(dir, { clock }), {
      cluster: 'c',
      ttlMs: TTL,
      marginMs: 200,
      clock,
      autoRenew: false,
      stateDir: path.join(dir, 'state'),
    });
  return { clock, open };
}

describe('leasedUuidGenerator (file registry)', () => {
  test('GIVEN a leased UUID generator THEN its UUIDs carry the leased node AND close() hands the exact high-water mark to the next holder', async () => {
    const { clock, open } = setup();
    const uuids = await leasedUuidGenerator({ registry: open(), nodeBits: 4 });
    assert.ok(uuids.ready());
    const a = uuids.next();
    clock.advance(3);
    const b = uuids.nextBigInt();
    assert.ok(b > BigInt(`0x${a.replace(/-/g, '')}`));
    assert.equal(decodeUuid(a, { nodeBits: 4 }).node, uuids.node);
    assert.equal(uuids.lease.node.node, uuids.node);
    const last = decodeUuid(uuids.batch(5).at(-1)!, { nodeBits: 4 }).unixMs;
    await uuids.close();
    assert.equal(uuids.ready(), false);
    assert.throws(() => uuids.next(), hasCode('FLURRY_E_LEASE_EXPIRED'));
    const next = await open().acquire({ name: 'uuidv7', nodeFields: [{ name: 'node', bits: 4 }] }, {});
    assert.equal(next.slot, uuids.lease.slot);
    assert.equal(next.notBeforeMs, last);
  });

  test('GIVEN a Snowflake layout without pinned fields in the same cluster THEN UUID and Snowflake generators never hold the same node ID, unless shareNodeIds allows it', async () => {
    const { open } = setup();
    const snow = await leasedGenerator({ registry: open(), layout: twoWorkers });
    const uuid = await leasedUuidGenerator({ registry: open(), nodeBits: 1 });
    assert.notEqual(uuid.node, snow.generator.node.worker, 'one slot space: the other node ID');
    await assert.rejects(
      leasedUuidGenerator({ registry: open(), nodeBits: 1 }),
      hasCode('FLURRY_E_REGISTRY_EXHAUSTED'),
    );
    const last = uuid.next();
    await uuid.close();
    // Allowed: a namespace of the UUID generators' own; both node numbers, one of them the Snowflake worker's.
    const shared = await leasedUuidGenerator({ registry: open(), nodeBits: 1, shareNodeIds: true });
    const shared2 = await leasedUuidGenerator({ registry: open(), nodeBits: 1, shareNodeIds: true });
    assert.equal(shared.lease.namespace, 'c/uuid-1');
    assert.deepEqual(
      [shared.node, shared2.node].sort(),
      [0, 1],
      'UUID nodes of the shared namespace are still distinct',
    );
    assert.equal(new Set([shared.next(), shared2.next(), last]).size, 3);
    await Promise.all([snow.close(), shared.close(), shared2.close()]);
  });

  test('GIVEN layout twitter pinned to datacenter 1 THEN the UUID generator leases a twitter node ID of that datacenter and holds its whole node value', async () => {
    const { open } = setup();
    const snow = await leasedGenerator({ registry: open(), layout: 'twitter', pin: { datacenter: 1 } });
    const uuid = await leasedUuidGenerator({ registry: open(), layout: 'twitter', pin: { datacenter: 1 } });
    assert.equal(uuid.lease.namespace, 'c/datacenter-1');
    const worker = uuid.lease.node.worker;
    assert.notEqual(worker, snow.generator.node.worker);
    assert.equal(decodeUuid(uuid.next()).node, 1 * 32 + worker);
    await assert.rejects(
      leasedUuidGenerator({ registry: open(), layout: 'twitter', nodeBits: 9 }),
      (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_OPTION' && /at least 10/.test(e.message),
    );
    await assert.rejects(
      leasedUuidGenerator({ registry: open(), pin: { datacenter: 1 } }),
      hasCode('FLURRY_E_REGISTRY_OPTION'),
    );
    await assert.rejects(
      leasedUuidGenerator({ registry: open(), nodBits: 3 } as never),
      hasCode('FLURRY_E_UNKNOWN_OPTION'),
    );
    await Promise.all([snow.close(), uuid.close()]);
  });

  test('GIVEN the lease is lost THEN calls are refused; WHEN it is re-acquired THEN the same generator follows it, above everything issued', async () => {
    const { clock, open } = setup();
    const uuids = await leasedUuidGenerator({ registry: open(), nodeBits: 1 });
    const first = uuids.generator;
    clock.advance(5);
    const lastOld = uuids.nextBigInt();
    clock.advance(TTL + 1);
    assert.throws(() => uuids.next(), hasCode('FLURRY_E_LEASE_EXPIRED'));
    assert.equal(uuids.ready(), false);
    clock.setWall(clock.now() - 50); // and the wall clock stepped back: still above what was issued
    assert.ok(await uuids.lease.renewNow());
    const fresh = uuids.nextBigInt();
    assert.equal(uuids.generator, first, 'not rebuilt');
    assert.ok(fresh > lastOld, 'continues above what it issued');
    await uuids.close();
  });
});

describe('uuidGeneratorOnLease (the service: UUIDs on its Snowflake lease)', () => {
  test('GIVEN a twitter leasedGenerator THEN UUIDs on its lease hold its node value, are fenced at its deadline, keep the lease at close() and raise the high-water mark handed on', async () => {
    const { clock, open } = setup();
    const registry = open();
    const snow = await leasedGenerator({ registry, layout: 'twitter', pin: { datacenter: 2 } });
    const uuids = uuidGeneratorOnLease(snow.lease, { registry, layout: snow.generator.layout });
    assert.equal(uuids.generator.format.nodeBits, 16);
    const node = 2 * 32 + snow.generator.node.worker;
    assert.equal(uuids.node, node);
    assert.equal(decodeUuid(uuids.next()).node, node);
    snow.next();
    // Borrowed milliseconds on the UUID side only: the next holder must start above them too.
    const ahead = uuids.batch(3, 'canonical');
    clock.advance(TTL + 1);
    assert.throws(() => uuids.next(), hasCode('FLURRY_E_LEASE_EXPIRED'));
    assert.throws(() => snow.next(), hasCode('FLURRY_E_LEASE_EXPIRED'));
    assert.ok(await snow.lease.renewNow());
    snow.next();
    clock.advance(20);
    const after = uuids.next();
    assert.ok(after > ahead.at(-1)!, 'continues above what it issued before the lease was renewed');
    await uuids.close();
    assert.equal(snow.lease.state, 'held', 'the lease stays with its owner');
    assert.ok(snow.ready());
    const lastUuidMs = decodeUuid(after).unixMs;
    await snow.close();
    const next = await open().acquire(Layout.from('twitter'), { pin: { datacenter: 2 } });
    assert.equal(next.slot, snow.lease.slot);
    assert.ok(next.notBeforeMs >= lastUuidMs, 'the floor covers the UUIDs');
    assert.ok(lastUuidMs > decodeUuid(ahead[0]).unixMs, 'the UUIDs went past the Snowflake IDs');
    assert.throws(
      () => uuidGeneratorOnLease(next, { registry, layout: Layout.from('twitter'), nodeBits: 9 }),
      (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_OPTION' && /at least 10/.test(e.message),
    );
  });
});

describe('leasedUuidGenerator on a real Redis', () => {
  let engine: RunningEngine;
  before(async () => {
    engine = await startEngine('redis');
  });
  after(async () => {
    await engine?.stop();
  });

  test('GIVEN four UUID generators and a leaf Snowflake generator of one cluster on Redis THEN five distinct node IDs and 40,000 distinct UUIDs', async () => {
    const registries = await Promise.all(
      [0, 1, 2, 3, 4].map(() => openRegistry(engine.url, { cluster: 'u', connectTimeoutMs: 2000 })),
    );
    try {
      const snow = await leasedGenerator({ registry: registries[0], layout: 'leaf' });
      const gens = await Promise.all(
        registries.slice(1).map((registry) => leasedUuidGenerator({ registry, nodeBits: 10 })),
      );
      const nodes = new Set([snow.generator.node.worker, ...gens.map((g) => g.node)]);
      assert.equal(nodes.size, 5, 'a leaf worker and the UUID nodes share one slot space');
      const all = new Set<string>();
      for (const g of gens) for (const u of g.batch(10_000)) all.add(u);
      assert.equal(all.size, 40_000);
      for (const g of gens) assert.equal(decodeUuid(g.next(), { nodeBits: 10 }).node, g.node);
      await Promise.all([snow.close(), ...gens.map((g) => g.close())]);
    } finally {
      await Promise.all(registries.map((r) => r.close()));
    }
  });
});

describe('leasedUuidGenerator (static and k8s registries)', () => {
  test('GIVEN static:5 and a StatefulSet pod ids-6 THEN the UUIDs carry node 5 and node 6, strictly increasing', async () => {
    const stateDir = path.join(base, `s${n++}`);
    const saved = { POD_NAME: process.env.POD_NAME };
    process.env.POD_NAME = 'ids-6';
    try {
      for (const [url, node] of [
        ['static:5', 5],
        ['k8s:', 6],
      ] as const) {
        const uuids = await leasedUuidGenerator({ registry: await openRegistry(url, { stateDir }), nodeBits: 4 });
        try {
          const batch = uuids.batch(1000);
          assert.equal(uuids.node, node, url);
          for (const u of batch) assert.equal(decodeUuid(u, { nodeBits: 4 }).node, node, url);
          for (let i = 1; i < batch.length; i++)
            assert.ok(batch[i] > batch[i - 1], `${url}: UUID ${i} not above the one before`);
        } finally {
          await uuids.close();
        }
      }
    } finally {
      if (saved.POD_NAME === undefined) delete process.env.POD_NAME;
      else process.env.POD_NAME = saved.POD_NAME;
    }
  });
});
