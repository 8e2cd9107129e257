/**
 * `redis://` registry URLs: host, port, database, credentials and key prefix
 * ({@link parseRedisUrl}).
 */
import { checkUrlParams } from '@flurry/core';
import { urlRefusal, userInfo } from './common.js';

/** A parsed `redis://` URL (see {@link parseRedisUrl}). */
export interface RedisUrl {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly tls: boolean;
  readonly username?: string;
  readonly password?: string;
  /** Key prefix, `flurry` by default. */
  readonly prefix: string;
  /**
   * `?allowVolatile=true`: accept a server without `appendonly yes` + `appendfsync always` (it can lose
   * claims and high-water marks on a crash or restart); false by default, and then such a server is refused.
   */
  readonly allowVolatile: boolean;
  /** The URL with the password replaced by `***`. */
  readonly redacted: string;
}

/**
 * Parses a Redis registry URL: `redis://[[user]:password@]host[:port][/db][?prefix=name][&allowVolatile=true]`,
 * or `rediss://` for TLS. Port 6379 and db 0 by default. Rejects with `FLURRY_E_REGISTRY_URL`
 * (the message never contains the password).
 */
export function parseRedisUrl(url: URL | string): RedisUrl {
  const raw = typeof url === 'string' ? url : url.href;
  const bad = urlRefusal(
    'Redis registry',
    raw,
    `Expected redis://[[user]:password@]host:port[/db][?prefix=name][&allowVolatile=true] (or rediss:// for TLS), e.g. redis://127.0.0.1:6379/0.`,
  );
  const m =
    /^(rediss?):\/\/(?:([^/?#]*)@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?(?:\/([^?#]*))?(?:\?([^#]*))?(#.*)?$/i.exec(
      raw,
    );
  if (!m) throw bad('it does not have the form redis://host:port/db');
  if (m[7] !== undefined) throw bad('it has a fragment ("#…"), which a Redis registry does not use; remove it');
  const tls = m[1].toLowerCase() === 'rediss';
  if (m[2] !== undefined && !m[2].includes(':')) throw bad('credentials must be ":password@" or "user:password@"');
  const creds = m[2] === undefined ? undefined : userInfo(m[2], bad);
  if (creds && !creds.password) throw bad('the password after ":" is empty');
  const username = creds?.user || undefined;
  const password = creds?.password;
  const port = m[4] === undefined ? 6379 : Number(m[4]);
  if (port < 1 || port > 65535) throw bad(`port ${m[4]} is outside 1..65535`);
  const dbText = m[5] ?? '';
  if (dbText !== '' && !/^\d{1,5}$/.test(dbText)) throw bad(`the database "${dbText}" is not a number (e.g. /0)`);
  const db = dbText === '' ? 0 : Number(dbText);
  let prefix = 'flurry';
  let allowVolatile = false;
  if (m[6] !== undefined && m[6] !== '') {
    const params = new URLSearchParams(m[6]);
    checkUrlParams(params, ['prefix', 'allowVolatile'], bad);
    const av = params.get('allowVolatile');
    if (av !== null) {
      if (av !== 'true' && av !== 'false') throw bad(`allowVolatile must be true or false, got "${av.slice(0, 40)}"`);
      allowVolatile = av === 'true';
    }
    const p = params.get('prefix');
    if (p !== null) {
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(p))
        throw bad(`the prefix "${p}" must be 1-64 letters, digits, "_", "." or "-"`);
      prefix = p;
    }
  }
  const auth = m[2] === undefined ? '' : `${username ? encodeURIComponent(username) : ''}:***@`;
  const redacted = `${m[1].toLowerCase()}://${auth}${m[3]}:${port}/${db}${prefix === 'flurry' ? '' : `?prefix=${prefix}`}`;
  return { host: m[3].replace(/^\[|\]$/g, ''), port, db, tls, username, password, prefix, allowVolatile, redacted };
}
