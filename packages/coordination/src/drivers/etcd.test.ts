import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { FlurryError, ManualClock, systemClock } from '@flurry/core';
import { createEtcdDriver } from './etcd.js';
import { parseEtcdUrl } from '../url.js';
import type { RegistryDriver } from '../driver.js';
import { freePort, startEngine, type RunningEngine } from '../testing/harness.js';
import { holder, rejectsWith, retryUntilOk, sleep } from './test-kit.js';

const opts = { clock: systemClock, connectTimeoutMs: 3000 };

describe('etcd URL parsing', () => {
  it('GIVEN a multi-host URL with credentials THEN hosts, prefix and a redacted URL come out', () => {
    const u = parseEtcdUrl('etcd://root:s3cr%40t@10.0.0.1:2379,10.0.0.2,[::1]:2380/ids/prod/');
    assert.deepEqual(u.hosts, ['http://10.0.0.1:2379', 'http://10.0.0.2:2379', 'http://[::1]:2380']);
    assert.equal(u.username, 'root');
    assert.equal(u.password, 's3cr@t');
    assert.equal(u.prefix, '/ids/prod');
    assert.equal(u.redacted, 'etcd://root:***@10.0.0.1:2379,10.0.0.2,[::1]:2380/ids/prod');
  });

  it('GIVEN no path THEN the prefix is /flurry; GIVEN etcds THEN hosts use https', () => {
    assert.equal(parseEtcdUrl(new URL('etcd://127.0.0.1:2379')).prefix, '/flurry');
    assert.deepEqual(parseEtcdUrl('etcds://h:1/p').hosts, ['https://h:1']);
  });

  it('GIVEN malformed URLs THEN FLURRY_E_REGISTRY_URL without the password', () => {
    for (const bad of [
      'etcd://',
      'etcd:///prefix',
      'redis://127.0.0.1:2379/x',
      'etcd://u:hunter2@h:99999/x',
      'etcd://u:hunter2@h:1/bad prefix',
      'etcd://u:hunter2@h:1/a/../b',
      'etcd://onlyuser@h:1/x',
      'etcd://u:hunter2@h:1,:2/x',
      'etcd://u:hun@ter2@h:1,/x',
    ]) {
      try {
        parseEtcdUrl(bad);
        assert.fail(`accepted ${bad}`);
      } catch (e) {
        assert.ok(e instanceof FlurryError);
        assert.equal(e.code, 'FLURRY_E_REGISTRY_URL', bad);
        assert.ok(!e.message.includes('hunter2') && !e.message.includes('ter2'), e.message);
      }
    }
  });
});

