import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Layout } from '@flurry/core';
import type { RegistryDriver } from './driver.js';
import { createFileDriver } from './drivers/file.js';
import { layouts, rejectsCode, setup } from './lease-test-kit.js';
import { resolveRegistryOptions } from './options.js';
import { LeaseRegistry } from './registry.js';

const { twoSlots } = layouts;

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
    e = await rejectsCode(
      () => resolveRegistryOptions({ ttlMs: 1000, renewIntervalMs: 900 }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    assert.match(e.message, /renewIntervalMs/);
    e = await rejectsCode(() => resolveRegistryOptions({ ttlMs: 1000, marginMs: 600 }), 'FLURRY_E_REGISTRY_OPTION');
    assert.match(e.message, /marginMs/);
    for (const cluster of ['a/b', '..', '', 'x'.repeat(65)])
      await rejectsCode(() => resolveRegistryOptions({ cluster }), 'FLURRY_E_REGISTRY_OPTION');
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

  test('GIVEN a claim that lands after its timeout THEN acquire fails AND the late claim is given back', async () => {
    const { dir, clock } = setup();
    const file = createFileDriver(dir, { clock });
    const released: number[] = [];
    const slow: RegistryDriver = {
      kind: file.kind,
      url: file.url,
      claim: async (req) => (await sleep(300), file.claim(req)),
      renew: (c, o) => file.renew(c, o),
      release: (c, o) => (released.push(o.highWaterMs), file.release(c, o)),
      holders: (ns) => file.holders(ns),
      close: () => file.close(),
    };
    const state = path.join(dir, 'state');
    const o = { cluster: 'c', ttlMs: 100, marginMs: 0, connectTimeoutMs: 100, autoRenew: false, stateDir: state };
    const reg = new LeaseRegistry(slow, { ...o, clock });
    const e = await rejectsCode(() => reg.acquire(twoSlots), 'FLURRY_E_REGISTRY_UNREACHABLE');
    assert.match(e.message, /claim did not answer within 100 ms/);
    for (let i = 0; i < 50 && released.length === 0; i++) await sleep(20);
    assert.deepEqual(released, [0], 'the claim that landed late was released, with mark 0');
    await reg.close();
  });
});
