/**
 * Every public entry point of @flurry/coordination that takes an options object refuses a misspelt key with
 * FLURRY_E_UNKNOWN_OPTION naming the closest valid key (issue 17, part 1): a misspelt `cluster` or `pin` would
 * otherwise lease a node ID another service holds.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout, systemClock } from '@flurry/core';
import { openRegistry } from './open-registry.js';
import { leasedGenerator } from './leased-generator.js';
import { LeaseRegistry } from './registry.js';
import { resolveRegistryOptions } from './options.js';
import { createFileDriver } from './drivers/file.js';
import { createStaticDriver } from './drivers/static.js';
import { createRedisDriver } from './drivers/redis.js';
import { createEtcdDriver } from './drivers/etcd.js';
import { createZooKeeperDriver } from './drivers/zookeeper.js';
import { createLeafDriver } from './drivers/zookeeper-leaf.js';

function check(e: unknown, option: string, suggestion: string, where: RegExp): true {
  assert.ok(e instanceof FlurryError, String(e));
  assert.equal(e.code, 'FLURRY_E_UNKNOWN_OPTION', e.message);
  assert.equal(e.details.option, option);
  assert.equal(e.details.suggestion, suggestion);
  assert.ok(e.message.includes(`did you mean "${suggestion}"?`), e.message);
  assert.match(e.message, where);
  return true;
}
const refuses = (fn: () => unknown, option: string, suggestion: string, where: RegExp): void =>
  assert.throws(fn, (e) => check(e, option, suggestion, where));
const rejects = (p: Promise<unknown>, option: string, suggestion: string, where: RegExp): Promise<void> =>
  assert.rejects(p, (e) => check(e, option, suggestion, where));

describe('strict options in coordination', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'flurry-strict-'));
  const base = { stateDir: path.join(root, 'state'), autoRenew: false };
  after(() => rmSync(root, { recursive: true, force: true }));

  it('GIVEN openRegistry with clustr THEN FLURRY_E_UNKNOWN_OPTION suggesting cluster (not the default cluster)', async () => {
    await rejects(
      openRegistry(`file:${root}/a`, { ...base, clustr: 'orders' } as never),
      'clustr',
      'cluster',
      /^openRegistry options/,
    );
  });

  it('GIVEN openRegistry with holder.hostnam THEN FLURRY_E_UNKNOWN_OPTION suggesting hostname', async () => {
    await rejects(
      openRegistry(`file:${root}/b`, { ...base, holder: { hostnam: 'web-1' } } as never),
      'hostnam',
      'hostname',
      /^openRegistry options\.holder/,
    );
  });

  it('GIVEN resolveRegistryOptions and new LeaseRegistry with ttlMS THEN FLURRY_E_UNKNOWN_OPTION suggesting ttlMs', () => {
    refuses(() => resolveRegistryOptions({ ttlMS: 5000 } as never), 'ttlMS', 'ttlMs', /options/);
    const driver = createFileDriver(path.join(root, 'c'), { clock: systemClock });
    refuses(() => new LeaseRegistry(driver, { marginMS: 5 } as never), 'marginMS', 'marginMs', /options/);
  });

  it('GIVEN registry.acquire with pins THEN FLURRY_E_UNKNOWN_OPTION suggesting pin', async () => {
    const registry = await openRegistry(`file:${root}/d`, base);
    try {
      await rejects(
        registry.acquire(Layout.from('twitter'), { pins: { datacenter: 1 } } as never),
        'pins',
        'pin',
        /^registry\.acquire\(\) options/,
      );
    } finally {
      await registry.close();
    }
  });

  it('GIVEN leasedGenerator with pins THEN FLURRY_E_UNKNOWN_OPTION suggesting pin, and nothing is leased', async () => {
    const registry = await openRegistry(`file:${root}/e`, base);
    try {
      await rejects(
        leasedGenerator({ registry, layout: 'twitter', pins: { datacenter: 1 } } as never),
        'pins',
        'pin',
        /^leasedGenerator options/,
      );
      await rejects(
        leasedGenerator({ registry, layout: 'twitter', generator: { onExhaust: 'borrow' } } as never),
        'onExhaust',
        'onExhausted',
        /^leasedGenerator options\.generator/,
      );
    } finally {
      await registry.close();
    }
  });

  it('GIVEN createFileDriver and createStaticDriver with a misspelt key THEN FLURRY_E_UNKNOWN_OPTION', () => {
    refuses(
      () => createFileDriver(path.join(root, 'f'), { clock: systemClock, tim: undefined } as never),
      'tim',
      'time',
      /^createFileDriver options/,
    );
    refuses(
      () =>
        createStaticDriver({
          kind: 'static',
          slot: 1,
          source: 'static:1',
          clock: systemClock,
          stateDri: root,
        } as never),
      'stateDri',
      'stateDir',
      /^createStaticDriver options/,
    );
  });

  it('GIVEN each engine driver factory with connectTimeout THEN FLURRY_E_UNKNOWN_OPTION before any connection', async () => {
    // Port 9 (discard) on loopback: nothing is contacted, the options are refused first.
    const o = { clock: systemClock, connectTimeoutMs: 100, connectTimeout: 100 } as never;
    await rejects(createRedisDriver('redis://127.0.0.1:9/0', o), 'connectTimeout', 'connectTimeoutMs', /^createRedis/);
    await rejects(createEtcdDriver('etcd://127.0.0.1:9/x', o), 'connectTimeout', 'connectTimeoutMs', /^createEtcd/);
    await rejects(
      createZooKeeperDriver('zookeeper://127.0.0.1:9/x', o),
      'connectTimeout',
      'connectTimeoutMs',
      /^createZooKeeper/,
    );
    await rejects(
      createLeafDriver('zookeeper+leaf://127.0.0.1:9/x?name=a&address=127.0.0.1:1', o),
      'connectTimeout',
      'connectTimeoutMs',
      /^createLeaf/,
    );
  });
});
