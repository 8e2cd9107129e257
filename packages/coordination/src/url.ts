/** Registry URLs (docs/node-ids.md, "Registry URLs"); parsing throws only `FLURRY_E_REGISTRY_URL`, never with a password. */
import path from 'node:path';
import { checkUrlParams, SQL_DEFAULT_PORT, SQL_SCHEMES, type SqlSslMode } from '@flurry/core';
import { redactUrl, registryError } from './errors.js';
import { urlRefusal, userInfo, validNamespace } from './drivers/common.js';
import { DEFAULT_REGISTRY_TABLE, validTableName } from './drivers/sql-table.js';

/** The backends a URL can name. */
export type RegistryKind =
  'file' | 'zookeeper' | 'zookeeper+leaf' | 'etcd' | 'redis' | 'postgres' | 'mysql' | 'static' | 'k8s';

/** A parsed registry URL. */
export type ParsedRegistryUrl = { readonly url: string; readonly redacted: string } & (
  | { readonly kind: 'file'; readonly dir: string | undefined }
  | { readonly kind: 'static'; readonly slot: number }
  | { readonly kind: 'k8s' }
  | { readonly kind: Exclude<RegistryKind, 'file' | 'static' | 'k8s'>; readonly scheme: string }
);

// Each driver's own parse…Url refuses every part it would not use.
const ENGINE_SCHEMES: Record<string, 'zookeeper' | 'zookeeper+leaf' | 'etcd' | 'redis'> = {
  zookeeper: 'zookeeper',
  'zookeeper+leaf': 'zookeeper+leaf',
  etcd: 'etcd',
  etcds: 'etcd',
  redis: 'redis',
  rediss: 'redis',
};

const FORMS =
  'file:, file:/abs/dir, zookeeper://host:port[,host:port]/path, zookeeper+leaf://host:port/path, ' +
  'etcd://[user:pass@]host:port[,host:port]/prefix, redis://[:pass@]host:port/db, ' +
  'postgres://user:pass@host:port/db[?table=name], mysql://user:pass@host:port/db[?table=name], static:N or k8s:';

/** `host[:port]`, the host a name or a bracketed IPv6 address. */
const HOST_PORT_RE = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/;

function bad(raw: string, why: string): Error {
  const url = redactUrl(raw);
  return registryError('URL_INVALID', `registry URL "${url}" is invalid: ${why}. Use one of: ${FORMS}`, { url });
}

