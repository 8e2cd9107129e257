/** Store URLs (docs/segments.md, "Stores"); unknown parameters are `FLURRY_E_SEQUENCE_URL`. */
import { checkUrlParams, redactUrl, SQL_DEFAULT_PORT, SQL_SCHEMES, validTableName } from '@flurry/core';
import { sequenceError } from './errors.js';

/** A parsed store URL. */
export type ParsedStoreUrl =
  Url<'postgres' | 'mysql', SqlFields> | Url<'redis', RedisFields> | Url<'memory', { name: string }>;
type Url<K, F> = { kind: K; redacted: string } & F;
type Endpoint = { host: string; port: number };
type SqlFields = Endpoint & { user: string; password: string; database: string; table: string; poolSize: number };
type RedisFields = Endpoint & { db: number; username?: string; password?: string; tls: boolean; prefix: string };

const ALLOWED: Record<ParsedStoreUrl['kind'], string[]> = {
  postgres: ['table', 'pool'],
  mysql: ['table', 'pool'],
  redis: ['prefix'],
  memory: [],
};

/** Parses a store URL; throws `FLURRY_E_SEQUENCE_URL` naming the URL without its password. */
export function parseStoreUrl(url: string): ParsedStoreUrl {
  const redacted = typeof url === 'string' ? redactUrl(url) : String(url);
  const bad = (why: string): Error =>
    sequenceError(
      'URL_INVALID',
      `the sequence store URL ${JSON.stringify(redacted)} is not valid: ${why}. ` +
        `Use postgres://USER:PASSWORD@HOST:PORT/DATABASE, mysql://USER:PASSWORD@HOST:PORT/DATABASE, ` +
        `redis://HOST:PORT/DB or memory://NAME`,
      { url: redacted },
    );
  if (typeof url !== 'string' || url.length === 0) throw bad('it is empty');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad('it cannot be parsed as a URL');
  }
  const scheme = u.protocol.replace(/:$/, '');
  const kinds: Record<string, ParsedStoreUrl['kind']> = {
    ...SQL_SCHEMES,
    redis: 'redis',
    rediss: 'redis',
    memory: 'memory',
  };
  const kind = Object.hasOwn(kinds, scheme) ? kinds[scheme] : undefined;
  if (!kind)
    throw bad(`the scheme "${scheme}" is not one of postgres, postgresql, mysql, mariadb, redis, rediss, memory`);
  checkUrlParams(u.searchParams, ALLOWED[kind], bad);
  const dec = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw bad('the user or password has a malformed %-escape');
    }
  };
  if (kind === 'memory') return { kind, redacted, name: `${u.host}${u.pathname}`.replace(/\/+$/, '') };
  if (!u.hostname) throw bad('it names no host');
  const defaultPort = kind === 'redis' ? 6379 : SQL_DEFAULT_PORT[kind];
  const port = u.port ? Number(u.port) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad(`the port ${u.port} is out of 1…65535`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (kind === 'redis') {
    const dbText = u.pathname.replace(/^\//, '') || '0';
    const db = Number(dbText);
    if (!/^\d+$/.test(dbText) || db > 15) throw bad(`the database "${dbText}" is not a number from 0 to 15`);
    const prefix = u.searchParams.get('prefix') ?? 'flurry:seq:';
    if (!/^[A-Za-z0-9_.:{}-]{1,100}$/.test(prefix))
      throw bad(`the prefix "${prefix}" must be 1 to 100 of A-Z a-z 0-9 _ . : { } -`);
    return {
      kind,
      redacted,
      host,
      port,
      db,
      ...(u.username ? { username: dec(u.username) } : {}),
      ...(u.password ? { password: dec(u.password) } : {}),
      tls: scheme === 'rediss',
      prefix,
    };
  }
  const database = dec(u.pathname.replace(/^\//, ''));
  if (!database || database.includes('/')) throw bad('it names no database (…/DATABASE)');
  if (!u.username) throw bad('it names no user (USER:PASSWORD@HOST)');
  const table = u.searchParams.get('table') ?? 'leaf_alloc';
  if (!validTableName(table))
    throw bad(
      `the table "${String(table)}" is not a plain SQL identifier (letters, digits, _; optionally schema.table)`,
    );
  const poolText = u.searchParams.get('pool') ?? '4';
  const poolSize = Number(poolText);
  if (!/^\d+$/.test(poolText) || poolSize < 1 || poolSize > 64)
    throw bad(`pool=${poolText} is not a number from 1 to 64`);
  return { kind, redacted, host, port, user: dec(u.username), password: dec(u.password), database, table, poolSize };
}
