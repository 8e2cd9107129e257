/** ZooKeeper sessions with time limits over node-zookeeper-client (docs/node-ids.md, "ZooKeeper internals"). */
import type { EventEmitter } from 'node:events';
// @ts-expect-error -- node-zookeeper-client ships no type declarations; the part used here is typed below.
import zookeeperModule from 'node-zookeeper-client';
import type { EngineDriverOptions } from './common.js';
import { redactUrl, registryError } from '../errors.js';
import { reconnectTiming } from './zookeeper-timing.js';

interface ZkStat {
  readonly version: number;
  /** Session ID of the owner of an ephemeral node; all zeros for a persistent node. */
  readonly ephemeralOwner: Buffer;
  readonly mtime: Buffer;
}

type ZkClientException = Error & { readonly code: number; opIndex?: number | undefined };
type Cb<T> = (err: ZkClientException | null, value: T) => void;
interface MultiBuilder {
  create(path: string, data: Buffer, mode: number): this;
  check(path: string, version: number): this;
  setData(path: string, data: Buffer, version: number): this;
  remove(path: string, version: number): this;
}
interface ZkTransaction extends MultiBuilder {
  readonly ops: Array<{ version?: number }>;
  commit(cb: (err: ZkClientException | null, results?: Array<{ err?: number }>) => void): void;
}
type Server = { host: string; port: number };

interface ZkClient extends EventEmitter {
  connectionManager: { state: number; socket?: { destroy(): void }; findNextServer(cb: (s: Server) => void): void };
  connect(): void;
  close(): void;
  create(path: string, data: Buffer, mode: number, cb: Cb<string>): void;
  remove(path: string, version: number, cb: Cb<void>): void;
  exists(path: string, cb: Cb<ZkStat | null>): void;
  getChildren(path: string, cb: Cb<string[]>): void;
  getData(path: string, cb: (err: ZkClientException | null, data: Buffer | null, stat: ZkStat) => void): void;
  mkdirp(path: string, cb: Cb<string>): void;
  transaction(): ZkTransaction;
  getSessionId(): Buffer;
  getSessionTimeout(): number;
}

const zk = zookeeperModule as {
  createClient(hosts: string, o: { sessionTimeout: number; spinDelay: number; retries: number }): ZkClient;
  CreateMode: { PERSISTENT: number; EPHEMERAL: number; PERSISTENT_SEQUENTIAL: number };
  State: Record<'DISCONNECTED' | 'SYNC_CONNECTED' | 'EXPIRED' | 'CONNECTED_READ_ONLY', unknown>;
};

/** ZooKeeper's error codes, plus `TIMEOUT` (not ZooKeeper's: no answer within the time limit). */
export const ZkCode = {
  RUNTIME_INCONSISTENCY: -2,
  CONNECTION_LOSS: -4,
  NO_NODE: -101,
  NO_AUTH: -102,
  BAD_VERSION: -103,
  NODE_EXISTS: -110,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
  TIMEOUT: -10_000,
} as const;

export const CreateMode = zk.CreateMode;

/** A failed ZooKeeper operation (`opIndex`: the failed operation of a transaction). */
export class ZkError extends Error {
  override readonly name = 'ZkError';
  constructor(
    readonly zkCode: number,
    op: string,
    readonly path: string,
    why: string,
    readonly opIndex?: number,
  ) {
    super(`${op} ${path}: ${why}`);
  }
}

export function isZk(err: unknown, ...codes: number[]): err is ZkError {
  return err instanceof ZkError && (codes.length === 0 || codes.includes(err.zkCode));
}

const STATES_CLOSED = -2;
const STATES_CONNECTING = 1;

/** `sessionTimeoutMs` is asked for; the server negotiates it within its min/max. */
type ZkSessionOptions = Pick<EngineDriverOptions, 'connectTimeoutMs' | 'logger'> & {
  readonly hosts: readonly string[];
  readonly url: string;
  readonly sessionTimeoutMs: number;
};

/** One session; an operation that times out on a live-looking connection drops the socket so the client reconnects. */
export class ZkSession {
  holds = 0;
  readonly opTimeoutMs: number;
  /** Set only by the client's state events and close(). */
  state: 'connected' | 'disconnected' | 'expired' | 'closed' = 'disconnected';
  private readonly waiters = new Set<() => void>();
  private attemptStartedAt = Date.now();
  private readonly watchdog: NodeJS.Timeout;

