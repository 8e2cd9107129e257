/**
 * The ZooKeeper session pool of the `zookeeper://` and `zookeeper+leaf://` drivers, and
 * re-exports of the client API (zookeeper-api.ts), URLs (zookeeper-url.ts) and sessions
 * (zookeeper-session.ts).
 */
import { registryError } from '../errors.js';
import type { EngineDriverOptions } from './common.js';
import { ZkSession, type ZkSessionOptions } from './zookeeper-session.js';
import type { ParsedZooKeeperUrl } from './zookeeper-url.js';

export { CreateMode, ZkCode, ZkError, isZk, zkFailure, type ZkStat } from './zookeeper-api.js';
export { normalizeZkPath, parseZooKeeperUrl, type ParsedZooKeeperUrl } from './zookeeper-url.js';
export { ZkSession, type MultiBuilder, type ZkSessionOptions, type ZkSessionState } from './zookeeper-session.js';

/**
 * Refuses a session whose timeout (capped by the server's maxSessionTimeout) is shorter than
 * the lease TTL: its ephemeral nodes could vanish while the holder still issues.
 */
export function checkSessionTimeout(session: ZkSession, ttlMs: number, url: string): void {
  if (session.timeoutMs < ttlMs) {
    throw registryError(
      'OPTION',
      `ZooKeeper at ${url} granted a session timeout of ${session.timeoutMs} ms, shorter than the lease TTL of ${ttlMs} ms ` +
        `(its maxSessionTimeout caps it), so the slot could be freed before this holder stops issuing; set ttlMs ≤ ${session.timeoutMs} or raise maxSessionTimeout`,
      { url, ttlMs, sessionTimeoutMs: session.timeoutMs },
    );
  }
}

/**
 * One live session per session timeout: `get(ttl)` returns it, waits for it to reconnect, or
 * opens a new one after an expiry; idle sessions of another TTL are closed.
 */
export class ZkSessionPool {
  private readonly sessions = new Map<number, ZkSession>();
  private readonly opening = new Map<number, Promise<ZkSession>>();
  private closed = false;
  private readonly url: string;
  private readonly opts: Omit<ZkSessionOptions, 'sessionTimeoutMs'>;

  /** The pool of a ZooKeeper driver (either scheme); nothing is connected yet. */
  constructor(parsed: ParsedZooKeeperUrl, o: EngineDriverOptions) {
    this.url = parsed.display;
    this.opts = { hosts: parsed.hosts, url: parsed.display, connectTimeoutMs: o.connectTimeoutMs, logger: o.logger };
  }

  /** A connected session with the requested timeout. Rejects UNREACHABLE or CLOSED. */
  async get(sessionTimeoutMs: number): Promise<ZkSession> {
    this.assertOpen();
    const cur = this.sessions.get(sessionTimeoutMs);
    if (cur && !cur.dead) {
      if (await cur.waitConnected(this.opts.connectTimeoutMs)) return cur;
      if (!cur.dead) {
        throw registryError(
          'UNREACHABLE',
          `ZooKeeper at ${this.url} is unreachable: the session has been disconnected for over ${this.opts.connectTimeoutMs} ms (hosts: ${this.opts.hosts.join(', ')})`,
          { url: this.url, hosts: [...this.opts.hosts] },
        );
      }
    }
    if (cur?.dead) {
      this.sessions.delete(sessionTimeoutMs);
      void cur.close();
    }
    const pending = this.opening.get(sessionTimeoutMs);
    if (pending) return pending;
    const p = (async () => {
      const s = await ZkSession.open({ ...this.opts, sessionTimeoutMs });
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
    })();
    this.opening.set(sessionTimeoutMs, p);
    try {
      return await p;
    } finally {
      this.opening.delete(sessionTimeoutMs);
    }
  }

  /** Closes every session. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled([...this.opening.values()]);
    await Promise.all(all.map((s) => s.close()));
  }

  /** `FLURRY_E_REGISTRY_CLOSED` once closed (the pool closes with its driver). */
  assertOpen(): void {
    if (this.closed)
      throw registryError('CLOSED', `the registry ${this.url} was closed; open a new one`, { url: this.url });
  }
}
