/**
 * What both SQL driver factories (postgres.ts, mysql.ts) do with the client they imported:
 * check the options, parse the URL and check that it names the factory's dialect, open core's
 * SQL pool on it and the shared registry driver on the pool.
 */
import { sqlPool, type SqlDialect } from '@flurry/core';
import { registryError } from '../errors.js';
import { openSqlDriver, type SqlRegistryDriver } from './sql-common.js';
import { checkDriverOptions, ENGINE_DRIVER_OPTION_NAMES } from './common.js';
import type { SqlDriverOptions } from './sql-engine.js';
import { parseSqlUrl } from './sql-url.js';

/**
 * Opens the registry driver of `dialect` on its loaded client. Rejects with
 * `FLURRY_E_UNKNOWN_OPTION`, `FLURRY_E_REGISTRY_OPTION`, `…_URL` (a malformed URL or one of
 * another dialect), `…_AUTH`, `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export async function createSqlDriver(
  dialect: SqlDialect,
  client: unknown,
  url: string | URL,
  opts: SqlDriverOptions,
): Promise<SqlRegistryDriver> {
  const factory = dialect === 'postgres' ? 'createPostgresDriver' : 'createMysqlDriver';
  checkDriverOptions(opts, factory, [...ENGINE_DRIVER_OPTION_NAMES, 'createTable']);
  const parsed = parseSqlUrl(typeof url === 'string' ? url : url.href);
  if (parsed.dialect !== dialect)
    throw registryError('URL_INVALID', `${parsed.redacted} is not a ${dialect}:// URL`, { url: parsed.redacted });
  const name = dialect === 'postgres' ? 'PostgreSQL' : 'MySQL';
  // A small pool; a connection whose bounded statement timed out or broke is dropped (a restart reconnects).
  const pool = sqlPool(dialect, client, {
    ...parsed,
    size: 4,
    connectTimeoutMs: opts.connectTimeoutMs,
    statementTimeoutMs: opts.connectTimeoutMs,
    application: 'flurry-registry',
    utc: true,
    init: dialect === 'mysql' ? ['SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'] : [],
    onError: (err) => opts.logger?.warn({ url: parsed.redacted, err: err.message }, `${name} connection error`),
  });
  return openSqlDriver(
    {
      dialect,
      name,
      url: parsed,
      async withConn(fn) {
        const session = await pool.connect();
        try {
          return await fn(session);
        } finally {
          session.release();
        }
      },
      end: () => pool.end(),
    },
    opts,
  );
}
