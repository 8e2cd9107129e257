/**
 * The PostgreSQL store through `pg` (an optional peer dependency, loaded only when a `postgres://` URL is
 * opened). The table is Leaf's `leaf_alloc` in PostgreSQL types; allocation is Leaf's transaction (see `sql.ts`).
 */
import type { Pool, PoolClient } from 'pg';
import { loadClient } from '@flurry/core';
import { clientMissing } from '../errors.js';
import type { SqlAdapter, SqlSession } from './sql.js';

/** Where and how to connect (from the URL). */
export interface SqlConnection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  poolSize: number;
  timeoutMs: number;
}

/** Builds the PostgreSQL adapter; `FLURRY_E_SEQUENCE_CLIENT_MISSING` when `pg` is not installed. */
export async function postgresAdapter(c: SqlConnection, description: string): Promise<SqlAdapter> {
  type PoolCtor = new (config: object) => Pool;
  const mod = (await loadClient(
    'postgres',
    `the postgres store (${description})`,
    () => import('pg'),
    clientMissing(description),
  )) as unknown as { default?: { Pool: PoolCtor }; Pool?: PoolCtor };
  const PoolCtor = (mod.default?.Pool ?? mod.Pool) as PoolCtor;
  const pool = new PoolCtor({
    host: c.host,
    port: c.port,
    user: c.user,
    password: c.password,
    database: c.database,
    max: c.poolSize,
    connectionTimeoutMillis: c.timeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
  });
  pool.on('error', () => undefined); // an idle client lost its server: the pool drops it; the next use reconnects
  const listening = new WeakSet<PoolClient>();
  return {
    kind: 'postgres',
    placeholder: (i) => `$${i}`,
    quote: (t) =>
      t
        .split('.')
        .map((x) => `"${x}"`)
        .join('.'),
    ddl: (t) =>
      `CREATE TABLE IF NOT EXISTS ${t
        .split('.')
        .map((x) => `"${x}"`)
        .join('.')} (` +
      `biz_tag varchar(128) NOT NULL DEFAULT '' PRIMARY KEY, ` +
      `max_id bigint NOT NULL DEFAULT 1, ` +
      `step int NOT NULL, ` +
      `description varchar(256) DEFAULT NULL, ` +
      `update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
    begin: 'BEGIN',
    async connect(): Promise<SqlSession> {
      const client = await pool.connect();
      if (!listening.has(client)) {
        listening.add(client);
        client.on('error', () => undefined); // reported through the failing query instead
      }
      let done = false;
      return {
        async query(sql, params) {
          const r = await client.query(sql, params);
          return { rows: r.rows as Record<string, unknown>[], affected: r.rowCount ?? 0 };
        },
        destroy() {
          if (done) return;
          done = true;
          const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
          stream?.destroy();
          client.release(true);
        },
        release() {
          if (done) return;
          done = true;
          client.release();
        },
      };
    },
    async end() {
      await pool.end();
    },
  };
}