/** Parses and checks a registry URL (the engine drivers check their part further). */
export function parseRegistryUrl(raw: string): ParsedRegistryUrl {
  if (typeof raw !== 'string' || raw.trim() === '') throw bad(String(raw), 'it is empty');
  const url = raw.trim();
  if (/[\s]/.test(url)) throw bad(url, 'it contains white space');
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s.exec(url);
  if (!m) throw bad(url, 'it has no scheme');
  const scheme = m[1].toLowerCase();
  const rest = m[2];
  const redacted = redactUrl(url);
  if (scheme === 'file') {
    if (rest === '' || rest === '//' || rest === '///') return { kind: 'file', url, redacted, dir: undefined };
    const [, host, afterHost] = /^\/\/([^/]*)(.*)$/s.exec(rest) ?? [];
    if (host !== undefined && host !== '' && host !== 'localhost')
      throw bad(url, `a file registry is local; the host "${host}" is not allowed (use file:///abs/dir)`);
    const p = host === undefined ? rest : afterHost || '/';
    if (!p.startsWith('/')) throw bad(url, 'the directory must be absolute (file:/abs/dir)');
    if (p.includes('?') || p.includes('#')) throw bad(url, 'a file registry URL takes no query or fragment');
    let decoded: string;
    try {
      decoded = decodeURIComponent(p);
    } catch {
      throw bad(url, 'the path has a malformed %-escape');
    }
    if (decoded.includes('\0')) throw bad(url, 'the path contains a NUL character');
    return { kind: 'file', url, redacted, dir: path.normalize(decoded) };
  }
  if (scheme === 'static') {
    if (!/^\d{1,10}$/.test(rest) || Number(rest) > 2 ** 31 - 1)
      throw bad(url, 'static:N takes a decimal node ID from 0 (e.g. static:3)');
    return { kind: 'static', url, redacted, slot: Number(rest) };
  }
  if (scheme === 'k8s' || scheme === 'kubernetes') {
    if (rest !== '' && rest !== '//')
      throw bad(url, 'k8s: takes nothing after the colon (the ordinal comes from $POD_NAME or $HOSTNAME)');
    return { kind: 'k8s', url, redacted };
  }
  const sqlDialect = SQL_SCHEMES[scheme];
  if (sqlDialect) return { kind: sqlDialect, url, redacted: parseSqlUrl(url).redacted, scheme };
  const kind = ENGINE_SCHEMES[scheme];
  if (!kind) throw bad(url, `unknown scheme "${scheme}:"`);
  if (rest.includes('#')) throw bad(url, 'it has a fragment ("#…"), which no registry uses; remove it');
  const hm = /^\/\/(?:[^@/]*@)?([^/?#@]+)(\/[^?#]*)?(\?[^#]*)?$/.exec(rest);
  if (!hm) throw bad(url, `expected ${scheme}://host:port…`);
  for (const hp of hm[1].split(',')) {
    const h = HOST_PORT_RE.exec(hp);
    if (!h || (h[2] !== undefined && (Number(h[2]) < 1 || Number(h[2]) > 65535)))
      throw bad(url, `"${hp}" is not host[:port] (port 1 to 65535); separate several servers with commas`);
  }
  return { kind, url, redacted, scheme };
}

/** `scheme://[userinfo@]host[:port][/path][?query][#fragment]` (Redis and SQL URLs): groups 1 to 7 in that order. */
const SERVER_URL_RE =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([^/?#]*)@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?(?:\/([^?#]*))?(?:\?([^#]*))?(#.*)?$/;

function portOf(text: string | undefined, fallback: number, bad: (why: string) => Error): number {
  const port = text === undefined ? fallback : Number(text);
  if (port < 1 || port > 65535) throw bad(`port ${text} is outside 1..65535`);
  return port;
}

/** A parsed `etcd://` URL: `http(s)://h:p` per host, the key prefix without a trailing slash. */
export type EtcdUrl = Readonly<ReturnType<typeof parseEtcdUrl>>;

function credentials(text: string | undefined, bad: (why: string) => Error): { user?: string; password?: string } {
  return text === undefined ? {} : userInfo(text, bad);
}

/** The query of a server URL (nothing for none or a bare "?"), refusing any parameter not in `allowed`. */
function queryOf(text: string | undefined, allowed: string[], bad: (why: string) => Error): URLSearchParams {
  const params = new URLSearchParams(text ?? '');
  checkUrlParams(params, allowed, bad);
  return params;
}

/** Parses `etcd[s]://[user:pass@]host[:port][,host[:port]…][/prefix]` (port 2379, prefix `/flurry`). */
export function parseEtcdUrl(url: URL | string) {
  const raw = typeof url === 'string' ? url : url.href;
  const bad = urlRefusal(
    'etcd registry',
    raw,
    `Expected etcd://[user:password@]host:port[,host:port…]/prefix (or etcds:// for TLS), e.g. etcd://127.0.0.1:2379/flurry.`,
  );
  const m = /^(etcds?):\/\/(?:([^/?#]*)@)?([^/?#@]+)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/i.exec(raw);
  if (!m) throw bad('it does not have the form scheme://hosts/prefix');
  queryOf(m[5], [], bad);
  if (m[6] !== undefined) throw bad('it has a fragment ("#…"), which an etcd registry does not use; remove it');
  const tls = m[1].toLowerCase() === 'etcds';
  const { user: username, password } = credentials(m[2], bad);
  if (m[2] !== undefined && (!username || !password))
    throw bad('etcd authentication needs both a user name and a password (user:password@)');
  const hosts: string[] = [];
  for (const part of m[3].split(',')) {
    const hm = HOST_PORT_RE.exec(part.trim());
    if (!hm) throw bad(`"${part}" is not host:port`);
    hosts.push(`${tls ? 'https' : 'http'}://${hm[1]}:${portOf(hm[2], 2379, bad)}`);
  }
  const prefix = (m[4] ?? '').replace(/\/+$/, '') || '/flurry';
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(prefix) || !validNamespace(prefix.slice(1))) {
    throw bad(
      `the prefix "${prefix}" may only contain letters, digits, "_", ".", "-" and "/" between segments (no segment of only dots)`,
    );
  }
  const auth = username === undefined ? '' : `${encodeURIComponent(username)}:***@`;
  const redacted = `${m[1].toLowerCase()}://${auth}${m[3]}${prefix}`;
  return { hosts, username, password, prefix, redacted };
}

/** A parsed `redis://` URL; `allowVolatile` accepts a server without fsync on every write (it can lose marks). */
export type RedisUrl = Readonly<ReturnType<typeof parseRedisUrl>>;

/** Parses `redis[s]://[[user]:password@]host[:port][/db][?prefix=name][&allowVolatile=true]` (6379, db 0). */
export function parseRedisUrl(url: URL | string) {
  const raw = typeof url === 'string' ? url : url.href;
  const bad = urlRefusal(
    'Redis registry',
    raw,
    `Expected redis://[[user]:password@]host:port[/db][?prefix=name][&allowVolatile=true] (or rediss:// for TLS), e.g. redis://127.0.0.1:6379/0.`,
  );
  const m = SERVER_URL_RE.exec(raw);
  if (!m || !/^rediss?$/i.test(m[1])) throw bad('it does not have the form redis://host:port/db');
  if (m[7] !== undefined) throw bad('it has a fragment ("#…"), which a Redis registry does not use; remove it');
  const tls = m[1].toLowerCase() === 'rediss';
  if (m[2] !== undefined && !m[2].includes(':')) throw bad('credentials must be ":password@" or "user:password@"');
  const { user, password } = credentials(m[2], bad);
  if (m[2] !== undefined && !password) throw bad('the password after ":" is empty');
  const username = user || undefined;
  const port = portOf(m[4], 6379, bad);
  const dbText = m[5] ?? '';
  if (dbText !== '' && !/^\d{1,5}$/.test(dbText)) throw bad(`the database "${dbText}" is not a number (e.g. /0)`);
  const db = dbText === '' ? 0 : Number(dbText);
  const params = queryOf(m[6], ['prefix', 'allowVolatile'], bad);
  const av = params.get('allowVolatile') ?? 'false';
  if (av !== 'true' && av !== 'false') throw bad(`allowVolatile must be true or false, got "${av.slice(0, 40)}"`);
  const allowVolatile = av === 'true';
  const prefix = params.get('prefix') ?? 'flurry';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(prefix))
    throw bad(`the prefix "${prefix}" must be 1-64 letters, digits, "_", "." or "-"`);
  const auth = m[2] === undefined ? '' : `${username ? encodeURIComponent(username) : ''}:***@`;
  const redacted = `${m[1].toLowerCase()}://${auth}${m[3]}:${port}/${db}${prefix === 'flurry' ? '' : `?prefix=${prefix}`}`;
  return { host: m[3].replace(/^\[|\]$/g, ''), port, db, tls, username, password, prefix, allowVolatile, redacted };
}

/** A parsed SQL registry URL (`redacted`: the password replaced by `***`). */
export type SqlUrl = Readonly<ReturnType<typeof parseSqlUrl>>;

const SSL_MODES: readonly SqlSslMode[] = ['disable', 'require', 'verify-full'];

/** Parses a `postgres://`, `postgresql://`, `mysql://` or `mariadb://` registry URL (`?table=schema.name`, `?sslmode=`). */
export function parseSqlUrl(raw: string) {
  const bad = urlRefusal(
    'SQL registry',
    raw,
    `Expected postgres://[user[:password]@]host[:port]/database[?table=name&sslmode=disable|require|verify-full] or mysql://… (mariadb:// too), e.g. postgres://app:secret@127.0.0.1:5432/orders?table=flurry_nodes`,
  );
  if (typeof raw !== 'string') throw bad('it is not a string');
  const m = SERVER_URL_RE.exec(raw.trim());
  if (!m) throw bad('it does not have the form scheme://[user[:password]@]host[:port]/database');
  const scheme = m[1].toLowerCase();
  const dialect = SQL_SCHEMES[scheme];
  if (!dialect) throw bad(`the scheme "${scheme}:" is not postgres:, postgresql:, mysql: or mariadb:`);
  if (m[7] !== undefined) throw bad('a fragment (#…) is not allowed');
  const { user, password } = credentials(m[2], bad);
  if (user === '') throw bad('the user before "@" is empty');
  const port = portOf(m[4], SQL_DEFAULT_PORT[dialect], bad);
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
  for (const [key, value] of queryOf(m[6], ['table', 'sslmode'], bad)) {
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
  const auth = user === undefined ? '' : `${encodeURIComponent(user)}${password === undefined ? '' : ':***'}@`;
  const query = [table !== DEFAULT_REGISTRY_TABLE && `table=${table}`, sslmode !== 'disable' && `sslmode=${sslmode}`]
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
