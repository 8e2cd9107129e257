/** The MySQL and MariaDB registry driver: {@link createSqlDriver} on `mysql2`, sessions in UTC and `READ COMMITTED`. */
import mysql from 'mysql2/promise';
import { createSqlDriver, type SqlDriverOptions } from './sql-common.js';

/** Connects to MySQL or MariaDB; the table is created on first use unless `createTable: false` (errors: {@link createSqlDriver}). */
export const createMysqlDriver = (url: string | URL, opts: SqlDriverOptions) =>
  createSqlDriver('mysql', mysql, url, opts);
