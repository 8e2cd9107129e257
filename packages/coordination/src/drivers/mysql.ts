/**
 * The MySQL and MariaDB registry driver, on `mysql2`: node-ID leases as rows of a table (see
 * {@link SqlRegistryDriver} in sql-common.ts for the table and the statements). Lease expiry
 * is judged by the **database server's clock** (`CURRENT_TIMESTAMP(3)`), so the holders' clock
 * skew does not matter; a renewal only succeeds while the token matches and the lease has not
 * expired. Sessions run with `time_zone = '+00:00'` and `READ COMMITTED` (no gap locks between
 * concurrent claimers). InnoDB is durable with `innodb_flush_log_at_trx_commit = 1` (the
 * default); asynchronous replication can lose the last claims on a failover, like Redis.
 *
 * Connections come from a small pool (4); each statement is bounded by `connectTimeoutMs` on
 * the client side, and a connection that timed out or broke is destroyed, so a restarted server
 * is reconnected to on the next call.
 *
 * URLs: `mysql://[user[:password]@]host[:port]/database[?table=name&sslmode=…]` (`mariadb://` too).
 */
import mysql from 'mysql2/promise';
import { openSqlDriver, type SqlDriverOptions, type SqlEngine, type SqlResult } from './sql-common.js';
import { startSqlFactory } from './sql-factory.js';

function errno(err: unknown): number | undefined {
  const n = (err as { errno?: unknown } | null)?.errno;
  return typeof n === 'number' && (err as { sqlState?: unknown }).sqlState !== undefined ? n : undefined;
}

/**
 * Connects to MySQL or MariaDB and returns a registry driver (the table is created on first
 * use unless `createTable: false`). Rejects with `FLURRY_E_REGISTRY_URL`, `…_AUTH`,
 * `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export async function createMysqlDriver(url: string | URL, opts: SqlDriverOptions) {
  const { url: parsed, address } = startSqlFactory(url, opts, 'mysql', 'createMysqlDriver');
  const timeout = Math.ceil(opts.connectTimeoutMs);
  const pool = mysql.createPool({
    ...address,
    ...(parsed.sslmode === 'disable' ? {} : { ssl: { rejectUnauthorized: parsed.sslmode === 'verify-full' } }),
    connectionLimit: 4,
    maxIdle: 4,
    idleTimeout: 30_000,
    connectTimeout: timeout,
    enableKeepAlive: true,
    timezone: 'Z',
    supportBigNumbers: true,
    multipleStatements: false,
  });
  const ready = new WeakSet<object>();
  const engine: SqlEngine = {
    dialect: 'mysql',
    name: 'MySQL',
    url: parsed,
    async withConn(fn) {
      const conn = await pool.getConnection();
      let broken = false;
      const run = async (sql: string, params: readonly unknown[]): Promise<SqlResult> => {
        try {
          const [res, fields] = await conn.query({ sql, values: params as unknown[], timeout });
          if (Array.isArray(res))
            return {
              rows: res as Record<string, unknown>[],
              affected: 0,
              fields: (fields ?? []).map((f) => f.name),
            };
          return { rows: [], affected: (res as mysql.ResultSetHeader).affectedRows, fields: [] };
        } catch (err) {
          if (errno(err) === undefined) broken = true;
          throw err;
        }
      };
      try {
        if (!ready.has(conn.connection)) {
          // A connection that breaks while idle must not crash the process: the error surfaces
          // on its next query, and the connection is then destroyed.
          conn.connection.on('error', () => undefined);
          await run("SET time_zone = '+00:00'", []);
          await run('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', []);
          ready.add(conn.connection);
        }
        return await fn({ query: run });
      } finally {
        if (broken) conn.destroy();
        else conn.release();
      }
    },
    async end() {
      await pool.end();
    },
  };
  return openSqlDriver(engine, opts);
}
