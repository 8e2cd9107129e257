/**
 * The PostgreSQL registry driver, on `pg` (node-postgres): node-ID leases as rows of a table
 * (see {@link SqlRegistryDriver} in sql-common.ts for the table and the statements). Lease
 * expiry is judged by the **database server's clock** (`now()`), so the holders' clock skew
 * does not matter; a renewal only succeeds while the token matches and the lease has not
 * expired. PostgreSQL commits durably before it acknowledges (unless `synchronous_commit` is
 * off), and a synchronous standby keeps that promise across a failover; an asynchronous one
 * can lose the last claims like Redis can.
 *
 * URLs: `postgres://[user[:password]@]host[:port]/database[?table=name&sslmode=…]`.
 */
import pg from 'pg';
import type { SqlDriverOptions } from './sql-engine.js';
import { createSqlDriver } from './sql-factory.js';

/**
 * Connects to PostgreSQL and returns a registry driver (the table is created on first use
 * unless `createTable: false`). Rejects with `FLURRY_E_REGISTRY_URL`, `…_AUTH`,
 * `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export const createPostgresDriver = (url: string | URL, opts: SqlDriverOptions) =>
  createSqlDriver('postgres', pg, url, opts);
