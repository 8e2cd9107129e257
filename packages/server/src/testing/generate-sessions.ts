/**
 * Sessions on the databases of the in-database generator's tests (generate-cases.ts): one
 * statement's value or a statement run for its effect, on PostgreSQL (pg) or MariaDB (mysql2).
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { sqlPool, type SqlDialect } from '@flurry/core';
import type { RunningDatabase } from '@flurry/coordination/testing';

/** One database session: a value of one statement, or a statement run for its effect. */
export interface Session {
  one(sql: string): Promise<string>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

async function session(dialect: SqlDialect, db: RunningDatabase): Promise<Session> {
  const pool = sqlPool(dialect, dialect === 'postgres' ? pg : mysql, {
    ...db.connection,
    size: 1,
    connectTimeoutMs: 10_000,
    statementTimeoutMs: 60_000,
  });
  const s = await pool.connect();
  return {
    one: async (sql) => String(Object.values((await s.query(sql)).rows[0])[0]),
    exec: async (sql) => void (await s.query(sql)),
    async close() {
      s.release();
      await pool.end();
    },
  };
}

/** A PostgreSQL session (pg) on `db`. */
export const pgSession = (db: RunningDatabase): Promise<Session> => session('postgres', db);

/** A MariaDB session (mysql2) on `db`, with big numbers as strings. */
export const mySession = (db: RunningDatabase): Promise<Session> => session('mysql', db);

/** PostgreSQL: `'t'` once no other session holds an advisory lock (lane 0 free again). */
export const FREE_LANE0 =
  "SELECT (count(*) = 0)::text FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()";

/** The FLURRY_E_… code an error message starts with (else the message), or 'no error'. */
export function codeOf(e: unknown): string {
  if (e === undefined) return 'no error';
  return /^(FLURRY_E_[A-Z_]+)/.exec((e as Error).message ?? '')?.[1] ?? String((e as Error).message);
}
