/** `etcd://` registry URLs ({@link parseEtcdUrl}); several hosts need the string form. */
import { checkUrlParams } from '@flurry/core';
import { urlRefusal, userInfo, validNamespace } from './common.js';

/** A parsed `etcd://` URL (see {@link parseEtcdUrl}). */
export interface EtcdUrl {
  /** `http://h:p` or `https://h:p` for each host. */
  readonly hosts: string[];
  readonly username?: string;
  readonly password?: string;
  /** Key prefix without a trailing slash, e.g. `/flurry`. */
  readonly prefix: string;
  /** The URL with the password replaced by `***`. */
  readonly redacted: string;
}

const DEFAULT_PREFIX = '/flurry';

/**
 * Parses an etcd registry URL: `etcd://[user:pass@]host:port[,host:port…][/prefix]`, or
 * `etcds://…` for TLS. A missing port is 2379; a missing prefix is `/flurry`. Rejects with
 * `FLURRY_E_REGISTRY_URL` (the message never contains the password).
 */
export function parseEtcdUrl(url: URL | string): EtcdUrl {
  const raw = typeof url === 'string' ? url : url.href;
  const bad = urlRefusal(
    'etcd registry',
    raw,
    `Expected etcd://[user:password@]host:port[,host:port…]/prefix (or etcds:// for TLS), e.g. etcd://127.0.0.1:2379/flurry.`,
  );
  const m = /^(etcds?):\/\/(?:([^/?#]*)@)?([^/?#@]+)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/i.exec(raw);
  if (!m) throw bad('it does not have the form scheme://hosts/prefix');
  if (m[5] !== undefined && m[5] !== '?') {
    checkUrlParams(new URLSearchParams(m[5]), [], bad);
  }
  if (m[6] !== undefined) throw bad('it has a fragment ("#…"), which an etcd registry does not use; remove it');
  const tls = m[1].toLowerCase() === 'etcds';
  const { user: username, password } =
    m[2] === undefined ? { user: undefined, password: undefined } : userInfo(m[2], bad);
  if (m[2] !== undefined && (!username || !password))
    throw bad('etcd authentication needs both a user name and a password (user:password@)');
  const hosts: string[] = [];
  for (const part of m[3].split(',')) {
    const hm = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(part.trim());
    if (!hm) throw bad(`"${part}" is not host:port`);
    const port = hm[2] === undefined ? 2379 : Number(hm[2]);
    if (port < 1 || port > 65535) throw bad(`port ${hm[2]} is outside 1..65535`);
    hosts.push(`${tls ? 'https' : 'http'}://${hm[1]}:${port}`);
  }
  let prefix = (m[4] ?? '').replace(/\/+$/, '');
  if (prefix === '') prefix = DEFAULT_PREFIX;
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(prefix) || !validNamespace(prefix.slice(1))) {
    throw bad(
      `the prefix "${prefix}" may only contain letters, digits, "_", ".", "-" and "/" between segments (no segment of only dots)`,
    );
  }
  const auth = username === undefined ? '' : `${encodeURIComponent(username)}:***@`;
  const redacted = `${m[1].toLowerCase()}://${auth}${m[3]}${prefix}`;
  return { hosts, username, password, prefix, redacted };
}
