import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { FlurryError, ManualClock, systemClock } from '@flurry/core';
import { createRedisDriver } from './redis.js';
import { parseRedisUrl } from '../url.js';
import { openRegistry } from '../open-registry.js';
import type { HolderInfo, RegistryDriver } from '../driver.js';
import { freePort, startEngine, type RunningEngine } from '../testing/harness.js';
import { holder, rejectsWith, retryUntilOk, sleep } from './test-kit.js';

const opts = { clock: systemClock, connectTimeoutMs: 2000 };

describe('Redis URL parsing', () => {
  it('GIVEN URLs with a password, a user, a db and a prefix THEN they are parsed and redacted', () => {
    const a = parseRedisUrl(new URL('redis://:s%40cret@127.0.0.1:6380/2'));
    assert.deepEqual(
      [a.host, a.port, a.db, a.username, a.password, a.tls, a.prefix],
      ['127.0.0.1', 6380, 2, undefined, 's@cret', false, 'flurry'],
    );
    assert.equal(a.redacted, 'redis://:***@127.0.0.1:6380/2');
    const b = parseRedisUrl('rediss://app:pw@cache.local?prefix=ids');
    assert.deepEqual([b.host, b.port, b.db, b.username, b.tls, b.prefix], ['cache.local', 6379, 0, 'app', true, 'ids']);
    assert.equal(b.redacted, 'rediss://app:***@cache.local:6379/0?prefix=ids');
    assert.equal(parseRedisUrl('redis://[::1]:7000/1').host, '::1');
    assert.equal(parseRedisUrl('redis://h:1/0').allowVolatile, false);
    assert.equal(parseRedisUrl('redis://h:1/0?prefix=ids&allowVolatile=true').allowVolatile, true);
    assert.equal(parseRedisUrl('redis://h:1/0?allowVolatile=false').allowVolatile, false);
  });

  it('GIVEN malformed URLs THEN FLURRY_E_REGISTRY_URL without the password', () => {
    for (const bad of [
      'redis://',
      'redis://:hunter2@h:70000/0',
      'redis://:hunter2@h:1/zero',
      'redis://:hunter2@h:1/0?ttl=5',
      'redis://:hunter2@h:1/0?prefix=a:b',
      'redis://user@h:1/0',
      'etcd://:hunter2@h:1/0',
      'redis://:hun@ter2@h:1,h:2/0',
      'redis://:hunter2@h:1/0?allowVolatile=yes',
      'redis://:hunter2@h:1/0?allowvolatile=true',
    ]) {
      try {
        parseRedisUrl(bad);
        assert.fail(`accepted ${bad}`);
      } catch (e) {
        assert.ok(e instanceof FlurryError);
        assert.equal(e.code, 'FLURRY_E_REGISTRY_URL', bad);
        assert.ok(!e.message.includes('hunter2') && !e.message.includes('ter2'), e.message);
      }
    }
  });
});

