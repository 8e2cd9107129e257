/** The PostgreSQL registry driver: {@link createSqlDriver} on `pg`, expiry on the server's clock (docs/node-ids.md). */
import pg from 'pg';
import { createSqlDriver, type SqlDriverOptions } from './sql-common.js';

/** Connects to PostgreSQL; the table is created on first use unless `createTable: false` (errors: {@link createSqlDriver}). */
export const createPostgresDriver = (url: string | URL, opts: SqlDriverOptions) =>
  createSqlDriver('postgres', pg, url, opts);