describe('etcd driver against a real etcd', () => {
  let engine: RunningEngine;
  let raw: Etcd3;
  const drivers: RegistryDriver[] = [];
  const open = async (o: Partial<typeof opts> = {}): Promise<RegistryDriver> => {
    const d = await createEtcdDriver(engine.url, { ...opts, ...o });
    drivers.push(d);
    return d;
  };
  /** Simulates the expiry of a claim's lease (what etcd does after the TTL) at once. */
  const expire = async (token: string): Promise<void> => {
    await raw.leaseClient.leaseRevoke({ ID: token.split('@')[0] });
  };
  const hwRecord = async (
    ns: string,
    slot: number,
  ): Promise<{ highWaterMs: number; releasedCleanly: boolean; lease: string } | undefined> => {
    const r = await raw.kv.range({ key: Buffer.from(`/flurry/${ns}/hw/${slot}`) });
    const kv = r.kvs[0];
    return kv
      ? { ...(JSON.parse(kv.value.toString()) as { highWaterMs: number; releasedCleanly: boolean }), lease: kv.lease }
      : undefined;
  };

  before(async () => {
    engine = await startEngine('etcd');
    raw = new Etcd3({ hosts: `http://${engine.address}` });
  });
  after(async () => {
    for (const d of drivers) await d.close();
    raw?.close();
    await engine?.stop();
  });

  it('GIVEN a free namespace THEN claim, renew and release work and the clean mark is handed to the next holder', async () => {
    const d = await open();
    assert.equal(d.kind, 'etcd');
    const c = await d.claim({ namespace: 'basic', slots: 8, ttlMs: 5000, holder: holder('a'), preferredSlot: 5 });
    assert.equal(c.slot, 5);
    assert.equal(c.highWaterMs, 0);
    assert.equal(c.releasedCleanly, true);
    const slotKey = await raw.kv.range({ key: Buffer.from('/flurry/basic/slots/5') });
    assert.equal(slotKey.kvs.length, 1);
    assert.notEqual(slotKey.kvs[0].lease, '0', 'the slot key is attached to a lease');
    await d.renew(c, { ttlMs: 5000, highWaterMs: 1_000 });
    await d.release(c, { highWaterMs: 1_234 });
    assert.equal((await raw.kv.range({ key: Buffer.from('/flurry/basic/slots/5') })).kvs.length, 0, 'slot key deleted');
    const rec = await hwRecord('basic', 5);
    assert.deepEqual([rec?.highWaterMs, rec?.releasedCleanly, rec?.lease], [1_234, true, '0']);
    const c2 = await d.claim({ namespace: 'basic', slots: 8, ttlMs: 5000, holder: holder('b'), preferredSlot: 5 });
    assert.deepEqual([c2.slot, c2.highWaterMs, c2.releasedCleanly], [5, 1_234, true]);
    await d.release(c2, { highWaterMs: 1_300 });
    await d.release(c2, { highWaterMs: 1_300 }); // a second release is a no-op
  });

  it('GIVEN 16 concurrent claims on 16 slots THEN 16 distinct slots; a 17th gets EXHAUSTED with held count and holders', async () => {
    const ds = await Promise.all([open(), open(), open(), open()]);
    const claims = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        ds[i % 4].claim({ namespace: 'race', slots: 16, ttlMs: 5000, holder: holder(`r${i}`) }),
      ),
    );
    assert.deepEqual(new Set(claims.map((c) => c.slot)).size, 16);
    const leasesBefore = (await raw.leaseClient.leaseLeases()).leases.length;
    const err = await rejectsWith(
      ds[0].claim({ namespace: 'race', slots: 16, ttlMs: 5000, holder: holder('late') }),
      'FLURRY_E_REGISTRY_EXHAUSTED',
    );
    assert.equal(
      (await raw.leaseClient.leaseLeases()).leases.length,
      leasesBefore,
      'the failed claim revoked its lease',
    );
    assert.equal(err.details.held, 16);
    const listed = err.details.holders as Array<{ slot: number; id: string }>;
    assert.equal(listed.length, 16);
    assert.deepEqual(
      new Set(listed.map((h) => h.id)),
      new Set(Array.from({ length: 16 }, (_, i) => holder(`r${i}`).id)),
    );
    assert.match(err.message, /all 16 node IDs of "race"/);
    // A release frees a slot for the loser.
    await ds[1].release(claims[1], { highWaterMs: 0 });
    const again = await ds[0].claim({ namespace: 'race', slots: 16, ttlMs: 5000, holder: holder('late') });
    assert.equal(again.slot, claims[1].slot);
  });

  it('GIVEN a lease that expires THEN renew reports LEASE_LOST and the next holder gets an unclean mark of at least the last report', async () => {
    const d = await open();
    const c = await d.claim({ namespace: 'expiry', slots: 2, ttlMs: 5000, holder: holder('x'), preferredSlot: 0 });
    const future = Date.now() + 60_000;
    await d.renew(c, { ttlMs: 5000, highWaterMs: future });
    await expire(c.token);
    await rejectsWith(d.renew(c, { ttlMs: 5000, highWaterMs: future }), 'FLURRY_E_LEASE_LOST');
    const c2 = await d.claim({ namespace: 'expiry', slots: 2, ttlMs: 5000, holder: holder('y'), preferredSlot: 0 });
    assert.equal(c2.slot, 0);
    assert.equal(c2.highWaterMs, future);
    assert.equal(c2.releasedCleanly, false);
    // The lost holder's late release must not overwrite the new holder's record.
    await d.release(c, { highWaterMs: 1 });
    assert.equal((await hwRecord('expiry', 0))?.highWaterMs, future);
  });

  it('GIVEN a holder that took an unclean slot and releases without covering the old window THEN the record stays unclean', async () => {
    const d = await open();
    const a = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('a') });
    const mark = Date.now() + 100_000;
    await d.renew(a, { ttlMs: 3000, highWaterMs: mark });
    await expire(a.token);
    const b = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('b') });
    assert.deepEqual([b.highWaterMs, b.releasedCleanly], [mark, false]);
    await d.release(b, { highWaterMs: 0 }); // issued nothing
    const c = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('c') });
    assert.deepEqual([c.highWaterMs, c.releasedCleanly], [mark, false], "the expired holder's window is not forgotten");
    await d.release(c, { highWaterMs: mark + 3000 + 1 }); // issued past mark + ttl
    const e = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('e') });
    assert.deepEqual([e.highWaterMs, e.releasedCleanly], [mark + 3001, true]);
    await d.release(e, { highWaterMs: mark + 3001 });
  });

  it('GIVEN a holder that dies before its first renewal THEN the next holder still gets its claim-time wall clock as an unclean floor', async () => {
    const wall = Date.UTC(2031, 0, 1);
    const early = await open({ clock: new ManualClock(wall) });
    const a = await early.claim({ namespace: 'early-death', slots: 1, ttlMs: 3000, holder: holder('a') });
    await expire(a.token);
    const d = await open();
    const b = await d.claim({ namespace: 'early-death', slots: 1, ttlMs: 3000, holder: holder('b') });
    assert.deepEqual([b.highWaterMs, b.releasedCleanly], [wall, false]);
    await d.release(b, { highWaterMs: wall + 5000 });
  });

  it('GIVEN a corrupt high-water record THEN claim fails with FLURRY_E_REGISTRY_CORRUPT and holds nothing', async () => {
    const d = await open();
    await raw.put('/flurry/corrupt/hw/0').value('not json');
    const err = await rejectsWith(
      d.claim({ namespace: 'corrupt', slots: 1, ttlMs: 3000, holder: holder('c') }),
      'FLURRY_E_REGISTRY_CORRUPT',
    );
    assert.match(err.message, /\/flurry\/corrupt\/hw\/0/);
    assert.equal(
      (await raw.kv.range({ key: Buffer.from('/flurry/corrupt/slots/0') })).kvs.length,
      0,
      'the slot stays free',
    );
    await raw
      .put('/flurry/corrupt/hw/0')
      .value(JSON.stringify({ v: 1, highWaterMs: 42, releasedCleanly: true, ttlMs: 0 }));
    const c = await d.claim({ namespace: 'corrupt', slots: 1, ttlMs: 3000, holder: holder('c') });
    assert.deepEqual([c.highWaterMs, c.releasedCleanly], [42, true]);
    await d.release(c, { highWaterMs: 42 });
  });

  it('GIVEN a claim whose slot key was taken over or forged THEN renew is LEASE_LOST (token mismatch)', async () => {
    const d = await open();
    const other = await open();
    const c = await d.claim({ namespace: 'mismatch', slots: 4, ttlMs: 5000, holder: holder('m') });
    await rejectsWith(other.renew(c, { ttlMs: 5000, highWaterMs: 1 }), 'FLURRY_E_LEASE_LOST');
    await rejectsWith(d.renew({ ...c, token: `1@mismatch` }, { ttlMs: 5000, highWaterMs: 1 }), 'FLURRY_E_LEASE_LOST');
    // Someone else's key in our slot (e.g. an operator reassigning it): our lease lives on but the key is not ours.
    const lease = raw.lease(10, { autoKeepAlive: false });
    await raw.delete().key(`/flurry/mismatch/slots/${c.slot}`);
    await lease.put(`/flurry/mismatch/slots/${c.slot}`).value('{}');
    await rejectsWith(d.renew(c, { ttlMs: 5000, highWaterMs: 1 }), 'FLURRY_E_LEASE_LOST');
    await lease.revoke();
  });

  it('GIVEN a renew asking for a longer TTL than etcd granted THEN FLURRY_E_REGISTRY_OPTION; GIVEN bad requests THEN OPTION', async () => {
    const d = await open();
    const c = await d.claim({ namespace: 'ttl', slots: 1, ttlMs: 2500, holder: holder('t') });
    await rejectsWith(d.renew(c, { ttlMs: 60_000, highWaterMs: 1 }), 'FLURRY_E_REGISTRY_OPTION');
    await d.renew(c, { ttlMs: 2500, highWaterMs: 1 });
    await d.release(c, { highWaterMs: 1 });
    await rejectsWith(
      d.claim({ namespace: '../x', slots: 1, ttlMs: 1000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    await rejectsWith(
      d.claim({ namespace: 'ok', slots: 0, ttlMs: 1000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    await rejectsWith(
      d.claim({ namespace: 'ok', slots: 1, ttlMs: 0, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
  });

  it('GIVEN a 1 s TTL and no renewal THEN etcd frees the slot after the TTL and not before', async () => {
    const d = await open();
    const a = await d.claim({ namespace: 'real-expiry', slots: 2, ttlMs: 1000, holder: holder('a'), preferredSlot: 1 });
    const t0 = Date.now();
    const b = await d.claim({ namespace: 'real-expiry', slots: 2, ttlMs: 1000, holder: holder('b'), preferredSlot: 1 });
    assert.equal(b.slot, 0, 'the held slot is not handed out');
    await d.release(b, { highWaterMs: 0 });
    let freedAfter = -1;
    for (let i = 0; i < 100 && Date.now() - t0 < 8000; i++) {
      const probe = await d.claim({
        namespace: 'real-expiry',
        slots: 2,
        ttlMs: 1000,
        holder: holder('p'),
        preferredSlot: 1,
      });
      await d.release(probe, { highWaterMs: 0 });
      if (probe.slot === 1) {
        freedAfter = Date.now() - t0;
        break;
      }
      await sleep(100);
    }
    assert.ok(freedAfter >= 1000, `slot freed after ${freedAfter} ms`);
    await rejectsWith(d.renew(a, { ttlMs: 1000, highWaterMs: 0 }), 'FLURRY_E_LEASE_LOST');
  });

  it('GIVEN the engine is killed THEN renew fails with UNREACHABLE; GIVEN it restarts THEN renew works again', async () => {
    const d = await open({ connectTimeoutMs: 1500 });
    const c = await d.claim({ namespace: 'outage', slots: 1, ttlMs: 20_000, holder: holder('o') });
    await engine.kill();
    const t0 = Date.now();
    const down = await rejectsWith(d.renew(c, { ttlMs: 20_000, highWaterMs: 5 }), 'FLURRY_E_REGISTRY_UNREACHABLE');
    assert.ok(Date.now() - t0 < 3000, 'fails within the timeout');
    assert.match(down.message, /The lease manager retries at the next renewal/, 'a renewal is retried, and says so');
    await engine.restart();
    assert.ok(
      await retryUntilOk(() => d.renew(c, { ttlMs: 20_000, highWaterMs: 6 }), 30, 200, 'FLURRY_E_REGISTRY_UNREACHABLE'),
      'renew recovers after the restart',
    );
    await d.release(c, { highWaterMs: 7 });
    assert.equal((await hwRecord('outage', c.slot))?.highWaterMs, 7);
  });

  it('GIVEN a paused engine THEN renew fails with UNREACHABLE within the timeout', async () => {
    const d = await open({ connectTimeoutMs: 800 });
    const c = await d.claim({ namespace: 'stall', slots: 1, ttlMs: 20_000, holder: holder('s') });
    engine.pause();
    try {
      const t0 = Date.now();
      await rejectsWith(d.renew(c, { ttlMs: 20_000, highWaterMs: 5 }), 'FLURRY_E_REGISTRY_UNREACHABLE');
      assert.ok(Date.now() - t0 < 4000, `took ${Date.now() - t0} ms`);
    } finally {
      engine.resume();
    }
    await d.release(c, { highWaterMs: 5 });
  });

  it('GIVEN a multi-host URL whose first host is dead THEN every call fails over to the live one', async () => {
    const dead = await freePort();
    const url = `etcd://127.0.0.1:${dead},${engine.address}/flurry`;
    const d = await createEtcdDriver(url, opts);
    drivers.push(d);
    assert.equal(d.url, url);
    for (let i = 0; i < 6; i++) {
      const c = await d.claim({ namespace: 'multi', slots: 4, ttlMs: 5000, holder: holder(`mh${i}`) });
      await d.renew(c, { ttlMs: 5000, highWaterMs: i });
      await d.release(c, { highWaterMs: i });
    }
  });

  it('GIVEN close() THEN it is idempotent and later calls are FLURRY_E_REGISTRY_CLOSED', async () => {
    const d = await createEtcdDriver(engine.url, opts);
    await d.close();
    await d.close();
    await rejectsWith(
      d.claim({ namespace: 'closed', slots: 1, ttlMs: 1000, holder: holder('c') }),
      'FLURRY_E_REGISTRY_CLOSED',
    );
  });
});

describe('etcd driver connection errors', () => {
  it('GIVEN a port where nothing listens THEN FLURRY_E_REGISTRY_UNREACHABLE naming the URL without the password', async () => {
    const port = await freePort();
    const t0 = Date.now();
    const err = await rejectsWith(
      createEtcdDriver(`etcd://root:hunter2@127.0.0.1:${port}/flurry`, { ...opts, connectTimeoutMs: 1000 }),
      'FLURRY_E_REGISTRY_UNREACHABLE',
    );
    assert.ok(Date.now() - t0 < 3000);
    assert.ok(err.message.includes(`etcd://root:***@127.0.0.1:${port}/flurry`), err.message);
    assert.ok(
      err.message.endsWith(`Check that etcd runs at http://127.0.0.1:${port} and is reachable from this host.`),
      `start-up: nothing retries, so no promise of a retry: ${err.message}`,
    );
    assert.doesNotMatch(err.message, /retried|\.\.|:\./);
    assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes('hunter2'));
  });

  it('GIVEN etcd with authentication on THEN a wrong password is FLURRY_E_REGISTRY_AUTH and the right one works', async () => {
    const engine = await startEngine('etcd');
    const admin = new Etcd3({ hosts: `http://${engine.address}` });
    try {
      await admin.role('root').create();
      await admin.user('root').create('right-pw');
      await admin.user('root').addRole('root');
      await admin.auth.authEnable({});
      const bad = engine.url.replace('etcd://', 'etcd://root:wrong-pw@');
      const err = await rejectsWith(createEtcdDriver(bad, opts), 'FLURRY_E_REGISTRY_AUTH');
      assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes('wrong-pw'), err.message);
      const d = await createEtcdDriver(engine.url.replace('etcd://', 'etcd://root:right-pw@'), opts);
      try {
        const c = await d.claim({ namespace: 'auth', slots: 1, ttlMs: 2000, holder: holder('a') });
        await d.renew(c, { ttlMs: 2000, highWaterMs: 1 });
        await d.release(c, { highWaterMs: 1 });
      } finally {
        await d.close();
      }
    } finally {
      admin.close();
      await engine.stop();
    }
  });
});