describe('Redis driver against a real Redis', () => {
  let engine: RunningEngine;
  let raw: Redis;
  const drivers: RegistryDriver[] = [];
  const open = async (o: Partial<typeof opts> = {}): Promise<RegistryDriver> => {
    const d = await createRedisDriver(engine.url, { ...opts, ...o });
    drivers.push(d);
    return d;
  };
  /** Simulates the expiry of a claim (what Redis does after the TTL) at once. */
  const expire = async (ns: string, slot: number): Promise<void> => {
    await raw.del(`flurry:{${ns}}:slot:${slot}`, `flurry:{${ns}}:holder:${slot}`);
  };
  const hwRecord = async (
    ns: string,
    slot: number,
  ): Promise<{ highWaterMs: number; releasedCleanly: boolean; pttl: number } | undefined> => {
    const v = await raw.get(`flurry:{${ns}}:hw:${slot}`);
    return v === null
      ? undefined
      : {
          ...(JSON.parse(v) as { highWaterMs: number; releasedCleanly: boolean }),
          pttl: await raw.pttl(`flurry:{${ns}}:hw:${slot}`),
        };
  };

  before(async () => {
    engine = await startEngine('redis');
    raw = new Redis({ host: '127.0.0.1', port: engine.port, maxRetriesPerRequest: 1 });
  });
  after(async () => {
    for (const d of drivers) await d.close();
    raw?.disconnect();
    await engine?.stop();
  });

  it('GIVEN a database the server does not have (/16, /17 on a 16-database server) THEN FLURRY_E_REGISTRY_URL at open naming it and the range, nothing written to db 0', async () => {
    const before = await raw.dbsize();
    for (const db of [16, 17]) {
      const url = engine.url.replace(/\/0$/, `/${db}`);
      const e = await rejectsWith(createRedisDriver(url, opts), 'FLURRY_E_REGISTRY_URL');
      assert.match(
        e.message,
        new RegExp(
          `names database ${db}, which the server at 127\\.0\\.0\\.1:${engine.port} does not have \\(it has 16 \\(0 to 15\\)\\)`,
        ),
      );
      assert.equal(e.details.part, `/${db}`);
      const viaOpen = await rejectsWith(openRegistry(url, { connectTimeoutMs: 2000 }), 'FLURRY_E_REGISTRY_URL');
      assert.match(viaOpen.message, new RegExp(`database ${db}`));
    }
    assert.equal(await raw.dbsize(), before, 'nothing was written to database 0');
    const last = await open();
    await last.close();
    const d15 = await createRedisDriver(engine.url.replace(/\/0$/, '/15'), opts);
    drivers.push(d15);
    const c = await d15.claim({ namespace: 'db15', slots: 2, ttlMs: 5000, holder: holder('a') });
    assert.equal(await raw.exists(`flurry:{db15}:slot:${c.slot}`), 0, 'database 15 was used, not 0');
    await d15.release(c, { highWaterMs: 1 });
  });

  it('GIVEN a Redis that can lose acknowledged writes (appendonly no, or appendfsync everysec) THEN open refuses with FLURRY_E_REGISTRY_VOLATILE, as the segment store does, unless the URL says allowVolatile=true (issue 24)', async () => {
    const warnings: string[] = [];
    const logger = { warn: (_o: object, m: string) => warnings.push(m), info: () => undefined };
    try {
      for (const [setting, value] of [
        ['appendfsync', 'everysec'],
        ['appendonly', 'no'],
      ] as const) {
        await raw.config('SET', setting, value);
        // (Should one open, it is closed at the end instead of keeping the test process alive.)
        const kept = <T extends RegistryDriver>(d: T): T => (drivers.push(d), d);
        const e = await rejectsWith(createRedisDriver(engine.url, opts).then(kept), 'FLURRY_E_REGISTRY_VOLATILE');
        assert.match(e.message, new RegExp(`runs with appendonly \\w+ and appendfsync \\w+`));
        assert.match(e.message, new RegExp(`${setting} ${value}`));
        assert.match(e.message, /Configure appendonly yes and appendfsync always/);
        assert.match(e.message, /allowVolatile=true/);
        assert.equal(e.details[setting], value);
        await rejectsWith(
          openRegistry(engine.url, { connectTimeoutMs: 2000 }).then(async (r) => (await r.close(), r)),
          'FLURRY_E_REGISTRY_VOLATILE',
        );
        const d = await createRedisDriver(`${engine.url}?allowVolatile=true`, { ...opts, logger });
        drivers.push(d);
        assert.match(warnings.at(-1) ?? '', /accepted because the URL says allowVolatile=true/);
        const c = await d.claim({ namespace: 'volatile', slots: 2, ttlMs: 5000, holder: holder('v') });
        await d.release(c, { highWaterMs: 1 });
        await raw.config('SET', 'appendonly', 'yes');
        await raw.config('SET', 'appendfsync', 'always');
      }
      // Durable again: accepted without a word.
      const n = warnings.length;
      drivers.push(await createRedisDriver(engine.url, { ...opts, logger }));
      assert.equal(warnings.length, n);
    } finally {
      await raw.config('SET', 'appendonly', 'yes');
      await raw.config('SET', 'appendfsync', 'always');
    }
  });

  it('GIVEN a free namespace THEN claim, renew and release work and the clean mark is handed to the next holder', async () => {
    const d = await open();
    assert.equal(d.kind, 'redis');
    assert.equal(d.url, `redis://127.0.0.1:${engine.port}/0`);
    const c = await d.claim({ namespace: 'basic', slots: 8, ttlMs: 5000, holder: holder('a'), preferredSlot: 5 });
    assert.deepEqual([c.slot, c.highWaterMs, c.releasedCleanly], [5, 0, true]);
    assert.equal(await raw.get('flurry:{basic}:slot:5'), c.token);
    const pttl = await raw.pttl('flurry:{basic}:slot:5');
    assert.ok(pttl > 4000 && pttl <= 5000, `pttl ${pttl}`);
    assert.equal((JSON.parse((await raw.get('flurry:{basic}:holder:5')) ?? '{}') as HolderInfo).id, holder('a').id);
    await raw.pexpire('flurry:{basic}:slot:5', 100);
    await d.renew(c, { ttlMs: 5000, highWaterMs: 1_000 });
    assert.ok((await raw.pttl('flurry:{basic}:slot:5')) > 4000, 'renew extends the TTL');
    await d.release(c, { highWaterMs: 1_234 });
    assert.equal(await raw.exists('flurry:{basic}:slot:5', 'flurry:{basic}:holder:5'), 0);
    const rec = await hwRecord('basic', 5);
    assert.deepEqual(
      [rec?.highWaterMs, rec?.releasedCleanly, rec?.pttl],
      [1_234, true, -1],
      'the mark persists without a TTL',
    );
    const c2 = await d.claim({ namespace: 'basic', slots: 8, ttlMs: 5000, holder: holder('b'), preferredSlot: 5 });
    assert.deepEqual([c2.slot, c2.highWaterMs, c2.releasedCleanly], [5, 1_234, true]);
    await d.release(c2, { highWaterMs: 1_300 });
    await d.release(c2, { highWaterMs: 1_300 });
  });

  it('GIVEN 16 concurrent claims on 16 slots THEN 16 distinct slots; a 17th gets EXHAUSTED with held count and holders', async () => {
    const ds = await Promise.all([open(), open(), open(), open()]);
    const claims = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        ds[i % 4].claim({ namespace: 'race', slots: 16, ttlMs: 5000, holder: holder(`r${i}`) }),
      ),
    );
    assert.equal(new Set(claims.map((c) => c.slot)).size, 16);
    const err = await rejectsWith(
      ds[0].claim({ namespace: 'race', slots: 16, ttlMs: 5000, holder: holder('late') }),
      'FLURRY_E_REGISTRY_EXHAUSTED',
    );
    assert.equal(err.details.held, 16);
    const listed = err.details.holders as Array<{ slot: number; id: string }>;
    assert.deepEqual(
      new Set(listed.map((h) => h.id)),
      new Set(Array.from({ length: 16 }, (_, i) => holder(`r${i}`).id)),
    );
    assert.match(err.message, /all 16 node IDs of "race"/);
    await ds[1].release(claims[1], { highWaterMs: 0 });
    const again = await ds[0].claim({ namespace: 'race', slots: 16, ttlMs: 5000, holder: holder('late') });
    assert.equal(again.slot, claims[1].slot);
  });

  it('GIVEN more slots than one MGET chunk and all but one held THEN the scan finds the free one', async () => {
    const d = await open();
    const slots = 1200;
    const free = 1111;
    const pipe = raw.pipeline();
    for (let s = 0; s < slots; s++) if (s !== free) pipe.set(`flurry:{wide}:slot:${s}`, 'someone', 'PX', 10_000);
    await pipe.exec();
    const c = await d.claim({ namespace: 'wide', slots, ttlMs: 5000, holder: holder('w') });
    assert.equal(c.slot, free);
    const err = await rejectsWith(
      d.claim({ namespace: 'wide', slots, ttlMs: 5000, holder: holder('w2') }),
      'FLURRY_E_REGISTRY_EXHAUSTED',
    );
    assert.equal(err.details.held, slots);
    assert.equal((err.details.holders as unknown[]).length, 100, 'the list is capped');
  });

  it('GIVEN a lease that expires THEN renew reports LEASE_LOST and the next holder gets an unclean mark of at least the last report', async () => {
    const d = await open();
    const c = await d.claim({ namespace: 'expiry', slots: 2, ttlMs: 5000, holder: holder('x'), preferredSlot: 0 });
    const future = Date.now() + 60_000;
    await d.renew(c, { ttlMs: 5000, highWaterMs: future });
    await expire('expiry', 0);
    await rejectsWith(d.renew(c, { ttlMs: 5000, highWaterMs: future }), 'FLURRY_E_LEASE_LOST');
    const c2 = await d.claim({ namespace: 'expiry', slots: 2, ttlMs: 5000, holder: holder('y'), preferredSlot: 0 });
    assert.deepEqual([c2.slot, c2.highWaterMs, c2.releasedCleanly], [0, future, false]);
    await d.release(c, { highWaterMs: 1 }); // the lost holder's late release changes nothing
    assert.equal((await hwRecord('expiry', 0))?.highWaterMs, future);
    assert.equal(await raw.get('flurry:{expiry}:slot:0'), c2.token);
  });

  it('GIVEN a holder that took an unclean slot and releases without covering the old window THEN the record stays unclean', async () => {
    const d = await open();
    const a = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('a') });
    const mark = Date.now() + 100_000;
    await d.renew(a, { ttlMs: 3000, highWaterMs: mark });
    await expire('inherit', 0);
    const b = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('b') });
    assert.deepEqual([b.highWaterMs, b.releasedCleanly], [mark, false]);
    await d.release(b, { highWaterMs: 0 });
    const c = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('c') });
    assert.deepEqual([c.highWaterMs, c.releasedCleanly], [mark, false]);
    await d.release(c, { highWaterMs: mark + 3001 });
    const e = await d.claim({ namespace: 'inherit', slots: 1, ttlMs: 3000, holder: holder('e') });
    assert.deepEqual([e.highWaterMs, e.releasedCleanly], [mark + 3001, true]);
    await d.release(e, { highWaterMs: mark + 3001 });
  });

  it('GIVEN a holder that dies before its first renewal THEN the next holder gets its claim-time wall clock as an unclean floor', async () => {
    const wall = Date.UTC(2031, 0, 1);
    const early = await open({ clock: new ManualClock(wall) });
    await early.claim({ namespace: 'early-death', slots: 1, ttlMs: 3000, holder: holder('a') });
    await expire('early-death', 0);
    const d = await open();
    const b = await d.claim({ namespace: 'early-death', slots: 1, ttlMs: 3000, holder: holder('b') });
    assert.deepEqual([b.highWaterMs, b.releasedCleanly], [wall, false]);
    await d.release(b, { highWaterMs: wall + 5000 });
  });

  it('GIVEN a corrupt high-water record THEN claim fails with FLURRY_E_REGISTRY_CORRUPT and holds nothing', async () => {
    const d = await open();
    await raw.set('flurry:{corrupt}:hw:0', '{"highWaterMs":"soon"}');
    const err = await rejectsWith(
      d.claim({ namespace: 'corrupt', slots: 1, ttlMs: 3000, holder: holder('c') }),
      'FLURRY_E_REGISTRY_CORRUPT',
    );
    assert.match(err.message, /flurry:\{corrupt\}:hw:0/);
    assert.equal(await raw.exists('flurry:{corrupt}:slot:0', 'flurry:{corrupt}:holder:0'), 0, 'the slot stays free');
    await raw.set('flurry:{corrupt}:hw:0', JSON.stringify({ v: 1, highWaterMs: 42, releasedCleanly: true, ttlMs: 0 }));
    const c = await d.claim({ namespace: 'corrupt', slots: 1, ttlMs: 3000, holder: holder('c') });
    assert.deepEqual([c.highWaterMs, c.releasedCleanly], [42, true]);
    await d.release(c, { highWaterMs: 42 });
  });

  it('GIVEN a claim whose token no longer matches THEN renew is LEASE_LOST and release leaves the other holder alone', async () => {
    const d = await open();
    const other = await open();
    const c = await d.claim({ namespace: 'mismatch', slots: 4, ttlMs: 5000, holder: holder('m') });
    await rejectsWith(other.renew(c, { ttlMs: 5000, highWaterMs: 1 }), 'FLURRY_E_LEASE_LOST');
    await rejectsWith(
      d.renew({ ...c, token: 'forged@mismatch' }, { ttlMs: 5000, highWaterMs: 1 }),
      'FLURRY_E_LEASE_LOST',
    );
    const key = `flurry:{mismatch}:slot:${c.slot}`;
    await raw.set(key, 'someone-else', 'PX', 5000);
    await rejectsWith(d.renew(c, { ttlMs: 5000, highWaterMs: 1 }), 'FLURRY_E_LEASE_LOST');
    await d.release(c, { highWaterMs: 1 });
    assert.equal(await raw.get(key), 'someone-else');
  });

  it('GIVEN a short TTL and no renewal THEN Redis frees the slot after the TTL and not before', async () => {
    const d = await open();
    const a = await d.claim({ namespace: 'real-expiry', slots: 2, ttlMs: 600, holder: holder('a'), preferredSlot: 1 });
    const t0 = Date.now();
    const b = await d.claim({ namespace: 'real-expiry', slots: 2, ttlMs: 600, holder: holder('b'), preferredSlot: 1 });
    assert.equal(b.slot, 0);
    await d.release(b, { highWaterMs: 0 });
    let freedAfter = -1;
    for (let i = 0; i < 100 && Date.now() - t0 < 5000; i++) {
      const probe = await d.claim({
        namespace: 'real-expiry',
        slots: 2,
        ttlMs: 600,
        holder: holder('p'),
        preferredSlot: 1,
      });
      await d.release(probe, { highWaterMs: 0 });
      if (probe.slot === 1) {
        freedAfter = Date.now() - t0;
        break;
      }
      await sleep(50);
    }
    assert.ok(freedAfter >= 550, `slot freed after ${freedAfter} ms`);
    await rejectsWith(d.renew(a, { ttlMs: 600, highWaterMs: 0 }), 'FLURRY_E_LEASE_LOST');
  });

  it('GIVEN bad requests THEN FLURRY_E_REGISTRY_OPTION', async () => {
    const d = await open();
    await rejectsWith(
      d.claim({ namespace: '../x', slots: 1, ttlMs: 1000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    await rejectsWith(
      d.claim({ namespace: 'a}b', slots: 1, ttlMs: 1000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    await rejectsWith(
      d.claim({ namespace: 'ok', slots: 1.5, ttlMs: 1000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    await rejectsWith(
      d.claim({ namespace: 'ok', slots: 1, ttlMs: -1, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
  });

  it('GIVEN the engine is killed THEN renew fails fast with UNREACHABLE; GIVEN it restarts THEN renew works again and the mark persisted (appendfsync always: at once)', async () => {
    const d = await open();
    const c = await d.claim({ namespace: 'outage', slots: 1, ttlMs: 20_000, holder: holder('o') });
    await d.renew(c, { ttlMs: 20_000, highWaterMs: 5 });
    await engine.kill();
    const t0 = Date.now();
    const down = await rejectsWith(d.renew(c, { ttlMs: 20_000, highWaterMs: 6 }), 'FLURRY_E_REGISTRY_UNREACHABLE');
    assert.ok(Date.now() - t0 < 2500, `took ${Date.now() - t0} ms`);
    assert.match(down.message, /The lease manager retries at the next renewal/, 'a renewal is retried, and says so');
    assert.doesNotMatch(down.message, /\.\./);
    await engine.restart();
    assert.ok(
      await retryUntilOk(() => d.renew(c, { ttlMs: 20_000, highWaterMs: 7 }), 40, 100, 'FLURRY_E_REGISTRY_UNREACHABLE'),
      'renew recovers after the restart',
    );
    await d.release(c, { highWaterMs: 8 });
    assert.equal((await hwRecord('outage', c.slot))?.highWaterMs, 8);
  });

  it('GIVEN a paused engine THEN renew fails with UNREACHABLE within the command timeout', async () => {
    const d = await open({ connectTimeoutMs: 500 });
    const c = await d.claim({ namespace: 'stall', slots: 1, ttlMs: 20_000, holder: holder('s') });
    engine.pause();
    try {
      const t0 = Date.now();
      await rejectsWith(d.renew(c, { ttlMs: 20_000, highWaterMs: 5 }), 'FLURRY_E_REGISTRY_UNREACHABLE');
      assert.ok(Date.now() - t0 < 3000, `took ${Date.now() - t0} ms`);
    } finally {
      engine.resume();
    }
    assert.ok(
      await retryUntilOk(() => d.renew(c, { ttlMs: 20_000, highWaterMs: 6 }), 20, 100),
      'renew works again once the engine resumes',
    );
    await d.release(c, { highWaterMs: 6 });
  });

  it('GIVEN close() THEN it is idempotent and later calls are FLURRY_E_REGISTRY_CLOSED', async () => {
    const d = await createRedisDriver(engine.url, opts);
    await d.close();
    await d.close();
    await rejectsWith(
      d.claim({ namespace: 'closed', slots: 1, ttlMs: 1000, holder: holder('c') }),
      'FLURRY_E_REGISTRY_CLOSED',
    );
  });

  it('GIVEN a password is required THEN a wrong or missing password is FLURRY_E_REGISTRY_AUTH and the right one works', async () => {
    await raw.config('SET', 'requirepass', 'right-pw');
    try {
      await raw.auth('right-pw');
      const base = engine.url.replace('redis://', '');
      const err = await rejectsWith(createRedisDriver(`redis://:wrong-pw@${base}`, opts), 'FLURRY_E_REGISTRY_AUTH');
      assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes('wrong-pw'), err.message);
      assert.ok(err.message.includes(`redis://:***@${base}`), err.message);
      await rejectsWith(createRedisDriver(engine.url, opts), 'FLURRY_E_REGISTRY_AUTH');
      const d = await createRedisDriver(`redis://:right-pw@${base}`, opts);
      try {
        const c = await d.claim({ namespace: 'auth', slots: 1, ttlMs: 2000, holder: holder('a') });
        await d.release(c, { highWaterMs: 1 });
      } finally {
        await d.close();
      }
    } finally {
      await raw.config('SET', 'requirepass', '');
    }
  });
});

describe('Redis driver connection errors', () => {
  it('GIVEN a port where nothing listens THEN FLURRY_E_REGISTRY_UNREACHABLE naming the URL without the password', async () => {
    const port = await freePort();
    const t0 = Date.now();
    const err = await rejectsWith(
      createRedisDriver(`redis://:hunter2@127.0.0.1:${port}/0`, { ...opts, connectTimeoutMs: 1000 }),
      'FLURRY_E_REGISTRY_UNREACHABLE',
    );
    assert.ok(Date.now() - t0 < 2500);
    assert.ok(err.message.includes(`redis://:***@127.0.0.1:${port}/0`), err.message);
    assert.match(err.message, /ECONNREFUSED/);
    assert.ok(
      err.message.endsWith(`Check that Redis runs at 127.0.0.1:${port} and is reachable from this host.`),
      `start-up: nothing retries, so no promise of a retry: ${err.message}`,
    );
    assert.doesNotMatch(err.message, /retried/);
    assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes('hunter2'));
  });
});
