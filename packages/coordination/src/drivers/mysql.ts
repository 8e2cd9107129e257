/**
 * The MySQL and MariaDB registry driver, on `mysql2`: the shared {@link SqlRegistryDriver}
 * (sessions in UTC and `READ COMMITTED`; docs/node-ids.md, "`postgres://` and `mysql://`").
 */
import mysql from 'mysql2/promise';
import { createSqlDriver, type SqlDriverOptions } from './sql-common.js';

/**
 * Connects to MySQL or MariaDB and returns a registry driver (the table is created on first
 * use unless `createTable: false`). Rejects with `FLURRY_E_REGISTRY_URL`, `…_AUTH`,
 * `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export const createMysqlDriver = (url: string | URL, opts: SqlDriverOptions) =>
  createSqlDriver('mysql', mysql, url, opts);
