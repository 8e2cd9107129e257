/**
 * The MySQL / MariaDB store through `mysql2` (an optional peer dependency, loaded only when a `mysql://` URL
 * is opened). The table is Leaf's `leaf_alloc` with Leaf's own DDL; allocation is Leaf's transaction (`sql.ts`).
 */
import type { Pool, PoolConnection } from 'mysql2/promise';
import { loadClient } from '@flurry/core';
import { clientMissing } from '../errors.js';
import type { SqlConnection } from './postgres.js';
import type { SqlAdapter, SqlSession } from './sql.js';

/** Builds the MySQL/MariaDB adapter; `FLURRY_E_SEQUENCE_CLIENT_MISSING` when `mysql2` is not installed. */
export async function mysqlAdapter(c: SqlConnection, description: string): Promise<SqlAdapter> {
  type CreatePool = (config: object) => Pool;
  const mod = (await loadClient(
    'mysql',
    `the mysql store (${description})`,
    () => import('mysql2/promise'),
    clientMissing(description),
  )) as unknown as { default?: { createPool: CreatePool }; createPool?: CreatePool };
  const createPool = (mod.default?.createPool ?? mod.createPool) as CreatePool;
  const pool = createPool({
    host: c.host,
    port: c.port,
    user: c.user,
    password: c.password,
    database: c.database,
    connectionLimit: c.poolSize,
    connectTimeout: c.timeoutMs,
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
  });
  // mysql2's pool re-emits connection errors; they surface through the failing query instead.
  (pool as unknown as { on(ev: string, f: () => void): void }).on('error', () => undefined);
  const quote = (t: string): string =>
    t
      .split('.')
      .map((x) => `\`${x}\``)
      .join('.');
  return {
    kind: 'mysql',
    placeholder: () => '?',
    quote,
    // Leaf's DDL (README), verbatim but for IF NOT EXISTS.
    ddl: (t) =>
      `CREATE TABLE IF NOT EXISTS ${quote(t)} (\n` +
      "  `biz_tag` varchar(128) NOT NULL DEFAULT '',\n" +
      "  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
      '  `step` int(11) NOT NULL,\n' +
      '  `description` varchar(256) DEFAULT NULL,\n' +
      '  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n' +
      '  PRIMARY KEY (`biz_tag`)\n' +
      ') ENGINE=InnoDB',
    begin: 'START TRANSACTION',
    async connect(): Promise<SqlSession> {
      const conn: PoolConnection = await pool.getConnection();
      let done = false;
      return {
        async query(sql, params) {
          const [res] = await conn.query(sql, params);
          if (Array.isArray(res)) return { rows: res as Record<string, unknown>[], affected: res.length };
          return { rows: [], affected: (res as { affectedRows?: number }).affectedRows ?? 0 };
        },
        destroy() {
          if (done) return;
          done = true;
          conn.destroy();
        },
        release() {
          if (done) return;
          done = true;
          conn.release();
        },
      };
    },
    async end() {
      await pool.end();
    },
  };
}
