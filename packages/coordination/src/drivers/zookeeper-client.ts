/** What the `zookeeper://` and `zookeeper+leaf://` drivers share: URL, errors, checks, and a base with their sessions. */
import type { ClaimRequest, HolderRecord } from '../driver.js';
import { checkUrlParams, FlurryError } from '@flurry/core';
import { errorText, redactUrl, registryError } from '../errors.js';
import { jsonObject, pickHolder, type EngineDriverOptions } from './common.js';
import { ZkCode, ZkError, ZkSession } from './zookeeper-session.js';

/** The session timeout of the start-up session (reused by claims with the registry's default TTL). */
export const DEFAULT_ZK_SESSION_TIMEOUT_MS = 10_000;

const segmentOk = (s: string): boolean => /^[A-Za-z0-9_.-]+$/.test(s) && s !== '.' && s !== '..';

/** Checks that `p` is `''` or `/seg[/seg…]` (segments of `[A-Za-z0-9_.-]`, not `.` or `..`); no trailing slash. */
export function normalizeZkPath(p: string, what: string, url: string): string {
  const trimmed = p.replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!trimmed.startsWith('/') || !trimmed.slice(1).split('/').every(segmentOk)) {
    throw registryError(
      'URL_INVALID',
      `${what} "${p}" in ${url} is not a valid ZooKeeper path: use /segment[/segment…] with letters, digits, "_", "." and "-" (not "." or "..")`,
      { url, path: p },
    );
  }
  return trimmed;
}

/** Parses `zookeeper[+leaf]://h:p[,h:p]/path?query` by hand (`URL` rejects several hosts); `bad` makes its URL errors. */
export function parseZooKeeperUrl(url: URL | string, scheme: 'zookeeper' | 'zookeeper+leaf', known: string[] = []) {
  const raw = typeof url === 'string' ? url : url.href;
  const display = redactUrl(raw);
  const bad = (why: string, details: Record<string, unknown> = {}): Error =>
    registryError('URL_INVALID', `${display}: ${why}`, { url: display, ...details });
  const m = /^([a-z+]+):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i.exec(raw.trim());
  if (!m || m[1].toLowerCase() !== scheme) {
    const why = `${display} is not a ${scheme}:// URL: use ${scheme}://host:port[,host:port]/path`;
    throw registryError('URL_INVALID', why, { url: display, expected: `${scheme}://` });
  }
  if (m[5] !== undefined) {
    throw bad('it has a fragment ("#…"), which a ZooKeeper registry does not use; remove it', { part: 'fragment' });
  }
  if (m[2].includes('@')) {
    throw bad('credentials in a ZooKeeper URL are not supported (the drivers use open ACLs); remove "user:password@"');
  }
  const hosts = m[2].split(',').map((part) => {
    const hp = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(part.trim());
    const port = hp?.[2] === undefined ? 2181 : Number(hp[2]);
    if (!hp || port < 1 || port > 65535) {
      const why = `"${part}" is not a host[:port] (port 1–65535); list servers as host:port,host:port`;
      throw bad(why, { host: part });
    }
    return `${hp[1]}:${port}`;
  });
  let decoded: string;
  try {
    decoded = decodeURIComponent(m[3] ?? '');
  } catch {
    throw bad('the path has a malformed %-escape', { part: 'path' });
  }
  const path = normalizeZkPath(decoded, 'the path', display);
  const params = new URLSearchParams(m[4] ?? '');
  const none = known.length ? '' : `; a ${scheme}:// registry takes no parameters`;
  checkUrlParams(params, known, (why) => bad(why + none, { part: 'query' }));
  return { hosts, path, params, display, bad };
}

const LOST_WORDS: Record<number, string> = {
  [ZkCode.TIMEOUT]: 'no answer in time',
  [ZkCode.CONNECTION_LOSS]: 'connection lost',
};

