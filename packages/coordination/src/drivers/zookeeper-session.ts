/**
 * One ZooKeeper session ({@link ZkSession}) over node-zookeeper-client, with a connect and an
 * operation timeout, its state, and a `close()` that leaves nothing behind. The client's
 * defects worked around here: docs/node-ids.md ("ZooKeeper internals").
 */
import { redactUrl, registryError } from '../errors.js';
import type { FlurryLogger } from '@flurry/core';
import { ZkCode, ZkError, isZk, zk, type ZkClient, type ZkClientException, type ZkStat } from './zookeeper-api.js';
import { reconnectTiming } from './zookeeper-timing.js';

const STATES_CLOSED = -2;
const STATES_CONNECTING = 1;

/** Options of {@link ZkSession.open}. */
export interface ZkSessionOptions {
  readonly hosts: readonly string[];
  /** The registry URL (for messages; a password is removed). */
  readonly url: string;
  /** Requested session timeout; the server negotiates it within its min/max. */
  readonly sessionTimeoutMs: number;
  /** How long to wait for the first connection. */
  readonly connectTimeoutMs: number;
  readonly logger?: FlurryLogger | undefined;
}

/** The state of a {@link ZkSession}. */
export type ZkSessionState = 'connected' | 'disconnected' | 'expired' | 'closed';

/**
 * One ZooKeeper session. Every operation has a time limit and rejects with a {@link ZkError};
 * one that times out on a live-looking connection drops the socket so the client reconnects.
 */
export class ZkSession {
  readonly url: string;
  /** Number of claims currently held through this session (kept by the drivers). */
  holds = 0;
  private readonly client: ZkClient;
  private _state: ZkSessionState = 'disconnected';
  private closing = false;
  private readonly waiters = new Set<() => void>();
  private readonly logger: FlurryLogger | undefined;
  private opTimeout: number;
  /** When the current connection attempt (TCP connect + session handshake) started. */
  private attemptStartedAt = Date.now();
  private readonly handshakeTimeoutMs: number;
  private readonly watchdog: NodeJS.Timeout;

  private constructor(client: ZkClient, opts: ZkSessionOptions) {
    this.client = client;
    this.url = opts.url;
    this.logger = opts.logger;
    this.opTimeout = Math.max(500, opts.connectTimeoutMs);
    // Cut short a handshake that is never answered (docs/node-ids.md, "ZooKeeper internals").
    this.handshakeTimeoutMs = reconnectTiming(opts.sessionTimeoutMs, opts.connectTimeoutMs).handshakeTimeoutMs;
    this.watchdog = setInterval(() => this.checkHandshake(), Math.max(100, Math.floor(this.handshakeTimeoutMs / 4)));
    this.watchdog.unref();
  }

  private checkHandshake(): void {
    const cm = this.client.connectionManager;
    if (this.closing || this.dead || this._state === 'connected' || cm.state !== STATES_CONNECTING) return;
    if (Date.now() - this.attemptStartedAt < this.handshakeTimeoutMs) return;
    this.attemptStartedAt = Date.now();
    this.dropSocket();
  }

  /** Destroys the client's socket, if any, so that it reconnects (or, once closed, lets go). */
  private dropSocket(): void {
    try {
      this.client.connectionManager.socket?.destroy();
    } catch {
      /* gone */
    }
  }

