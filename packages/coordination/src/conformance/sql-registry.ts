/**
 * What the PostgreSQL and MySQL conformance files share: the test database seen as a
 * conformance engine (kill/restart for the engine-restart test).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock, type FlurryError } from '@flurry/core';
import type { HolderInfo } from '../driver.js';
import { createMysqlDriver } from '../drivers/mysql.js';
import { createPostgresDriver } from '../drivers/postgres.js';
import { freePort, type RunningEngine } from '../testing/harness.js';
import type { RunningDatabase } from '../testing/databases.js';

/**
 * A running test database as the conformance suite's engine (the suite only kills, restarts
 * and looks at the process).
 */
export function asConformanceEngine(db: RunningDatabase): RunningEngine {
  return {
    kind: db.kind as unknown as RunningEngine['kind'],
    port: db.port,
    url: db.url,
    address: db.address,
    dataDir: db.dataDir,
    get process() {
      return db.process;
    },
    kill: () => db.kill(),
    restart: () => db.restart(),
    pause: () => db.pause(),
    resume: () => db.resume(),
    stop: () => db.stop(),
  };
}

/**
 * The tests only the SQL registries need, beside the conformance suite: bad credentials
 * (never printed), an unreachable or silent server (bounded by the connect timeout), a missing
 * database, a table of another layout or of other columns, expiry judged by the database's
 * clock whatever the holders' clocks say, fencing of an expired lease, a paused database, and
 * the clean-release mark.
 */
