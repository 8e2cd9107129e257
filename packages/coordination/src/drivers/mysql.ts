/**
 * The MySQL and MariaDB registry driver, on `mysql2`: node-ID leases as rows of a table (see
 * {@link SqlRegistryDriver} in sql-common.ts for the table and the statements). Lease expiry
 * is judged by the **database server's clock** (`CURRENT_TIMESTAMP(3)`), so the holders' clock
 * skew does not matter; a renewal only succeeds while the token matches and the lease has not
 * expired. Sessions run with `time_zone = '+00:00'` and `READ COMMITTED` (no gap locks between
 * concurrent claimers). InnoDB is durable with `innodb_flush_log_at_trx_commit = 1` (the
 * default); asynchronous replication can lose the last claims on a failover, like Redis.
 *
 * URLs: `mysql://[user[:password]@]host[:port]/database[?table=name&sslmode=…]` (`mariadb://` too).
 */
import mysql from 'mysql2/promise';
import type { SqlDriverOptions } from './sql-engine.js';
import { createSqlDriver } from './sql-factory.js';

/**
 * Connects to MySQL or MariaDB and returns a registry driver (the table is created on first
 * use unless `createTable: false`). Rejects with `FLURRY_E_REGISTRY_URL`, `…_AUTH`,
 * `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export const createMysqlDriver = (url: string | URL, opts: SqlDriverOptions) =>
  createSqlDriver('mysql', mysql, url, opts);
