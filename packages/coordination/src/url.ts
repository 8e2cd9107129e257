/**
 * Registry URLs: one string picks the backend and where it is (docs/node-ids.md, "Registry
 * URLs"). Parsing throws only `FLURRY_E_REGISTRY_URL`, never with a password.
 */
import path from 'node:path';
import { SQL_SCHEMES } from '@flurry/core';
import { redactUrl, registryError } from './errors.js';
import { parseSqlUrl } from './drivers/sql-url.js';

/** The backends a URL can name. */
export type RegistryKind =
  'file' | 'zookeeper' | 'zookeeper+leaf' | 'etcd' | 'redis' | 'postgres' | 'mysql' | 'static' | 'k8s';

/** A parsed registry URL. */
export type ParsedRegistryUrl =
  | { readonly kind: 'file'; readonly url: string; readonly redacted: string; readonly dir: string | undefined }
  | { readonly kind: 'static'; readonly url: string; readonly redacted: string; readonly slot: number }
  | { readonly kind: 'k8s'; readonly url: string; readonly redacted: string }
  | {
      readonly kind: 'zookeeper' | 'zookeeper+leaf' | 'etcd' | 'redis' | 'postgres' | 'mysql';
      readonly url: string;
      readonly redacted: string;
      readonly scheme: string;
    };

// An engine scheme maps to its kind here (its driver module: open-registry.ts's ENGINES); each driver's own
// parse…Url refuses every part it would not use.
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

function bad(raw: string, why: string): Error {
  return registryError('URL_INVALID', `registry URL "${redactUrl(raw)}" is invalid: ${why}. Use one of: ${FORMS}`, {
    url: redactUrl(raw),
  });
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
    let p: string;
    if (rest.startsWith('//')) {
      const afterHost = rest.slice(2);
      const slash = afterHost.indexOf('/');
      const host = slash < 0 ? afterHost : afterHost.slice(0, slash);
      if (host !== '' && host !== 'localhost')
        throw bad(url, `a file registry is local; the host "${host}" is not allowed (use file:///abs/dir)`);
      p = slash < 0 ? '/' : afterHost.slice(slash);
    } else {
      p = rest;
    }
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
    const h = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(hp);
    if (!h || (h[2] !== undefined && (Number(h[2]) < 1 || Number(h[2]) > 65535))) {
      throw bad(url, `"${hp}" is not host[:port] (port 1 to 65535); separate several servers with commas`);
    }
  }
  return { kind, url, redacted, scheme };
}
