/**
 * Every ORM sample of docs/orm.md on real PostgreSQL 15 and MariaDB (one server of each for
 * all samples, started by the coordination harness): `flurry sql --generate --apply` installs
 * `flurry_next_id()` on a node reserved in the registry table, a leased generator of the same
 * cluster takes another node from the same table, and each sample passes `prove()` (10,000
 * application IDs from 4 connections read back exactly and in time order, 1,000 database IDs,
 * JSON with exact IDs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { leasedGenerator, openRegistry, type LeasedGenerator, type Registry } from '@flurry/coordination';
import { startDatabase, type RunningDatabase } from '@flurry/coordination/testing';
import { runFlurry } from '../../test-support.js';
import { mySession, pgSession } from '../generate-sessions.js';
import { prove } from './proof.js';
import type { Engine, OrmSample } from './sample.js';
import { drizzleSample } from './drizzle.js';
import { knexSample } from './knex.js';
import { kyselySample } from './kysely.js';
import { sequelizeSample } from './sequelize.js';
import { typeormSample } from './typeorm.js';

const samples: OrmSample[] = [drizzleSample, kyselySample, typeormSample, sequelizeSample, knexSample];

/** The tables of docs/orm.md: `events` keyed by the application, `orders` by the database. */
const DDL: Record<Engine, string[]> = {
  postgres: [
    'CREATE TABLE events (id bigint PRIMARY KEY, body text NOT NULL)',
    'CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT flurry_next_id(), body text NOT NULL)',
  ],
  mariadb: [
    'CREATE TABLE events (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, body VARCHAR(200) NOT NULL)',
    'CREATE TABLE orders (id BIGINT UNSIGNED NOT NULL DEFAULT 0 PRIMARY KEY, body VARCHAR(200) NOT NULL)',
    'CREATE TRIGGER orders_flurry_id BEFORE INSERT ON orders FOR EACH ROW SET NEW.id = COALESCE(NULLIF(NEW.id, 0), flurry_next_id())',
  ],
};

for (const engine of ['postgres', 'mariadb'] as const) {
  describe(`the ORM samples of docs/orm.md on ${engine === 'postgres' ? 'PostgreSQL 15' : 'MariaDB'}`, () => {
    let db: RunningDatabase;
    let registry: Registry;
    let ids: LeasedGenerator;
    let sqlWorker: number;
    const exec = async (statements: string[]) => {
      const s = engine === 'postgres' ? await pgSession(db) : await mySession(db);
      try {
        for (const st of statements) await s.exec(st);
      } finally {
        await s.close();
      }
    };
    before(async () => {
      db = await startDatabase(engine);
      const url = `${db.url}?table=flurry_nodes`;
      const r = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'orm',
        '--layout',
        'twitter',
        '--apply',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const node = /Reserved slot \d+ of orm\/\S+ \(node (\{[^}]*\})\)/.exec(r.stdout);
      assert.ok(node, r.stdout);
      sqlWorker = (JSON.parse(node[1]) as { worker: number }).worker;
      await exec(DDL[engine]);
      registry = await openRegistry(url, { cluster: 'orm' });
      ids = await leasedGenerator({ registry, layout: 'twitter' });
    });
    after(async () => {
      await ids?.close();
      await registry?.close();
      await db?.stop();
    });

    for (const sample of samples) {
      test(`GIVEN ${sample.name} on ${engine} THEN 10,000 application IDs from 4 connections read back exactly and in time order, database IDs from flurry_next_id(), JSON with exact IDs`, async () => {
        await exec(['DELETE FROM events', 'DELETE FROM orders']);
        const r = await prove(sample, engine, db.connection, ids, { sqlWorker });
        console.log(`${sample.name} on ${engine}: ${r.appRows} + ${r.dbRows} rows in ${r.ms} ms`);
      });
    }
  });
}