  /** Connects; `FLURRY_E_REGISTRY_UNREACHABLE` after `connectTimeoutMs`, `…_AUTH` if refused. */
  static async open(opts: ZkSessionOptions): Promise<ZkSession> {
    const client = zk.createClient(opts.hosts.join(','), {
      sessionTimeout: opts.sessionTimeoutMs,
      // Delay between rounds over all servers; small so a restarted server is found fast.
      spinDelay: reconnectTiming(opts.sessionTimeoutMs, opts.connectTimeoutMs).spinDelayMs,
      retries: 0,
    });
    const session = new ZkSession(client, opts);
    const tried = new Set<string>();
    const cm = client.connectionManager;
    const findNext = cm.findNextServer.bind(cm);
    // A reconnect timer firing after close() would reconnect forever.
    cm.findNextServer = (cb) =>
      findNext((server) => {
        if (session.closing) return;
        session.attemptStartedAt = Date.now();
        tried.add(`${server.host}:${server.port}`);
        cb(server);
      });
    client.on('state', (s: unknown) => session.onState(s));
    const connected = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(
          registryError(
            'UNREACHABLE',
            `ZooKeeper at ${redactUrl(opts.url)} did not accept a session within ${opts.connectTimeoutMs} ms ` +
              `(hosts tried: ${[...(tried.size ? tried : opts.hosts)].join(', ')}); check that the servers run and are reachable, ` +
              `or raise connectTimeoutMs (${opts.connectTimeoutMs} ms now; flurry serve: --registry-connect-timeout-ms or FLURRY_REGISTRY_CONNECT_TIMEOUT_MS)`,
            {
              url: redactUrl(opts.url),
              hosts: [...opts.hosts],
              tried: [...tried],
              connectTimeoutMs: opts.connectTimeoutMs,
            },
          ),
        );
      }, opts.connectTimeoutMs);
      const onState = (): void => {
        if (session._state === 'connected') {
          cleanup();
          resolve();
        } else if (session._state === 'expired') {
          cleanup();
          reject(
            registryError('LEASE_LOST', `the ZooKeeper session at ${redactUrl(opts.url)} has expired`, {
              url: redactUrl(opts.url),
            }),
          );
        }
      };
      const onAuth = (): void => {
        cleanup();
        reject(
          registryError('AUTH', `ZooKeeper at ${redactUrl(opts.url)} refused the session's credentials`, {
            url: redactUrl(opts.url),
          }),
        );
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        session.waiters.delete(onState);
        client.removeListener('authenticationFailed', onAuth);
      };
      session.waiters.add(onState);
      client.once('authenticationFailed', onAuth);
    });
    client.connect();
    try {
      await connected;
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }

  private onState(s: unknown): void {
    const prev = this._state;
    if (this.closing) this._state = 'closed';
    else if (s === zk.State.SYNC_CONNECTED || s === zk.State.CONNECTED_READ_ONLY) this._state = 'connected';
    else if (s === zk.State.EXPIRED) this._state = 'expired';
    else if (s === zk.State.DISCONNECTED) this._state = this._state === 'expired' ? 'expired' : 'disconnected';
    if (prev !== this._state && this.logger && !this.closing) {
      const fields = { url: redactUrl(this.url), session: this.sessionIdHex, from: prev, to: this._state };
      if (this._state === 'connected') this.logger.info(fields, 'ZooKeeper session connected');
      else this.logger.warn(fields, `ZooKeeper session ${this._state}`);
    }
    for (const w of [...this.waiters]) w();
  }

  /** `connected`, `disconnected` (the client is reconnecting), `expired` or `closed`. */
  get state(): ZkSessionState {
    return this._state;
  }

  /** True once the session can never be used again (expired or closed). */
  get dead(): boolean {
    return this._state === 'expired' || this._state === 'closed';
  }

  /** The session ID as 16 hex digits (the `ephemeralOwner` of the nodes it creates). */
  get sessionIdHex(): string {
    return this.client.getSessionId().toString('hex');
  }

  /** The session timeout the server granted (ms). */
  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  /** The default time limit of one operation (ms). */
  get opTimeoutMs(): number {
    return this.opTimeout;
  }

  /** True if `stat` describes an ephemeral node owned by this session. */
  owns(stat: ZkStat | null): boolean {
    return stat !== null && stat.ephemeralOwner.toString('hex') === this.sessionIdHex;
  }

  /** Waits until the session is connected (true), or it is dead or `ms` passed (false). */
  async waitConnected(ms: number): Promise<boolean> {
    if (this._state === 'connected') return true;
    if (this.dead) return false;
    return new Promise<boolean>((resolve) => {
      const done = (v: boolean): void => {
        clearTimeout(t);
        this.waiters.delete(check);
        resolve(v);
      };
      const check = (): void => {
        if (this._state === 'connected') done(true);
        else if (this.dead) done(false);
      };
      const t = setTimeout(() => done(false), ms);
      this.waiters.add(check);
    });
  }

  private run<T>(
    op: string,
    path: string,
    timeoutMs: number | undefined,
    start: (cb: (err: ZkClientException | null, value?: T) => void) => void,
  ): Promise<T> {
    if (this._state === 'closed') {
      return Promise.reject(
        new ZkError(ZkCode.CONNECTION_LOSS, op, path, `${op} ${path}: the ZooKeeper session was closed`),
      );
    }
    if (this._state === 'expired') {
      return Promise.reject(
        new ZkError(ZkCode.SESSION_EXPIRED, op, path, `${op} ${path}: the ZooKeeper session expired`),
      );
    }
    const limit = timeoutMs ?? this.opTimeout;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        // No answer on a connection that looks alive: drop it so the client reconnects.
        if (this._state === 'connected') this.dropSocket();
        reject(new ZkError(ZkCode.TIMEOUT, op, path, `${op} ${path}: no answer from ZooKeeper within ${limit} ms`));
      }, limit);
      try {
        start((err, value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) {
            const code = typeof err.code === 'number' ? err.code : ZkCode.CONNECTION_LOSS;
            const opIndex = (err as { opIndex?: number }).opIndex;
            reject(new ZkError(code, op, path, `${op} ${path}: ${err.message}`, opIndex));
          } else resolve(value as T);
        });
      } catch (e) {
        settled = true;
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- forwards what the client threw, unchanged
        reject(e);
      }
    });
  }

  /** The node's stat, or null if it does not exist. */
  exists(path: string, timeoutMs?: number): Promise<ZkStat | null> {
    return this.run<ZkStat | null>('exists', path, timeoutMs, (cb) =>
      this.client.exists(path, (e, s) => cb(e, e ? undefined : (s ?? null))),
    );
  }

  /** The node's data and stat, or null if it does not exist. */
  getData(path: string, timeoutMs?: number): Promise<{ data: Buffer; stat: ZkStat } | null> {
    const got = this.run<{ data: Buffer; stat: ZkStat }>('getData', path, timeoutMs, (cb) =>
      this.client.getData(path, (e, d, s) => cb(e, e ? undefined : { data: d ?? Buffer.alloc(0), stat: s })),
    );
    return orIfNoNode(got, null);
  }

  /** The names of the node's children (empty if the node does not exist). */
  getChildren(path: string, timeoutMs?: number): Promise<string[]> {
    const got = this.run<string[]>('getChildren', path, timeoutMs, (cb) => this.client.getChildren(path, cb));
    return orIfNoNode(got, []);
  }

  /** Creates a node; resolves with its path (with the sequence suffix for sequential nodes). */
  create(path: string, data: Buffer, mode: number, timeoutMs?: number): Promise<string> {
    return this.run<string>('create', path, timeoutMs, (cb) =>
      this.client.create(path, data, mode, (e, p) => cb(e, p)),
    );
  }

  /** Sets a node's data if its version is `version` (-1: any). */
  setData(path: string, data: Buffer, version: number, timeoutMs?: number): Promise<ZkStat> {
    return this.run<ZkStat>('setData', path, timeoutMs, (cb) =>
      this.client.setData(path, data, version, (e, s) => cb(e, s)),
    );
  }

  /** Deletes a node if its version is `version` (-1: any). */
  remove(path: string, version: number, timeoutMs?: number): Promise<void> {
    return this.run<void>('remove', path, timeoutMs, (cb) => this.client.remove(path, version, (e) => cb(e)));
  }

  /** Creates `path` and its missing parents (persistent, empty). */
  async mkdirp(path: string, timeoutMs?: number): Promise<void> {
    await this.run<string>('mkdirp', path, timeoutMs, (cb) => this.client.mkdirp(path, (e, p) => cb(e, p)));
  }

  /**
   * Runs a transaction atomically; a {@link ZkError}'s `opIndex` names the operation that
   * failed. Expected versions are passed exactly (the client would turn 0 into "any").
   */
  multi(build: (tx: MultiBuilder) => void, timeoutMs?: number): Promise<void> {
    const tx = this.client.transaction();
    const versions: Array<number | undefined> = [];
    const add = (version: number | undefined, _added: unknown): MultiBuilder => {
      versions.push(version);
      return builder;
    };
    const builder: MultiBuilder = {
      create: (path, data, mode) => add(undefined, tx.create(path, data, mode)),
      check: (path, version) => add(version, tx.check(path, version)),
      setData: (path, data, version) => add(version, tx.setData(path, data, version)),
      remove: (path, version) => add(version, tx.remove(path, version)),
    };
    build(builder);
    versions.forEach((v, i) => {
      if (v !== undefined) tx.ops[i].version = v;
    });
    return this.run<void>('multi', '(transaction)', timeoutMs, (cb) =>
      tx.commit((err, results) => {
        if (!err) return cb(null);
        const idx = Array.isArray(results)
          ? results.findIndex((r) => r.err !== undefined && r.err !== 0 && r.err !== ZkCode.RUNTIME_INCONSISTENCY)
          : -1;
        const e = Object.assign(new Error(err.message), {
          code: typeof err.code === 'number' ? err.code : ZkCode.CONNECTION_LOSS,
          opIndex: idx >= 0 ? idx : undefined,
        });
        cb(e);
      }),
    );
  }

  /** Ends the session (its ephemeral nodes go at once) and frees every socket and timer; bounded. */
  async close(): Promise<void> {
    if (this.closing) return;
    const wasLive = this._state === 'connected';
    this.closing = true;
    this._state = 'closed';
    clearInterval(this.watchdog);
    for (const w of [...this.waiters]) w();
    const cm = this.client.connectionManager;
    try {
      this.client.close();
    } catch {
      /* already closed */
    }
    if (!wasLive) this.dropSocket();
    const until = Date.now() + (wasLive ? 1000 : 200);
    while (cm.state !== STATES_CLOSED && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    if (cm.state !== STATES_CLOSED) this.dropSocket();
  }
}

/** `op`'s result, or `absent` when it failed because the node does not exist. */
function orIfNoNode<T, A>(op: Promise<T>, absent: A): Promise<T | A> {
  return op.catch((err: unknown) => {
    if (isZk(err, ZkCode.NO_NODE)) return absent;
    throw err;
  });
}

/** Builder handed to {@link ZkSession.multi}. */
export interface MultiBuilder {
  create(path: string, data: Buffer, mode: number): MultiBuilder;
  check(path: string, version: number): MultiBuilder;
  setData(path: string, data: Buffer, version: number): MultiBuilder;
  remove(path: string, version: number): MultiBuilder;
}
