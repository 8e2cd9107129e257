/**
 * The pure half of engine access, shared by the lease registries (`@flurry/coordination`), the segment stores
 * (`@flurry/segments`) and `flurry sql` (`@flurry/server`): the logger shape, the one URL redactor, the SQL URL
 * schemes and the table that classifies PostgreSQL and MySQL/MariaDB errors. No client and no I/O here: each
 * package loads its client lazily and maps a class to its own error codes (docs/architecture.md, "Engine access").
 *
 * @example
 * ```ts
 * redactUrl('postgres://app:pw@127.0.0.1:5432/orders'); // 'postgres://app:***@127.0.0.1:5432/orders'
 * sqlErrorClass('postgres', { code: '28P01' });        // 'auth'
 * ```
 */
import type { SqlDialect } from './sql/ddl.js';

/**
 * The logger Flurry writes to: pino's call shape (`logger.warn({ err }, 'message')`); pino fits.
 *
 * @example
 * ```ts
 * const logger: FlurryLogger = { warn: (o, m) => console.warn(m, o), info: (o, m) => console.info(m, o) };
 * ```
 */
export interface FlurryLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/**
 * Replaces the password of a URL with `***` before it appears in a message or a log.
 *
 * @example
 * ```ts
 * redactUrl('redis://:secret@127.0.0.1:6379/0'); // 'redis://:***@127.0.0.1:6379/0'
 * ```
 */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

/**
 * Replaces everything between `//` and the last `@` of a URL's authority with `***`: safe even for a URL too
 * malformed to parse (a password holding `@`).
 *
 * @example
 * ```ts
 * redactLoosely('redis://:hun@ter2@h:1/0'); // 'redis://***@h:1/0'
 * ```
 */
export function redactLoosely(raw: string): string {
  const m = /^([A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(raw);
  if (!m) return raw.replace(/:[^:@/]*@/, ':***@');
  const at = m[2].lastIndexOf('@');
  return at < 0 ? raw : `${m[1]}***@${m[2].slice(at + 1)}${m[3]}`;
}

/**
 * URL schemes of the SQL engines and their dialect (`mariadb:` is MySQL's dialect).
 *
 * @example
 * ```ts
 * SQL_SCHEMES['postgresql']; // 'postgres'
 * ```
 */
export const SQL_SCHEMES: Readonly<Record<string, SqlDialect>> = {
  postgres: 'postgres',
  postgresql: 'postgres',
  mysql: 'mysql',
  mariadb: 'mysql',
};

/**
 * The port of a SQL URL that names none.
 *
 * @example
 * ```ts
 * SQL_DEFAULT_PORT.mysql; // 3306
 * ```
 */
export const SQL_DEFAULT_PORT: Readonly<Record<SqlDialect, number>> = { postgres: 5432, mysql: 3306 };

/**
 * What kind of failure a SQL error is: refused credentials (`auth`), a missing privilege (`denied`), a missing
 * table or database, a duplicate key, a table that already exists, a lost race (deadlock, serialization), a
 * statement the schema refuses (`schema`), or anything else, lost connections and timeouts included
 * (`unreachable`: the outcome of a write in flight is unknown).
 *
 * @example
 * ```ts
 * const c: SqlErrorClass = sqlErrorClass('mysql', err);
 * ```
 */
export type SqlErrorClass =
  'auth' | 'denied' | 'no-table' | 'no-database' | 'duplicate' | 'exists' | 'conflict' | 'schema' | 'unreachable';

const PG: Readonly<Record<string, SqlErrorClass>> = {
  '28P01': 'auth',
  '28000': 'auth',
  '42501': 'denied',
  '42P01': 'no-table',
  '3F000': 'no-table',
  '3D000': 'no-database',
  '23505': 'duplicate',
  '42P07': 'exists',
  '42710': 'exists',
  '40P01': 'conflict',
  '40001': 'conflict',
};

const MY: Readonly<Record<number, SqlErrorClass>> = {
  1045: 'auth',
  1698: 'auth',
  1044: 'denied',
  1142: 'denied',
  1143: 'denied',
  1227: 'denied',
  1146: 'no-table',
  1049: 'no-database',
  1062: 'duplicate',
  1050: 'exists',
  1213: 'conflict',
  1205: 'conflict',
  ...Object.fromEntries([1054, 1064, 1366, 1264, 1406, 1048, 1292].map((n) => [n, 'schema' as const])),
};

/**
 * Classifies an error of `pg` (by its SQLSTATE `code`) or `mysql2` (by the server's `errno`; an error without a
 * `sqlState` came from the network). Errors the server did not send are `unreachable`.
 *
 * @example
 * ```ts
 * sqlErrorClass('mysql', { errno: 1062, sqlState: '23000' }); // 'duplicate'
 * ```
 */
export function sqlErrorClass(dialect: SqlDialect, err: unknown): SqlErrorClass {
  const e = (err ?? {}) as { code?: unknown; errno?: unknown; sqlState?: unknown };
  if (dialect === 'mysql') {
    return typeof e.errno === 'number' && e.sqlState !== undefined ? (MY[e.errno] ?? 'unreachable') : 'unreachable';
  }
  if (typeof e.code !== 'string') return 'unreachable';
  return PG[e.code] ?? (/^(42|22|23)/.test(e.code) ? 'schema' : 'unreachable');
}
