/**
 * The Kysely sample of docs/orm.md (the regions between `#region` and `#endregion` are the
 * doc's code, checked equal by `docs.test.ts`), run by `orm.test.ts`.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';
import type { Engine, IdSource, OrmSample, OrmSession } from './sample.js';
// #region kysely
import { Kysely, MysqlDialect, PostgresDialect, type ColumnType, type Generated } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { idBounds, Layout } from '@flurry/core';

const layout = Layout.from('twitter');

// Kysely maps nothing: a column is what the driver returns. pg returns int8 as a string;
// mysql2 does with supportBigNumbers + bigNumberStrings (else a number, rounded past 2^53).
interface Database {
  events: { id: ColumnType<string, string, never>; body: string }; // id given by the application
  orders: { id: Generated<string>; body: string }; // id given by flurry_next_id()
}

function connectKysely(engine: Engine, connection: DatabaseConnection) {
  const dialect =
    engine === 'postgres'
      ? new PostgresDialect({ pool: new pg.Pool({ ...connection, max: 1 }) })
      : new MysqlDialect({
          pool: createPool({ ...connection, connectionLimit: 1, supportBigNumbers: true, bigNumberStrings: true }),
        });
  return new Kysely<Database>({ dialect });
}

// From the application: the leased generator's next ID, written as a string.
async function addEvents(db: Kysely<Database>, ids: IdSource, bodies: readonly string[]) {
  await db
    .insertInto('events')
    .values(bodies.map((body) => ({ id: ids.next().toString(), body })))
    .execute();
}

// From the database: leave the id out.
async function addOrders(db: Kysely<Database>, bodies: readonly string[]) {
  await db
    .insertInto('orders')
    .values(bodies.map((body) => ({ body })))
    .execute();
}

// A time window: the half-open ID range [min, maxExclusive), an index range scan.
function between(db: Kysely<Database>, from: Date, to: Date, table: 'events' | 'orders' = 'events') {
  const { min, maxExclusive } = idBounds(layout, from, to);
  return db
    .selectFrom(table)
    .select(['id', 'body'])
    .where('id', '>=', min.toString())
    .where('id', '<', maxExclusive.toString())
    .orderBy('id')
    .execute();
}

// JSON: the IDs are strings already.
async function eventsJson(db: Kysely<Database>, from: Date, to: Date) {
  return JSON.stringify(await between(db, from, to));
}
// #endregion kysely

/** The Kysely sample as the proof drives it. */
export const kyselySample: OrmSample = {
  name: 'Kysely',
  open(engine, connection, ids): Promise<OrmSession> {
    const db = connectKysely(engine, connection);
    return Promise.resolve({
      insert: (bodies) => addEvents(db, ids, bodies),
      insertDefault: (bodies) => addOrders(db, bodies),
      window: async (from, to, table) =>
        (await between(db, from, to, table)).map((r) => ({ id: BigInt(r.id), body: r.body })),
      json: (from, to) => eventsJson(db, from, to),
      close: () => db.destroy(),
    });
  },
};
