/**
 * The Knex sample of docs/orm.md (the regions between `#region` and `#endregion` are the
 * doc's code, checked equal by `docs.test.ts`), run by `orm.test.ts`.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';
import type { Engine, IdSource, OrmSample, OrmSession } from './sample.js';
// #region knex
import knex from 'knex';
import { idBounds, Layout } from '@flurry/core';

const layout = Layout.from('twitter');

// pg returns int8 as a string by default; mysql2 needs bigNumberStrings for the same
// (without it a BIGINT past 2^53 comes back as a rounded number).
function connectKnex(engine: Engine, connection: DatabaseConnection) {
  return engine === 'postgres'
    ? knex({ client: 'pg', connection, pool: { min: 1, max: 1 } })
    : knex({
        client: 'mysql2',
        connection: { ...connection, supportBigNumbers: true, bigNumberStrings: true },
        pool: { min: 1, max: 1 },
      });
}

interface EventRow {
  id: string; // the ID as its decimal string, in and out
  body: string;
}

// From the application: the leased generator's next ID, written as a string.
async function addEvents(db: knex.Knex, ids: IdSource, bodies: readonly string[]) {
  await db<EventRow>('events').insert(bodies.map((body) => ({ id: ids.next().toString(), body })));
}

// From the database: leave the id out; flurry_next_id() fills it.
async function addOrders(db: knex.Knex, bodies: readonly string[]) {
  await db('orders').insert(bodies.map((body) => ({ body })));
}

// A time window: the half-open ID range [min, maxExclusive), an index range scan.
function eventsBetween(db: knex.Knex, from: Date, to: Date, table = 'events') {
  const { min, maxExclusive } = idBounds(layout, from, to);
  return db<EventRow>(table)
    .where('id', '>=', min.toString())
    .andWhere('id', '<', maxExclusive.toString())
    .orderBy('id')
    .select('id', 'body');
}

// JSON: the IDs are strings already, so JSON.stringify keeps every digit.
async function eventsJson(db: knex.Knex, from: Date, to: Date) {
  return JSON.stringify(await eventsBetween(db, from, to));
}
// #endregion knex

/** The Knex sample as the proof drives it. */
export const knexSample: OrmSample = {
  name: 'Knex',
  open(engine, connection, ids): Promise<OrmSession> {
    const db = connectKnex(engine, connection);
    return Promise.resolve({
      insert: (bodies) => addEvents(db, ids, bodies),
      insertDefault: (bodies) => addOrders(db, bodies),
      window: async (from, to, table) =>
        (await eventsBetween(db, from, to, table)).map((r) => ({ id: BigInt(r.id), body: r.body })),
      json: (from, to) => eventsJson(db, from, to),
      close: () => db.destroy(),
    });
  },
};
