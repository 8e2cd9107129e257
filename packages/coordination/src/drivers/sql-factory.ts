/**
 * What every SQL driver factory (postgres.ts, mysql.ts) does before it builds its client's
 * pool: check the factory's options, parse the URL and check that it names the factory's
 * dialect, and hand over the connection fields both client libraries take under the same names.
 */
import { registryError } from '../errors.js';
import { checkSqlDriverOptions, type SqlDriverOptions } from './sql-engine.js';
import type { SqlDialect } from './sql-table.js';
import { parseSqlUrl, type SqlUrl } from './sql-url.js';

/** Where a SQL client connects, under the option names both `pg` and `mysql2` take. */
export interface SqlAddress {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user?: string;
  readonly password?: string;
}

/**
 * Checks a SQL driver factory's options (`FLURRY_E_UNKNOWN_OPTION`, `FLURRY_E_REGISTRY_OPTION`)
 * and its URL (`FLURRY_E_REGISTRY_URL` for a malformed URL or one of another dialect, naming
 * it without its password); returns the parsed URL and the address to connect to.
 */
export function startSqlFactory(
  url: string | URL,
  opts: SqlDriverOptions,
  dialect: SqlDialect,
  factory: string,
): { url: SqlUrl; address: SqlAddress } {
  checkSqlDriverOptions(opts, factory);
  const parsed = parseSqlUrl(typeof url === 'string' ? url : url.href);
  if (parsed.dialect !== dialect)
    throw registryError('URL_INVALID', `${parsed.redacted} is not a ${dialect}:// URL`, { url: parsed.redacted });
  const { host, port, database, user, password } = parsed;
  return {
    url: parsed,
    address: {
      host,
      port,
      database,
      ...(user !== undefined ? { user } : {}),
      ...(password !== undefined ? { password } : {}),
    },
  };
}