  private constructor(
    private readonly client: ZkClient,
    private readonly opts: ZkSessionOptions,
  ) {
    this.opTimeoutMs = Math.max(500, opts.connectTimeoutMs);
    // Cut short a handshake that is never answered (docs/node-ids.md, "ZooKeeper internals").
    const { handshakeTimeoutMs } = reconnectTiming(opts.sessionTimeoutMs, opts.connectTimeoutMs);
    this.watchdog = setInterval(
      () => {
        const handshaking = this.state === 'disconnected' && client.connectionManager.state === STATES_CONNECTING;
        if (!handshaking || Date.now() - this.attemptStartedAt < handshakeTimeoutMs) return;
        this.attemptStartedAt = Date.now();
        this.dropSocket();
      },
      Math.max(100, Math.floor(handshakeTimeoutMs / 4)),
    );
    this.watchdog.unref();
  }

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
        if (session.state === 'closed') return;
        session.attemptStartedAt = Date.now();
        tried.add(`${server.host}:${server.port}`);
        cb(server);
      });
    client.on('state', (s: unknown) => session.onState(s));
    let authFailed = false;
    const onAuth = (): void => {
      authFailed = true;
      void session.close();
    };
    client.once('authenticationFailed', onAuth);
    client.connect();
    const connected = await session.waitConnected(opts.connectTimeoutMs);
    client.removeListener('authenticationFailed', onAuth);
    if (connected) return session;
    const url = redactUrl(opts.url);
    const err = authFailed
      ? registryError('AUTH', `ZooKeeper at ${url} refused the session's credentials`, { url })
      : session.state === 'expired'
        ? registryError('LEASE_LOST', `the ZooKeeper session at ${url} has expired`, { url })
        : registryError(
            'UNREACHABLE',
            `ZooKeeper at ${url} did not accept a session within ${opts.connectTimeoutMs} ms ` +
              `(hosts tried: ${[...(tried.size ? tried : opts.hosts)].join(', ')}); check that the servers run and are reachable, ` +
              `or raise connectTimeoutMs (${opts.connectTimeoutMs} ms now; flurry serve: --registry-connect-timeout-ms or FLURRY_REGISTRY_CONNECT_TIMEOUT_MS)`,
            { url, hosts: [...opts.hosts], tried: [...tried], connectTimeoutMs: opts.connectTimeoutMs },
          );
    await session.close();
    throw err;
  }

  private onState(s: unknown): void {
    const prev = this.state;
    if (prev === 'closed') return; // close() woke the waiters
    if (s === zk.State.SYNC_CONNECTED || s === zk.State.CONNECTED_READ_ONLY) this.state = 'connected';
    else if (s === zk.State.EXPIRED) this.state = 'expired';
    else if (s === zk.State.DISCONNECTED && prev !== 'expired') this.state = 'disconnected';
    const logger = this.opts.logger;
    if (prev !== this.state && logger) {
      const fields = { url: redactUrl(this.opts.url), session: this.sessionIdHex, from: prev, to: this.state };
      if (this.state === 'connected') logger.info(fields, 'ZooKeeper session connected');
      else logger.warn(fields, `ZooKeeper session ${this.state}`);
    }
    for (const w of [...this.waiters]) w();
  }

  get dead(): boolean {
    return this.state === 'expired' || this.state === 'closed';
  }

  get sessionIdHex(): string {
    return this.client.getSessionId().toString('hex');
  }

  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  owns(stat: ZkStat | null): boolean {
    return stat !== null && stat.ephemeralOwner.toString('hex') === this.sessionIdHex;
  }

  async waitConnected(ms: number): Promise<boolean> {
    if (this.state === 'connected') return true;
    if (this.dead) return false;
    return new Promise<boolean>((resolve) => {
      const check = (timedOut = false): void => {
        if (!timedOut && this.state !== 'connected' && !this.dead) return;
        clearTimeout(t);
        this.waiters.delete(check);
        resolve(this.state === 'connected');
      };
      const t = setTimeout(() => check(true), ms);
      this.waiters.add(check);
    });
  }

  /** One operation within its time limit; `absent` (if given) answers for a missing node. */
  private run<T>(op: string, path: string, timeoutMs: number | undefined, start: (cb: Cb<T>) => void, absent?: T) {
    if (this.dead) {
      const closed = this.state === 'closed';
      const code = closed ? ZkCode.CONNECTION_LOSS : ZkCode.SESSION_EXPIRED;
      const why = closed ? 'was closed' : 'expired';
      return Promise.reject(new ZkError(code, op, path, `the ZooKeeper session ${why}`));
    }
    const limit = timeoutMs ?? this.opTimeoutMs;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (err: unknown, value?: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a ZkError, or what the client threw
        if (err) reject(err);
        else resolve(value as T);
      };
      const timer = setTimeout(() => {
        // No answer on a connection that looks alive: drop it so the client reconnects.
        if (!settled && this.state === 'connected') this.dropSocket();
        settle(new ZkError(ZkCode.TIMEOUT, op, path, `no answer from ZooKeeper within ${limit} ms`));
      }, limit);
      try {
        start((err, value) => {
          if (err?.code === ZkCode.NO_NODE && absent !== undefined) return settle(null, absent);
          const code = typeof err?.code === 'number' ? err.code : ZkCode.CONNECTION_LOSS;
          settle(err && new ZkError(code, op, path, err.message, err.opIndex), value);
        });
      } catch (e) {
        settle(e);
      }
    });
  }

  exists(path: string, timeoutMs?: number): Promise<ZkStat | null> {
    return this.run<ZkStat | null>('exists', path, timeoutMs, (cb) =>
      this.client.exists(path, (e, s) => cb(e, s ?? null)),
    );
  }

  getData(path: string, timeoutMs?: number): Promise<{ data: Buffer; stat: ZkStat } | null> {
    const read = (cb: Cb<{ data: Buffer; stat: ZkStat } | null>): void =>
      this.client.getData(path, (e, d, stat) => cb(e, { data: d ?? Buffer.alloc(0), stat }));
    return this.run('getData', path, timeoutMs, read, null);
  }

  getChildren(path: string, timeoutMs?: number): Promise<string[]> {
    return this.run<string[]>('getChildren', path, timeoutMs, (cb) => this.client.getChildren(path, cb), []);
  }

  create(path: string, data: Buffer, mode: number, timeoutMs?: number): Promise<string> {
    return this.run<string>('create', path, timeoutMs, (cb) => this.client.create(path, data, mode, cb));
  }

  remove(path: string, version: number, timeoutMs?: number): Promise<void> {
    return this.run<void>('remove', path, timeoutMs, (cb) => this.client.remove(path, version, cb));
  }

  async mkdirp(path: string, timeoutMs?: number): Promise<void> {
    await this.run<string>('mkdirp', path, timeoutMs, (cb) => this.client.mkdirp(path, cb));
  }

  /** Runs a transaction (`opIndex`: the failed operation); versions are set exactly (the client turns 0 into "any"). */
  multi(build: (tx: MultiBuilder) => void, timeoutMs?: number): Promise<void> {
    const tx = this.client.transaction();
    const exact = (version: number): MultiBuilder => ((tx.ops[tx.ops.length - 1].version = version), builder);
    const builder: MultiBuilder = {
      create: (path, data, mode) => (tx.create(path, data, mode), builder),
      check: (path, version) => (tx.check(path, version), exact(version)),
      setData: (path, data, version) => (tx.setData(path, data, version), exact(version)),
      remove: (path, version) => (tx.remove(path, version), exact(version)),
    };
    build(builder);
    return this.run<void>('multi', '(transaction)', timeoutMs, (cb) =>
      tx.commit((err, results) => {
        const idx = Array.isArray(results)
          ? results.findIndex((r) => r.err !== undefined && r.err !== 0 && r.err !== ZkCode.RUNTIME_INCONSISTENCY)
          : -1;
        cb(err && Object.assign(err, { opIndex: idx >= 0 ? idx : undefined }));
      }),
    );
  }

  /** Ends the session (its ephemeral nodes go at once) and frees every socket and timer; bounded. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasLive = this.state === 'connected';
    this.state = 'closed';
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
