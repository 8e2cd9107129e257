/**
 * The Drizzle sample of docs/orm.md (the regions between `#region` and `#endregion` are the
 * doc's code, checked equal by `docs.test.ts`), run by `orm.test.ts`.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';
import type { IdSource, OrmSample, OrmSession, Row } from './sample.js';
// #region drizzle-pg
import { and, gte, lt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { bigint, pgTable, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { idBounds, jsonReplacer, Layout } from '@flurry/core';

const layout = Layout.from('twitter');

// mode 'bigint': the column is a JS bigint both ways ('number' would round past 2^53).
function pgSchema(ids: IdSource) {
  return {
    // From the application: $defaultFn runs for every row inserted without an id.
    events: pgTable('events', {
      id: bigint('id', { mode: 'bigint' })
        .primaryKey()
        .$defaultFn(() => ids.next()),
      body: text('body').notNull(),
    }),
    // From the database: DEFAULT flurry_next_id(), so Drizzle sends DEFAULT for the id.
    orders: pgTable('orders', {
      id: bigint('id', { mode: 'bigint' })
        .primaryKey()
        .default(sql`flurry_next_id()`),
      body: text('body').notNull(),
    }),
  };
}

function drizzlePg(connection: DatabaseConnection, ids: IdSource) {
  const { events, orders } = pgSchema(ids);
  const db = drizzle({ client: new pg.Pool({ ...connection, max: 1 }) });
  return {
    addEvents: (bodies: readonly string[]) => db.insert(events).values(bodies.map((body) => ({ body }))),
    addOrders: (bodies: readonly string[]) => db.insert(orders).values(bodies.map((body) => ({ body }))),
    // A time window: the half-open ID range [min, maxExclusive), an index range scan.
    between(from: Date, to: Date, table: typeof events | typeof orders = events) {
      const { min, maxExclusive } = idBounds(layout, from, to);
      return db
        .select()
        .from(table)
        .where(and(gte(table.id, min), lt(table.id, maxExclusive)))
        .orderBy(table.id);
    },
    // JSON.stringify throws on a bigint: jsonReplacer writes each as its decimal string.
    toJson: (rows: unknown) => JSON.stringify(rows, jsonReplacer),
    orders,
    close: () => db.$client.end(),
  };
}
// #endregion drizzle-pg

// #region drizzle-mysql
// and, gte, lt, sql, idBounds, jsonReplacer and layout as above.
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { bigint as myBigint, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import mysql from 'mysql2/promise';

function mysqlSchema(ids: IdSource) {
  return {
    events: mysqlTable('events', {
      id: myBigint('id', { mode: 'bigint', unsigned: true })
        .primaryKey()
        .$defaultFn(() => ids.next()),
      body: varchar('body', { length: 200 }).notNull(),
    }),
    // The BEFORE INSERT trigger sets the id: the column's DEFAULT 0 only marks "not given".
    orders: mysqlTable('orders', {
      id: myBigint('id', { mode: 'bigint', unsigned: true })
        .primaryKey()
        .default(sql`0`),
      body: varchar('body', { length: 200 }).notNull(),
    }),
  };
}

function drizzleMysql2(connection: DatabaseConnection, ids: IdSource) {
  const { events, orders } = mysqlSchema(ids);
  // supportBigNumbers + bigNumberStrings: mysql2 hands BIGINT over as a string, never a rounded number.
  const pool = mysql.createPool({ ...connection, connectionLimit: 1, supportBigNumbers: true, bigNumberStrings: true });
  const db = drizzleMysql({ client: pool });
  return {
    addEvents: (bodies: readonly string[]) => db.insert(events).values(bodies.map((body) => ({ body }))),
    addOrders: (bodies: readonly string[]) => db.insert(orders).values(bodies.map((body) => ({ body }))),
    between(from: Date, to: Date, table: typeof events | typeof orders = events) {
      const { min, maxExclusive } = idBounds(layout, from, to);
      return db
        .select()
        .from(table)
        .where(and(gte(table.id, min), lt(table.id, maxExclusive)))
        .orderBy(table.id);
    },
    toJson: (rows: unknown) => JSON.stringify(rows, jsonReplacer),
    orders,
    close: () => pool.end(),
  };
}
// #endregion drizzle-mysql

interface DrizzleSession<T> {
  addEvents(bodies: readonly string[]): PromiseLike<unknown>;
  addOrders(bodies: readonly string[]): PromiseLike<unknown>;
  between(from: Date, to: Date, table?: T): PromiseLike<Row[]>;
  toJson(rows: unknown): string;
  orders: T;
  close(): Promise<void>;
}

function sessionOf<T>(d: DrizzleSession<T>): Promise<OrmSession> {
  return Promise.resolve({
    insert: async (bodies) => void (await d.addEvents(bodies)),
    insertDefault: async (bodies) => void (await d.addOrders(bodies)),
    window: async (from, to, table) => await d.between(from, to, table === 'orders' ? d.orders : undefined),
    json: async (from, to) => d.toJson(await d.between(from, to)),
    close: () => d.close(),
  });
}

/** The Drizzle sample as the proof drives it. */
export const drizzleSample: OrmSample = {
  name: 'Drizzle',
  open: (engine, connection, ids) =>
    engine === 'postgres' ? sessionOf(drizzlePg(connection, ids)) : sessionOf(drizzleMysql2(connection, ids)),
};
