/**
 * Sessions on the databases of the in-database generator's tests (generate-cases.ts): one
 * statement's value or a statement run for its effect, on PostgreSQL (pg) or MariaDB (mysql2).
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { sqlPool, type SqlDialect } from '@flurry/core';
import type { RunningDatabase } from '@flurry/coordination/testing';

/** One database session: a value of one statement, its first column, or a statement run for its effect. */
export interface Session {
  one(sql: string): Promise<string>;
  column(sql: string): Promise<string[]>;
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
    column: async (sql) => (await s.query(sql)).rows.map((r) => String(Object.values(r)[0])),
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

/**
 * `n` calls of `call` (an expression) in one statement, one row each, in call order: the rows
 * of a recursive count, on PostgreSQL and MariaDB alike.
 */
export const calls = (call: string, n: number): string =>
  `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n}) SELECT ${call} FROM k`;

/**
 * Waits (up to 5 s) until lane 0 is free again: a closed session's backend lets go of its lane
 * lock shortly after the disconnect (PostgreSQL: no other session holds an advisory lock).
 */
export async function laneFree(s: Session, kind: RunningDatabase['kind']): Promise<void> {
  const free =
    kind === 'postgres'
      ? "SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()"
      : "SELECT IS_FREE_LOCK(CONCAT('flurry_lane0@', DATABASE()))";
  for (let i = 0; i < 100 && !['true', '1'].includes(await s.one(free)); i++)
    await new Promise((r) => setTimeout(r, 50));
}

/** The FLURRY_E_… code an error message starts with (else the message), or 'no error'. */
export function codeOf(e: unknown): string {
  if (e === undefined) return 'no error';
  return /^(FLURRY_E_[A-Z_]+)/.exec((e as Error).message ?? '')?.[1] ?? String((e as Error).message);
}