/** Maps a ZooKeeper failure to a coded error (expired session: `FLURRY_E_LEASE_LOST`; ACL: `…_AUTH`; else `…_UNREACHABLE`). */
export function zkFailure(err: unknown, display: string, doing: string): FlurryError {
  if (err instanceof FlurryError) return err;
  const at = `${doing}: ZooKeeper at ${display}`;
  if (!(err instanceof ZkError))
    return registryError('UNREACHABLE', `${at} failed: ${errorText(err)}`, { url: display }, err);
  const { zkCode, path } = err;
  if (zkCode === ZkCode.SESSION_EXPIRED) {
    const why = `${doing}: the ZooKeeper session expired (the server stopped hearing from this process for longer than the session timeout); the lease is lost and its ephemeral node gone`;
    return registryError('LEASE_LOST', why, { url: display, zkCode }, err);
  }
  if (zkCode === ZkCode.NO_AUTH || zkCode === ZkCode.AUTH_FAILED) {
    const why = `${at} refused access to ${path} (code ${zkCode}); grant this client create/write/delete on the registry path`;
    return registryError('AUTH', why, { url: display, path, zkCode }, err);
  }
  const lost = LOST_WORDS[zkCode] ?? `ZooKeeper error ${zkCode}`;
  const why = `${at} is unreachable (${lost}); the holder stays fenced until it answers again`;
  return registryError('UNREACHABLE', why, { url: display, path, zkCode }, err);
}

export type ZkHoldersQuery = { dir: string; url: string; opTimeoutMs: number; now(): number };

export function zkTimeMs(t: Buffer): number {
  return t.length >= 8 ? Number(t.readBigInt64BE(0)) : 0;
}

/** A listed holder from its ephemeral node's JSON, the record stamped at its last renewal and the ms since then. */
export function zkHolderRecord(
  slot: number,
  holder: HolderRecord['holder'],
  live: Record<string, unknown>,
  stamped: Buffer | undefined,
  since: number | null,
  highWaterMs: number,
): HolderRecord {
  const numberOr = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  const updated = jsonObject(stamped?.toString('utf8')).updatedAtMs;
  const sessionMs = numberOr(live.sessionTimeoutMs);
  return {
    slot,
    holder,
    heldSinceMs: numberOr(live.claimedAt),
    renewedAtMs: typeof updated === 'number' && Number.isFinite(updated) ? updated : null,
    sinceRenewalMs: since,
    sinceRenewalErrorMs: null,
    expiresInMs: since !== null && sessionMs !== null ? Math.max(0, sessionMs - since) : null,
    ttlMs: numberOr(live.ttlMs),
    highWaterMs,
  };
}

/** What ZkDriverBase reads of a claim: its session (null: made offline), its ephemeral node, the mark it stored. */
export interface ZkClaimState {
  readonly session: ZkSession | null;
  readonly slot: number;
  readonly livePath: string;
  readonly lock?: { release(): void };
  stored: number;
}

type RenewWords = Record<'doing' | 'failing' | 'expired' | 'disconnected', string> & {
  notOwned(taken: boolean): string;
};

/** A driver's claims and its sessions: one live session per session timeout, idle ones of another timeout closed. */
export abstract class ZkDriverBase<S extends ZkClaimState> {
  readonly claims = new Map<string, S>();
  private readonly sessions = new Map<number, ZkSession>();
  private readonly opening = new Map<number, Promise<ZkSession>>();
  private readonly readyDirs = new WeakMap<ZkSession, Set<string>>();
  protected closed = false;
  protected abstract readonly noun: string;
  readonly url: string;
  protected readonly root: string;
  private readonly hosts: readonly string[];

  constructor(
    parsed: ReturnType<typeof parseZooKeeperUrl>,
    readonly opts: EngineDriverOptions,
  ) {
    ({ display: this.url, path: this.root, hosts: this.hosts } = parsed);
  }

  /** Opens the start-up session and runs `first` on it; `offline` may take an UNREACHABLE. */
  async start(first: (s: ZkSession) => Promise<void>, offline?: (err: Error) => void): Promise<this> {
    try {
      await first(await this.session(DEFAULT_ZK_SESSION_TIMEOUT_MS));
    } catch (err) {
      if (offline && (err as { code?: string }).code === 'FLURRY_E_REGISTRY_UNREACHABLE') offline(err as Error);
      else {
        await this.close();
        throw zkFailure(err, this.url, `opening the registry ${this.url}`);
      }
    }
    return this;
  }