export function runSqlRegistryTests(name: string, db: RunningDatabase): void {
  const dialect = db.kind === 'postgres' ? 'postgres' : 'mysql';
  const create = dialect === 'postgres' ? createPostgresDriver : createMysqlDriver;
  const clockAt = (offsetMs: number): Clock => ({ ...systemClock, now: () => systemClock.now() + offsetMs });
  const holder = (id: string): HolderInfo => ({ id: `${id}:${randomUUID()}`, hostname: 'test', pid: process.pid });
  let n = 0;
  const ns = (): string => `sqltest-${process.pid}-${++n}`;
  const open = (url = `${db.url}?table=flurry_sqltest`, offsetMs = 0, connectTimeoutMs = 3000) =>
    create(url, { clock: clockAt(offsetMs), connectTimeoutMs });
  const password = db.connection.password;
  const noSecret = (err: unknown, secret: string): void => {
    const e = err as FlurryError;
    assert.ok(!e.message.includes(secret), `the message shows the password: ${e.message}`);
    assert.ok(
      !JSON.stringify(e.details).includes(secret),
      `the details show the password: ${JSON.stringify(e.details)}`,
    );
  };

  describe(`${name} registry (SQL specifics)`, () => {
    test('GIVEN a wrong password THEN FLURRY_E_REGISTRY_AUTH AND neither message nor details contain it', async () => {
      const wrong = `Wr0ng-${randomUUID()}`;
      const url = db.url.replace(`:${password}@`, `:${wrong}@`);
      assert.notEqual(url, db.url);
      const err = await open(url).then(
        () => assert.fail('opened with a wrong password'),
        (e: unknown) => e,
      );
      assert.equal((err as FlurryError).code, 'FLURRY_E_REGISTRY_AUTH', String(err));
      noSecret(err, wrong);
      noSecret(err, password);
    });

    test('GIVEN a closed port or a server that never answers THEN FLURRY_E_REGISTRY_UNREACHABLE within the connect timeout', async () => {
      const closed = await freePort();
      const silent = createServer(() => undefined); // accepts, never answers
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const silentPort = (silent.address() as AddressInfo).port;
      try {
        for (const port of [closed, silentPort]) {
          const url = db.url.replace(`:${db.port}/`, `:${port}/`);
          const t0 = Date.now();
          const err = await open(url, 0, 1000).then(
            () => assert.fail('opened a registry on a dead port'),
            (e: unknown) => e,
          );
          const took = Date.now() - t0;
          assert.equal((err as FlurryError).code, 'FLURRY_E_REGISTRY_UNREACHABLE', String(err));
          assert.ok(took < 6000, `took ${took} ms with a 1000 ms connect timeout`);
          assert.match((err as Error).message, new RegExp(`127\\.0\\.0\\.1:${port}`));
          noSecret(err, password);
        }
      } finally {
        silent.close();
      }
    });

    test('GIVEN a database that does not exist THEN FLURRY_E_REGISTRY_URL or AUTH naming it, without the password', async () => {
      const url = db.url.replace(/\/[^/?]+$/, '/no_such_db');
      const err = await open(url).then(
        () => assert.fail('opened a missing database'),
        (e: unknown) => e,
      );
      // MySQL reports an unknown database to a user without rights on it as "access denied".
      assert.ok(['FLURRY_E_REGISTRY_URL', 'FLURRY_E_REGISTRY_AUTH'].includes((err as FlurryError).code), String(err));
      assert.match((err as Error).message, /no_such_db/);
      noSecret(err, password);
    });

    test('GIVEN a table with other columns THEN FLURRY_E_REGISTRY_CORRUPT naming the missing columns', async () => {
      db.sql('CREATE TABLE not_a_registry (id INT PRIMARY KEY, namespace VARCHAR(10))');
      if (dialect === 'postgres') {
        // Created by the superuser: the test role may not even read it yet.
        const denied = await open(`${db.url}?table=not_a_registry`).then(
          () => assert.fail('opened a table the user may not read'),
          (e: unknown) => e,
        );
        assert.equal((denied as FlurryError).code, 'FLURRY_E_REGISTRY_AUTH', String(denied));
        assert.match((denied as Error).message, /flurry registry init/);
        db.sql(`GRANT ALL ON not_a_registry TO ${db.connection.user}`);
      }
      const err = await open(`${db.url}?table=not_a_registry`).then(
        () => assert.fail('opened a foreign table'),
        (e: unknown) => e,
      );
      assert.equal((err as FlurryError).code, 'FLURRY_E_REGISTRY_CORRUPT', String(err));
      assert.match((err as Error).message, /token/);
    });

    test('GIVEN 12 processes opening a new registry table at once THEN every one opens it (a lost creation race is not a corrupt table)', async () => {
      // Concurrent CREATE TABLE IF NOT EXISTS can fail in the losers (PostgreSQL: 42P07, 23505
      // on pg_type, or 42710 "type … already exists"); test:repeat saw the last one as CORRUPT,
      // and before the fix this test failed within 5 of 40 rounds.
      for (let round = 0; round < 20; round++) {
        const url = `${db.url}?table=race_${process.pid}_${round}`;
        const results = await Promise.allSettled(Array.from({ length: 12 }, () => open(url)));
        const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
        await Promise.all(
          results.map(async (r) => {
            if (r.status === 'fulfilled') await r.value.close();
          }),
        );
        assert.deepEqual(failed, [], `round ${round}: a driver failed to open a table another was creating`);
      }
    });

    test('GIVEN createTable false and no table THEN FLURRY_E_REGISTRY_CORRUPT pointing to flurry registry init', async () => {
      const err = await create(`${db.url}?table=never_created`, {
        clock: clockAt(0),
        connectTimeoutMs: 3000,
        createTable: false,
      }).then(
        () => assert.fail('opened without a table'),
        (e: unknown) => e,
      );
      assert.equal((err as FlurryError).code, 'FLURRY_E_REGISTRY_CORRUPT', String(err));
      assert.match((err as Error).message, /flurry registry init/);
    });

    test('GIVEN a namespace leased by a layout of 16 node IDs WHEN a layout of 32 claims in it THEN FLURRY_E_REGISTRY_CORRUPT', async () => {
      const d = await open();
      try {
        const namespace = ns();
        const c = await d.claim({ namespace, slots: 16, ttlMs: 5000, holder: holder('a') });
        const err = await d.claim({ namespace, slots: 32, ttlMs: 5000, holder: holder('b') }).then(
          () => assert.fail('claimed under another layout'),
          (e: unknown) => e,
        );
        assert.equal((err as FlurryError).code, 'FLURRY_E_REGISTRY_CORRUPT', String(err));
        assert.match((err as Error).message, /16 node IDs/);
        await d.release(c, { highWaterMs: Date.now() });
      } finally {
        await d.close();
      }
    });

    test("GIVEN holders whose clocks are an hour apart THEN expiry follows the database's clock AND an expired lease is never renewed", async () => {
      const ahead = await open(undefined, 3_600_000);
      const behind = await open(undefined, -3_600_000);
      try {
        const namespace = ns();
        const ttlMs = 1500;
        const t0 = Date.now();
        const c = await ahead.claim({ namespace, slots: 1, ttlMs, holder: holder('ahead') });
        // The holder whose clock is an hour behind sees the slot held until the database says it expired.
        const early = await behind.claim({ namespace, slots: 1, ttlMs, holder: holder('behind') }).then(
          () => 'claimed',
          (e: unknown) => (e as FlurryError).code,
        );
        if (Date.now() - t0 < ttlMs - 100) assert.equal(early, 'FLURRY_E_REGISTRY_EXHAUSTED');
        await ahead.renew(c, { ttlMs, highWaterMs: Date.now() + 3_600_000 });
        const tRenew = Date.now();
        await sleep(ttlMs + 300);
        // Nobody took it, but it expired: the renewal is refused (fencing).
        await assert.rejects(ahead.renew(c, { ttlMs, highWaterMs: Date.now() }), { code: 'FLURRY_E_LEASE_LOST' });
        const c2 = await behind.claim({ namespace, slots: 1, ttlMs, holder: holder('behind') });
        assert.ok(Date.now() - tRenew >= ttlMs, 'claimed before the TTL ran out');
        assert.equal(c2.releasedCleanly, false);
        assert.ok(c2.highWaterMs >= t0 + 3_600_000, `the mark ${c2.highWaterMs} keeps the fast holder's issued time`);
        await behind.release(c2, { highWaterMs: Date.now() });
      } finally {
        await ahead.close();
        await behind.close();
      }
    });

    test('GIVEN a clean release THEN the next claim gets its mark and releasedCleanly', async () => {
      const d = await open();
      try {
        const namespace = ns();
        const c = await d.claim({ namespace, slots: 1, ttlMs: 5000, holder: holder('a') });
        const mark = Date.now() + 10;
        await d.renew(c, { ttlMs: 5000, highWaterMs: mark });
        await d.release(c, { highWaterMs: mark });
        const c2 = await d.claim({ namespace, slots: 1, ttlMs: 5000, holder: holder('b') });
        assert.equal(c2.releasedCleanly, true);
        assert.ok(c2.highWaterMs >= mark, `${c2.highWaterMs} < ${mark}`);
        await assert.rejects(d.renew(c, { ttlMs: 5000, highWaterMs: mark }), { code: 'FLURRY_E_LEASE_LOST' });
        await d.release(c2, { highWaterMs: mark });
      } finally {
        await d.close();
      }
    });

    test('GIVEN a paused database WHEN a holder renews THEN UNREACHABLE within the timeout AND after resume past the TTL the lease is lost and the slot claimable', async () => {
      const d = await open(undefined, 0, 1000);
      const namespace = ns();
      const ttlMs = 1500;
      const c = await d.claim({ namespace, slots: 1, ttlMs, holder: holder('a') });
      const tClaim = Date.now();
      db.pause();
      try {
        const t0 = Date.now();
        await assert.rejects(d.renew(c, { ttlMs, highWaterMs: Date.now() }), { code: 'FLURRY_E_REGISTRY_UNREACHABLE' });
        assert.ok(Date.now() - t0 < 4000, `a renewal against a paused database took ${Date.now() - t0} ms`);
        await sleep(Math.max(0, tClaim + ttlMs + 300 - Date.now()));
      } finally {
        db.resume();
      }
      try {
        await assert.rejects(d.renew(c, { ttlMs, highWaterMs: Date.now() }), { code: 'FLURRY_E_LEASE_LOST' });
        const c2 = await d.claim({ namespace, slots: 1, ttlMs, holder: holder('b') });
        assert.equal(c2.slot, 0);
        assert.equal(c2.releasedCleanly, false);
        await d.release(c2, { highWaterMs: Date.now() });
      } finally {
        await d.close();
      }
    });
  });
}
