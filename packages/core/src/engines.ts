// The pure half of engine access shared by the registries, the segment stores and `flurry sql` (docs/architecture.md,
// "Engine access"): no client and no I/O here.
import { FlurryError } from './errors.js';
import { closestName } from './known-options.js';
import type { SqlDialect } from './sql/ddl.js';

/** The logger Flurry writes to: pino's call shape (`logger.warn({ err }, 'message')`); pino fits. */
export interface FlurryLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/** Replaces the password of a URL with `***` before it appears in a message or a log. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

/** `***` for everything between `//` and the authority's last `@`: safe for a URL too malformed to parse. */
export function redactLoosely(raw: string): string {
  const m = /^([A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(raw);
  if (!m) return raw.replace(/:[^:@/]*@/, ':***@');
  const at = m[2].lastIndexOf('@');
  return at < 0 ? raw : `${m[1]}***@${m[2].slice(at + 1)}${m[3]}`;
}

/** URL schemes of the SQL engines and their dialect (`mariadb:` is MySQL's dialect). */
export const SQL_SCHEMES: Readonly<Record<string, SqlDialect>> = {
  postgres: 'postgres',
  postgresql: 'postgres',
  mysql: 'mysql',
  mariadb: 'mysql',
};

/** The port of a SQL URL that names none. */
export const SQL_DEFAULT_PORT: Readonly<Record<SqlDialect, number>> = { postgres: 5432, mysql: 3306 };

/** Whether `table` is a plain SQL table name, optionally qualified by a schema (PostgreSQL) or database (MySQL). */
export function validTableName(table: unknown): table is string {
  return typeof table === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/.test(table);
}

/** Quotes a (valid) table name for the dialect: `"ops"."t"` or `` `ops`.`t` ``. */
export function quoteSqlTable(dialect: SqlDialect, table: string): string {
  const q = dialect === 'postgres' ? '"' : '`';
  return table.replace(/[^.]+/g, (p) => q + p + q);
}

// Each class's PostgreSQL SQLSTATEs and MySQL/MariaDB server error numbers.
const CODES = {
  auth: '28P01 28000 1045 1698',
  denied: '42501 1044 1142 1143 1227',
  'no-table': '42P01 3F000 1146',
  'no-database': '3D000 1049',
  duplicate: '23505 1062',
  exists: '42P07 42710 1050',
  conflict: '40P01 40001 1213 1205',
  schema: '1054 1064 1366 1264 1406 1048 1292',
  unreachable: '',
} as const;
const classOf = (code: string): SqlErrorClass | undefined =>
  (Object.keys(CODES) as SqlErrorClass[]).find((c) => CODES[c].split(' ').includes(code));

/**
 * What kind of failure a SQL error is: refused credentials (`auth`), a missing privilege (`denied`), a missing table or
 * database, a duplicate key, a table that already exists, a lost race (`conflict`: deadlock, serialization), a
 * statement the schema refuses (`schema`), or anything else, lost connections and timeouts included (`unreachable`: the
 * outcome of a write in flight is unknown).
 */
export type SqlErrorClass = keyof typeof CODES;

/**
 * Classifies an error of `pg` (by its SQLSTATE `code`) or `mysql2` (by the server's `errno`; an error without a
 * `sqlState` came from the network). Errors the server did not send are `unreachable`.
 */
export function sqlErrorClass(dialect: SqlDialect, err: unknown): SqlErrorClass {
  const e = (err ?? {}) as { code?: unknown; errno?: unknown; sqlState?: unknown };
  if (dialect === 'mysql')
    return (typeof e.errno === 'number' && e.sqlState !== undefined && classOf(String(e.errno))) || 'unreachable';
  if (typeof e.code !== 'string') return 'unreachable';
  return classOf(e.code) ?? (/^(42|22|23)/.test(e.code) ? 'schema' : 'unreachable');
}

/** The npm client of each engine (an optional peer dependency of the package that uses it) and what to install. */
export const ENGINE_CLIENTS = {
  postgres: { pkg: 'pg', install: 'pg@8' },
  mysql: { pkg: 'mysql2', install: 'mysql2@3' },
  redis: { pkg: 'ioredis', install: 'ioredis@6' },
  etcd: { pkg: 'etcd3', install: 'etcd3@1' },
  zookeeper: { pkg: 'node-zookeeper-client', install: 'node-zookeeper-client@1' },
} as const;

/**
 * Loads an engine's client with the caller's `import()`; when that fails, throws what `missing` makes of "`user` needs
 * the npm package …, which is not installed: run npm install …" (the caller's `…_CLIENT_MISSING`).
 */
export async function loadClient<M>(
  engine: keyof typeof ENGINE_CLIENTS,
  user: string,
  load: () => Promise<M>,
  missing: (message: string, pkg: string, err: unknown) => Error,
): Promise<M> {
  try {
    return await load();
  } catch (err) {
    const { pkg, install } = ENGINE_CLIENTS[engine];
    throw missing(
      `${user} needs the npm package "${pkg}", which is not installed: run npm install ${install}`,
      pkg,
      err,
    );
  }
}

/** Refuses a URL query parameter a driver would ignore: unknown or given twice (naming it, never its value). */
export function checkUrlParams(params: URLSearchParams, known: readonly string[], bad: (why: string) => Error): void {
  const seen = new Set<string>();
  for (const key of params.keys()) {
    if (!known.includes(key)) {
      const near = closestName(key, known);
      throw bad(
        `unknown parameter "${key}"${near !== undefined ? `; did you mean "${near}"?` : ''} (known: ${known.join(', ') || 'none'})`,
      );
    }
    if (seen.has(key)) throw bad(`the parameter "${key}" is given twice; give it once`);
    seen.add(key);
  }
}

/**
 * The ioredis options the Redis registry and the Redis store share: no offline queue of retried commands, the first
 * connection fails fast, and after it (`connected()` true) reconnects run in the background ≤ 1 s apart.
 */
export function redisClientOptions(
  u: { host: string; port: number; db: number; username?: string; password?: string; tls?: boolean },
  timeoutMs: number,
  connectionName: string,
  connected: () => boolean,
) {
  return {
    host: u.host,
    port: u.port,
    db: u.db,
    ...(u.username !== undefined ? { username: u.username } : {}),
    ...(u.password !== undefined ? { password: u.password } : {}),
    ...(u.tls ? { tls: { servername: u.host } } : {}),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectionName,
    retryStrategy: (times: number) => (connected() ? Math.min(50 * 2 ** Math.min(times, 5), 1000) : null),
  };
}

/**
 * Connects an ioredis client built with {@link redisClientOptions} and `extra`, waits for its PING, then runs `ready`.
 * On failure the client is disconnected and the rejection is the cause: the last connection error ioredis reported (its
 * own rejection only says the connection closed) unless the server refused the credentials, or a `FlurryError` of
 * `ready`. Connection errors after that go to `onError`.
 */
export async function connectRedis<C extends RedisLike>(
  Redis: new (options: ReturnType<typeof redisClientOptions>) => C,
  u: Parameters<typeof redisClientOptions>[0],
  timeoutMs: number,
  connectionName: string,
  extra: object,
  onError: (err: unknown) => void = () => undefined,
  ready: (client: C) => Promise<void> = () => Promise.resolve(),
): Promise<C> {
  let connected = false;
  let lastError: unknown;
  const client = new Redis({ ...redisClientOptions(u, timeoutMs, connectionName, () => connected), ...extra });
  client.on('error', (err: unknown) => {
    lastError = err;
    if (connected) onError(err);
  });
  try {
    await client.connect();
    await client.ping();
    await ready(client);
  } catch (err) {
    client.disconnect(false);
    throw err instanceof FlurryError || lastError === undefined || isRedisAuthError(err) ? err : lastError;
  }
  connected = true;
  return client;
}

/** The part of an ioredis client {@link connectRedis} uses. */
export interface RedisLike {
  on(event: 'error', listener: (err: unknown) => void): unknown;
  connect(): Promise<void>;
  ping(): Promise<unknown>;
  disconnect(reconnect?: boolean): void;
}

/** Whether a Redis error is a refusal of the credentials or of the ACL (`WRONGPASS`, `NOAUTH`, `NOPERM`). */
export function isRedisAuthError(err: unknown): boolean {
  return /\b(WRONGPASS|NOAUTH|NOPERM)\b|invalid password|invalid username/i.test(
    err instanceof Error ? err.message : String(err),
  );
}

/**
 * Reads `appendonly` and `appendfsync` through `configGet` (the client's `CONFIG GET name`, resolving to its `[name,
 * value]` reply). `durable`: `appendonly yes` with `appendfsync always`, every acknowledged write on disk. Never
 * rejects: a failed read is reported in `checkError` and counts as not durable.
 */
export async function readRedisPersistence(configGet: (parameter: string) => Promise<unknown>) {
  const value = async (name: string): Promise<string | undefined> => {
    const reply = await configGet(name);
    return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
  };
  let appendonly: string | undefined;
  let appendfsync: string | undefined;
  let checkError: string | undefined;
  try {
    appendonly = await value('appendonly');
    appendfsync = await value('appendfsync');
  } catch (err) {
    checkError = err instanceof Error ? err.message : String(err);
  }
  return {
    appendonly,
    appendfsync,
    checkError,
    durable: checkError === undefined && appendonly === 'yes' && appendfsync === 'always',
  };
}

/** The persistence settings a Redis server reported ({@link readRedisPersistence}). */
export type RedisPersistence = Awaited<ReturnType<typeof readRedisPersistence>>;

/** Why a Redis that is not durable is refused: its settings, what a lost write `loses`, the fix and the `allowance`. */
export function volatileRedisReason(p: RedisPersistence, subject: string, loses: string, allowance: string): string {
  return (
    (p.checkError !== undefined
      ? `cannot check the persistence of ${subject} (CONFIG GET failed: ${p.checkError})`
      : `${subject} runs with appendonly ${p.appendonly ?? '?'} and appendfsync ${p.appendfsync ?? '?'}`) +
    `: Redis acknowledges a write before it is on disk, so after a crash, a restart or a failover it can come back ` +
    `without writes it acknowledged: ${loses}. Configure appendonly yes and appendfsync always ` +
    `(CONFIG SET appendonly yes; CONFIG SET appendfsync always; and in redis.conf), or accept the risk with ${allowance}`
  );
}
