/**
 * URLs of the SQL registries: `postgres://` (`postgresql://`) and `mysql://` (`mariadb://`),
 * with `table` and `sslmode` (docs/node-ids.md); any other parameter, and every error, is
 * `FLURRY_E_REGISTRY_URL` without the password.
 */
import { checkUrlParams, SQL_DEFAULT_PORT, SQL_SCHEMES, type SqlSslMode } from '@flurry/core';
import { urlRefusal, userInfo } from './common.js';
import { DEFAULT_REGISTRY_TABLE, validTableName, type SqlDialect } from './sql-table.js';

/** A parsed SQL registry URL (see {@link parseSqlUrl}). */
export interface SqlUrl {
  readonly dialect: SqlDialect;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user?: string;
  readonly password?: string;
  readonly table: string;
  readonly sslmode: SqlSslMode;
  /** The URL with the password replaced by `***`. */
  readonly redacted: string;
}

const PARAMS = ['table', 'sslmode'];
const SSL_MODES: readonly SqlSslMode[] = ['disable', 'require', 'verify-full'];

/**
 * Parses a `postgres://`, `postgresql://`, `mysql://` or `mariadb://` registry URL. Throws
 * `FLURRY_E_REGISTRY_URL` (without the password) for any other form.
 *
 * @example
 * ```ts
 * const u = parseSqlUrl('postgres://app:pw@[::1]:6432/orders?table=ops.flurry_nodes');
 * // { dialect: 'postgres', host: '::1', port: 6432, database: 'orders', table: 'ops.flurry_nodes', … }
 * ```
 */
export function parseSqlUrl(raw: string): SqlUrl {
  const bad = urlRefusal(
    'SQL registry',
    raw,
    `Expected postgres://[user[:password]@]host[:port]/database[?table=name&sslmode=disable|require|verify-full] or mysql://… (mariadb:// too), e.g. postgres://app:secret@127.0.0.1:5432/orders?table=flurry_nodes`,
  );
  if (typeof raw !== 'string') throw bad('it is not a string');
  const m =
    /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([^/?#]*)@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?(?:\/([^?#]*))?(?:\?([^#]*))?(#.*)?$/.exec(
      raw.trim(),
    );
  if (!m) throw bad('it does not have the form scheme://[user[:password]@]host[:port]/database');
  const scheme = m[1].toLowerCase();
  const dialect = SQL_SCHEMES[scheme];
  if (!dialect) throw bad(`the scheme "${scheme}:" is not postgres:, postgresql:, mysql: or mariadb:`);
  if (m[7] !== undefined) throw bad('a fragment (#…) is not allowed');
  const { user, password } = m[2] === undefined ? { user: undefined, password: undefined } : userInfo(m[2], bad);
  if (user === '') throw bad('the user before "@" is empty');
  const port = m[4] === undefined ? SQL_DEFAULT_PORT[dialect] : Number(m[4]);
  if (port < 1 || port > 65535) throw bad(`port ${m[4]} is outside 1..65535`);
  let database: string;
  try {
    database = decodeURIComponent(m[5] ?? '');
  } catch {
    throw bad('the database name is not valid percent-encoding');
  }
  if (database === '') throw bad('the database is missing (…/database)');
  if (!/^[A-Za-z0-9_$-]{1,64}$/.test(database))
    throw bad(`the database "${database}" must be 1-64 letters, digits, "_", "$" or "-"`);
  let table = DEFAULT_REGISTRY_TABLE;
  let sslmode: SqlSslMode = 'disable';
  if (m[6] !== undefined && m[6] !== '') {
    const params = new URLSearchParams(m[6]);
    checkUrlParams(params, PARAMS, bad);
    for (const [key, value] of params) {
      if (key === 'table') {
        const why = `the table "${value}" must be letters, digits and "_" (not starting with a digit, at most 63), optionally schema.table`;
        if (!validTableName(value)) throw bad(why);
        table = value;
      } else {
        if (!(SSL_MODES as readonly string[]).includes(value))
          throw bad(`sslmode "${value}" is not one of ${SSL_MODES.join(', ')}`);
        sslmode = value as SqlSslMode;
      }
    }
  }
  const auth = user === undefined ? '' : `${encodeURIComponent(user)}${password === undefined ? '' : ':***'}@`;
  const query = [
    table !== DEFAULT_REGISTRY_TABLE ? `table=${table}` : '',
    sslmode !== 'disable' ? `sslmode=${sslmode}` : '',
  ]
    .filter(Boolean)
    .join('&');
  const redacted = `${scheme}://${auth}${m[3]}:${port}/${database}${query ? `?${query}` : ''}`;
  return {
    dialect,
    host: m[3].replace(/^\[|\]$/g, ''),
    port,
    database,
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    table,
    sslmode,
    redacted,
  };
}
