/**
 * The PostgreSQL registry driver, on `pg`: the shared {@link SqlRegistryDriver}, with expiry on
 * the database server's clock (docs/node-ids.md, "`postgres://` and `mysql://`").
 */
import pg from 'pg';
import { createSqlDriver, type SqlDriverOptions } from './sql-common.js';

/**
 * Connects to PostgreSQL and returns a registry driver (the table is created on first use
 * unless `createTable: false`). Rejects with `FLURRY_E_REGISTRY_URL`, `…_AUTH`,
 * `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export const createPostgresDriver = (url: string | URL, opts: SqlDriverOptions) =>
  createSqlDriver('postgres', pg, url, opts);
