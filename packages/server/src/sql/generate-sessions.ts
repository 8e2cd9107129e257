/**
 * Sessions on the databases of the in-database generator's tests (generate-cases.ts): one
 * statement's value or a statement run for its effect, on PostgreSQL (pg) or MariaDB (mysql2).
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { RunningDatabase } from '@flurry/coordination/testing';

/** One database session: a value of one statement, or a statement run for its effect. */
export interface Session {
  one(sql: string): Promise<string>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** A PostgreSQL session (pg.Client) on `db`. */
export async function pgSession(db: RunningDatabase): Promise<Session> {
  const c = new pg.Client({ ...db.connection, query_timeout: 60_000 });
  await c.connect();
  return {
    async one(sql) {
      const r = await c.query<Record<string, unknown>>({ text: sql, rowMode: 'array' } as never);
      return String((r.rows[0] as unknown as unknown[])[0]);
    },
    async exec(sql) {
      await c.query(sql);
    },
    close: () => c.end(),
  };
}

/** A MariaDB session (mysql2) on `db`, with big numbers as strings. */
export async function mySession(db: RunningDatabase): Promise<Session> {
  const c = await mysql.createConnection({ ...db.connection, supportBigNumbers: true, bigNumberStrings: true });
  return {
    async one(sql) {
      const [rows] = await c.query<mysql.RowDataPacket[]>({ sql, rowsAsArray: true });
      return String((rows[0] as unknown[])[0]);
    },
    async exec(sql) {
      await c.query(sql);
    },
    close: () => c.end(),
  };
}

/** PostgreSQL: `'t'` once no other session holds an advisory lock (lane 0 free again). */
export const FREE_LANE0 =
  "SELECT (count(*) = 0)::text FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()";

/** The FLURRY_E_… code an error message starts with (else the message), or 'no error'. */
export function codeOf(e: unknown): string {
  if (e === undefined) return 'no error';
  return /^(FLURRY_E_[A-Z_]+)/.exec((e as Error).message ?? '')?.[1] ?? String((e as Error).message);
}
