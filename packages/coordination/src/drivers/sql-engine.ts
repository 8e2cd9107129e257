/**
 * What the SQL driver factories (sql-factory.ts) give the shared SQL registry driver
 * (sql-common.ts): connections of core's SQL pool, the parsed URL, and a classification of
 * client failures; and the options of the driver factories.
 */
import { sqlErrorClass, type SqlErrorClass, type SqlSession } from '@flurry/core';
import type { EngineDriverOptions } from './common.js';
import type { SqlDialect } from './sql-table.js';

/** What a driver factory gives the shared driver. */
export interface SqlEngine {
  readonly dialect: SqlDialect;
  /** As messages show it: 'PostgreSQL', 'MySQL'. */
  readonly name: string;
  /** The parsed URL. */
  readonly url: SqlUrlLike;
  /**
   * Runs `fn` on one pooled connection; a connection whose statement failed for a reason
   * other than a plain SQL error (timeout, broken socket) is destroyed, not reused.
   */
  withConn<T>(fn: (conn: SqlSession) => Promise<T>): Promise<T>;
  /** Closes the pool. */
  end(): Promise<void>;
}

/** The parts of a parsed SQL URL the shared driver needs. */
export interface SqlUrlLike {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user?: string;
  readonly table: string;
  readonly redacted: string;
}

/**
 * What kind of failure a client error is for the registry: the engine's {@link SqlErrorClass}, with a duplicate
 * key, an existing table and a deadlock all counted as a lost `race` (another holder was faster).
 */
export function sqlFailure(
  dialect: SqlDialect,
  err: unknown,
): Exclude<SqlErrorClass, 'duplicate' | 'exists' | 'conflict'> | 'race' {
  const c = sqlErrorClass(dialect, err);
  return c === 'duplicate' || c === 'exists' || c === 'conflict' ? 'race' : c;
}

/** Options of the SQL driver factories (given by `openRegistry`). */
export interface SqlDriverOptions extends EngineDriverOptions {
  /** Create the table when it is missing (default true). */
  readonly createTable?: boolean;
}
