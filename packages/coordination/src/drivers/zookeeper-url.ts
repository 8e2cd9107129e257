/**
 * ZooKeeper registry URLs: `zookeeper://h:p[,h:p]/path?…` (and `zookeeper+leaf://…`) →
 * hosts, path, query. The WHATWG `URL` class rejects several `host:port` pairs, so the
 * string form is accepted too.
 */
import { redactUrl, registryError } from '../errors.js';

/** What {@link parseZooKeeperUrl} returns. */
export interface ParsedZooKeeperUrl {
  /** `host:port` pairs in the order given (port 2181 when omitted). */
  readonly hosts: string[];
  /** The path without a trailing slash; `''` for the root. */
  readonly path: string;
  readonly params: URLSearchParams;
  /** The URL without a password, for messages. */
  readonly display: string;
}

const SEGMENT = /^[A-Za-z0-9_.-]+$/;

/**
 * Checks that `p` is `''` or `/seg[/seg…]` with segments of `[A-Za-z0-9_.-]` (not `.` or
 * `..`), the form every path of these drivers takes; returns it without a trailing slash.
 */
export function normalizeZkPath(p: string, what: string, url: string): string {
  const trimmed = p.replace(/\/+$/, '');
  if (trimmed === '') return '';
  const segs = trimmed.split('/');
  if (segs[0] !== '' || segs.slice(1).some((s) => !SEGMENT.test(s) || s === '.' || s === '..')) {
    throw registryError(
      'URL_INVALID',
      `${what} "${p}" in ${url} is not a valid ZooKeeper path: use /segment[/segment…] with letters, digits, "_", "." and "-" (not "." or "..")`,
      { url, path: p },
    );
  }
  return trimmed;
}

/**
 * Parses `zookeeper://h:p[,h:p]/path?query` (or `zookeeper+leaf://…`). Accepts a `URL`
 * or the string (several hosts cannot be held by a `URL`). Throws
 * `FLURRY_E_REGISTRY_URL` for a wrong scheme, a missing host, a bad port or a bad path.
 */
export function parseZooKeeperUrl(url: URL | string, scheme: 'zookeeper' | 'zookeeper+leaf'): ParsedZooKeeperUrl {
  const raw = typeof url === 'string' ? url : url.href;
  const display = redactUrl(raw);
  const m = /^([a-z+]+):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i.exec(raw.trim());
  if (!m || m[1].toLowerCase() !== scheme) {
    throw registryError(
      'URL_INVALID',
      `${display} is not a ${scheme}:// URL: use ${scheme}://host:port[,host:port]/path`,
      { url: display, expected: `${scheme}://` },
    );
  }
  if (m[5] !== undefined) {
    throw registryError(
      'URL_INVALID',
      `${display}: it has a fragment ("#…"), which a ZooKeeper registry does not use; remove it`,
      { url: display, part: 'fragment' },
    );
  }
  const authority = m[2].includes('@') ? m[2].slice(m[2].lastIndexOf('@') + 1) : m[2];
  if (m[2].includes('@')) {
    throw registryError(
      'URL_INVALID',
      `${display}: credentials in a ZooKeeper URL are not supported (the drivers use open ACLs); remove "user:password@"`,
      { url: display },
    );
  }
  const hosts: string[] = [];
  for (const part of authority.split(',')) {
    const hp = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(part.trim());
    const port = hp?.[2] === undefined ? 2181 : Number(hp[2]);
    if (!hp || port < 1 || port > 65535) {
      throw registryError(
        'URL_INVALID',
        `${display}: "${part}" is not a host[:port] (port 1–65535); list servers as host:port,host:port`,
        { url: display, host: part },
      );
    }
    hosts.push(`${hp[1]}:${port}`);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(m[3] ?? '');
  } catch {
    throw registryError('URL_INVALID', `${display}: the path has a malformed %-escape`, { url: display, part: 'path' });
  }
  const path = normalizeZkPath(decoded, 'the path', display);
  return { hosts, path, params: new URLSearchParams(m[4] ?? ''), display };
}