  protected checkClaim(req: ClaimRequest): void {
    this.assertOpen();
    const { namespace, slots, ttlMs, preferredSlot: pref } = req;
    const refusals: Array<[boolean, string, Record<string, unknown>]> = [
      [
        typeof namespace !== 'string' || !namespace.split('/').every(segmentOk),
        `namespace "${String(namespace)}" is not usable as a ZooKeeper path: use cluster[/dc-N] with letters, digits, "_", "." and "-"`,
        { namespace },
      ],
      [
        !Number.isSafeInteger(slots) || slots < 1 || slots > 2 ** 31,
        `slots must be an integer from 1 to 2^31, got ${String(slots)}`,
        { slots },
      ],
      [
        !Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > 2 ** 31 - 1,
        `ttlMs must be a positive integer of milliseconds (ZooKeeper session timeouts are 32-bit), got ${String(ttlMs)}`,
        { ttlMs },
      ],
      [
        pref !== undefined && (!Number.isSafeInteger(pref) || pref < 0 || pref >= slots),
        `preferredSlot must be an integer in [0, ${slots}), got ${String(pref)}`,
        { preferredSlot: pref },
      ],
      [!req.holder || typeof req.holder.id !== 'string', 'holder.id must be a string', {}],
    ];
    for (const [bad, why, details] of refusals)
      if (bad) throw registryError('OPTION', why, { url: this.url, ...details });
  }

  protected liveNodeData(req: ClaimRequest, session: ZkSession, extra: object): Buffer {
    const claimedAt = this.opts.clock.now();
    return Buffer.from(
      JSON.stringify({ ...pickHolder(req.holder), ...extra, session: session.sessionIdHex, claimedAt }),
    );
  }

  /** The session for a claim; refuses a session timeout shorter than the TTL (the node could vanish while it issues). */
  protected async claimSession(ttlMs: number): Promise<ZkSession> {
    const session = await this.session(ttlMs);
    if (session.timeoutMs < ttlMs) {
      throw registryError(
        'OPTION',
        `ZooKeeper at ${this.url} granted a session timeout of ${session.timeoutMs} ms, shorter than the lease TTL of ${ttlMs} ms ` +
          `(its maxSessionTimeout caps it), so the slot could be freed before this holder stops issuing; set ttlMs ≤ ${session.timeoutMs} or raise maxSessionTimeout`,
        { url: this.url, ttlMs, sessionTimeoutMs: session.timeoutMs },
      );
    }
    return session;
  }

  protected async session(sessionTimeoutMs: number): Promise<ZkSession> {
    this.assertOpen();
    const { url, hosts } = this;
    const { connectTimeoutMs, logger } = this.opts;
    const cur = this.sessions.get(sessionTimeoutMs);
    if (cur && !cur.dead) {
      if (await cur.waitConnected(connectTimeoutMs)) return cur;
      if (!cur.dead) {
        throw registryError(
          'UNREACHABLE',
          `ZooKeeper at ${url} is unreachable: the session has been disconnected for over ${connectTimeoutMs} ms (hosts: ${hosts.join(', ')})`,
          { url, hosts: [...hosts] },
        );
      }
    }
    if (cur) {
      this.sessions.delete(sessionTimeoutMs);
      void cur.close();
    }
    const pending = this.opening.get(sessionTimeoutMs);
    if (pending) return pending;
    const p = (async () => {
      const s = await ZkSession.open({ hosts, url, sessionTimeoutMs, connectTimeoutMs, logger });
      if (this.closed) {
        await s.close();
        this.assertOpen();
      }
      this.sessions.set(sessionTimeoutMs, s);
      for (const [ttl, other] of this.sessions) {
        if (ttl !== sessionTimeoutMs && (other.holds === 0 || other.dead)) {
          this.sessions.delete(ttl);
          void other.close();
        }
      }
      return s;
    })().finally(() => this.opening.delete(sessionTimeoutMs));
    this.opening.set(sessionTimeoutMs, p);
    return p;
  }

  protected abstract where(st: S): Record<string, unknown>;

  protected assertOpen(): void {
    const url = this.url;
    if (this.closed) throw registryError('CLOSED', `the registry ${url} was closed; open a new one`, { url });
  }

  protected held(claim: { token: string; slot: number }, what: string): S {
    this.assertOpen();
    const st = this.claims.get(claim.token);
    if (st) return st;
    throw registryError(
      'LEASE_LOST',
      `renewing ${what} ${claim.slot} at ${this.url}: this driver holds no such claim (released, lost or from another driver)`,
      { url: this.url, slot: claim.slot },
    );
  }

  /** A renewal: the session alive (else LEASE_LOST) and connected (else UNREACHABLE), the node still its own, then `write`. */
  protected async renewOn(
    token: string,
    st: S,
    s: ZkSession,
    ttlMs: number,
    says: RenewWords,
    write: (opT: number) => Promise<void>,
  ): Promise<void> {
    if (s.dead) {
      this.forget(token, st, 'session expired');
      throw registryError('LEASE_LOST', says.expired, this.where(st));
    }
    if (s.state !== 'connected') throw registryError('UNREACHABLE', says.disconnected, this.where(st));
    if (s.timeoutMs < ttlMs) {
      throw registryError(
        'OPTION',
        `${says.doing}: the ZooKeeper session timeout is ${s.timeoutMs} ms, shorter than the requested TTL of ${ttlMs} ms; set ttlMs ≤ ${s.timeoutMs}`,
        { url: this.url, ttlMs, sessionTimeoutMs: s.timeoutMs },
      );
    }
    // A third of the TTL per operation, within 500 ms..connectTimeoutMs.
    const opT = Math.max(500, Math.min(this.opts.connectTimeoutMs, Math.floor(ttlMs / 3)));
    try {
      const stat = await s.exists(st.livePath, opT);
      if (!s.owns(stat)) throw registryError('LEASE_LOST', says.notOwned(stat !== null), this.where(st));
      await write(opT);
    } catch (err) {
      const e = zkFailure(err, this.url, says.failing);
      if (e.code === 'FLURRY_E_LEASE_LOST') this.forget(token, st, e.message);
      throw e;
    }
  }

  /** A release once the session answers (else UNREACHABLE): `write` if the node is still its own; a lost claim is logged. */
  protected async releaseOn(
    token: string,
    st: S,
    s: ZkSession,
    says: { doing: string; unreachable: string; lost: string },
    write: (opT: number) => Promise<void>,
  ): Promise<void> {
    const lost = (reason: string): void => {
      this.forget(token, st);
      this.opts.logger?.warn({ ...this.where(st), reason }, says.lost);
    };
    const opT = s.opTimeoutMs;
    if (!s.dead && !(await s.waitConnected(opT)) && !s.dead) {
      throw registryError('UNREACHABLE', says.unreachable, this.where(st));
    }
    if (s.dead) return lost('session expired');
    try {
      const stat = await s.exists(st.livePath, opT);
      if (!s.owns(stat)) return lost(stat ? 'slot node owned by another session' : 'slot node gone');
      await write(opT);
      this.forget(token, st);
      this.opts.logger?.info({ ...this.where(st), highWaterMs: st.stored }, `released ${this.noun}`);
    } catch (err) {
      const e = zkFailure(err, this.url, says.doing);
      if (e.code === 'FLURRY_E_LEASE_LOST') return lost(e.message);
      throw e;
    }
  }

  protected forget(token: string, st: S, lostReason?: string): void {
    if (!this.claims.delete(token)) return;
    st.lock?.release();
    if (st.session) st.session.holds = Math.max(0, st.session.holds - 1);
    if (lostReason) this.opts.logger?.warn({ ...this.where(st), reason: lostReason }, `${this.noun} lost`);
  }

  async ensureDirs(session: ZkSession, key: string, dirs: string[]): Promise<void> {
    let ready = this.readyDirs.get(session);
    if (!ready) this.readyDirs.set(session, (ready = new Set()));
    if (ready.has(key)) return;
    await Promise.all(dirs.map((d) => session.mkdirp(d)));
    ready.add(key);
  }

  protected async listHolders(
    namespace: string,
    dir: string,
    read: (session: ZkSession, q: ZkHoldersQuery) => Promise<Array<HolderRecord | undefined>>,
  ): Promise<HolderRecord[]> {
    this.assertOpen();
    try {
      const own = [...this.claims.values()].find((c) => c.session && !c.session.dead)?.session;
      const session = own ?? (await this.session(DEFAULT_ZK_SESSION_TIMEOUT_MS));
      const q = { dir, url: this.url, opTimeoutMs: this.opts.connectTimeoutMs, now: () => this.opts.clock.now() };
      return (await read(session, q)).filter((h) => h !== undefined);
    } catch (err) {
      throw zkFailure(err, this.url, `listing the holders of "${namespace}"`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const st of this.claims.values()) st.lock?.release();
    this.claims.clear();
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled([...this.opening.values()]);
    await Promise.all(all.map((s) => s.close()));
  }
}
