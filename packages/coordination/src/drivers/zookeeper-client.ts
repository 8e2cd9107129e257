/**
 * Promise-based helpers over `node-zookeeper-client` (a pure-JavaScript ZooKeeper client)
 * shared by the `zookeeper://` and `zookeeper+leaf://` registry drivers:
 *
 * - {@link parseZooKeeperUrl}: `zookeeper://h:p[,h:p]/path?…` → hosts, path, query. The WHATWG
 *   `URL` class rejects several `host:port` pairs, so the string form is accepted too.
 * - {@link ZkSession}: one ZooKeeper session with a connect timeout, a timeout on every
 *   operation (the client library has none: a stalled server would hang a call forever),
 *   the session's state (`connected`, `disconnected`, `expired`, `closed`) and a `close()`
 *   that leaves no socket or timer behind.
 * - {@link ZkSessionPool}: one live session per requested session timeout, reopened
 *   transparently after the old one expired.
 * - {@link zkFailure}: maps client failures to coded {@link FlurryError}s.
 *
 * Defects of node-zookeeper-client 1.1.3 worked around here: its transactions turn an
 * expected version of `0` into `-1` ("any version"); a reconnect timer that fires after
 * `close()` would open a fresh socket and reconnect forever; it has no read timeout, and
 * waits forever for the answer to a session handshake (a server still starting accepts
 * the TCP connection and may never answer it), so handshakes are cut short and retried.
 *
 * @example
 * ```ts
 * const { hosts } = parseZooKeeperUrl('zookeeper://127.0.0.1:2181/flurry', 'zookeeper');
 * const s = await ZkSession.open({ hosts, url: 'zookeeper://127.0.0.1:2181/flurry', sessionTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
 * await s.mkdirp('/flurry/demo');
 * await s.close();
 * ```
 */
import type { EventEmitter } from 'node:events';
// @ts-expect-error -- node-zookeeper-client ships no type declarations; the part used here is typed below (ZkModule).
import zookeeperModule from 'node-zookeeper-client';
import { FlurryError } from '@flurry/core';
import { redactUrl, registryError } from '../errors.js';

/**
 * The `stat` of a znode as node-zookeeper-client returns it (64-bit fields are 8-byte buffers).
 *
 * @example
 * ```ts
 * const stat = await session.exists('/flurry/a/slots/3');
 * if (stat && session.owns(stat)) console.log('ours, version', stat.version);
 * ```
 */
export interface ZkStat {
  readonly version: number;
  readonly cversion: number;
  readonly numChildren: number;
  readonly dataLength: number;
  /** Session ID of the owner of an ephemeral node; all zeros for a persistent node. */
  readonly ephemeralOwner: Buffer;
  readonly czxid: Buffer;
  readonly mtime: Buffer;
}

interface ZkClientException extends Error {
  readonly code: number;
  getCode(): number;
}

interface ZkOpRecord {
  version?: number;
}

interface ZkTransaction {
  readonly ops: ZkOpRecord[];
  create(path: string, data: Buffer | null, mode: number): ZkTransaction;
  check(path: string, version: number): ZkTransaction;
  setData(path: string, data: Buffer | null, version: number): ZkTransaction;
  remove(path: string, version: number): ZkTransaction;
  commit(cb: (err: ZkClientException | null, results: Array<{ type: number; err?: number }>) => void): void;
}

interface ZkConnectionManager {
  state: number;
  socket?: { destroy(): void };
  servers: Array<{ host: string; port: number }>;
  findNextServer(cb: (server: { host: string; port: number }) => void): void;
}

interface ZkClient extends EventEmitter {
  connectionManager: ZkConnectionManager;
  connect(): void;
  close(): void;
  create(
    path: string,
    data: Buffer | null,
    mode: number,
    cb: (err: ZkClientException | null, path: string) => void,
  ): void;
  remove(path: string, version: number, cb: (err: ZkClientException | null) => void): void;
  exists(path: string, cb: (err: ZkClientException | null, stat: ZkStat | null) => void): void;
  getChildren(path: string, cb: (err: ZkClientException | null, children: string[], stat: ZkStat) => void): void;
  getData(path: string, cb: (err: ZkClientException | null, data: Buffer | null, stat: ZkStat) => void): void;
  setData(
    path: string,
    data: Buffer | null,
    version: number,
    cb: (err: ZkClientException | null, stat: ZkStat) => void,
  ): void;
  mkdirp(path: string, cb: (err: ZkClientException | null, path: string) => void): void;
  transaction(): ZkTransaction;
  getSessionId(): Buffer;
  getSessionPassword(): Buffer;
  getSessionTimeout(): number;
}

interface ZkModule {
  createClient(
    connectionString: string,
    options: {
      sessionTimeout: number;
      spinDelay: number;
      retries: number;
      sessionId?: Buffer;
      sessionPassword?: Buffer;
    },
  ): ZkClient;
  CreateMode: { PERSISTENT: number; EPHEMERAL: number; PERSISTENT_SEQUENTIAL: number; EPHEMERAL_SEQUENTIAL: number };
  State: {
    DISCONNECTED: unknown;
    SYNC_CONNECTED: unknown;
    EXPIRED: unknown;
    AUTH_FAILED: unknown;
    CONNECTED_READ_ONLY: unknown;
  };
}

const zk = zookeeperModule as ZkModule;

/**
 * ZooKeeper's error codes as node-zookeeper-client reports them, plus `TIMEOUT` for an
 * operation this module abandoned after its time limit.
 *
 * @example
 * ```ts
 * if (err instanceof ZkError && err.zkCode === ZkCode.NODE_EXISTS) tryNextSlot();
 * ```
 */
export const ZkCode = {
  RUNTIME_INCONSISTENCY: -2,
  CONNECTION_LOSS: -4,
  OPERATION_TIMEOUT: -7,
  NO_NODE: -101,
  NO_AUTH: -102,
  BAD_VERSION: -103,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
  /** Not a ZooKeeper code: the operation got no answer within the time limit. */
  TIMEOUT: -10_000,
} as const;

/**
 * Node creation modes.
 *
 * @example
 * ```ts
 * await session.create('/a/slot', data, CreateMode.EPHEMERAL);
 * ```
 */
export const CreateMode = {
  PERSISTENT: zk.CreateMode.PERSISTENT,
  EPHEMERAL: zk.CreateMode.EPHEMERAL,
  PERSISTENT_SEQUENTIAL: zk.CreateMode.PERSISTENT_SEQUENTIAL,
} as const;

/**
 * A failed ZooKeeper operation: `zkCode` is one of {@link ZkCode}; for a transaction,
 * `opIndex` is the index of the operation that failed.
 *
 * @example
 * ```ts
 * try { await s.create(p, d, CreateMode.EPHEMERAL); }
 * catch (e) { if (e instanceof ZkError && e.zkCode === ZkCode.NODE_EXISTS) { … } }
 * ```
 */
export class ZkError extends Error {
  readonly zkCode: number;
  readonly op: string;
  readonly path: string;
  readonly opIndex: number | undefined;
  constructor(zkCode: number, op: string, path: string, message: string, opIndex?: number) {
    super(message);
    this.name = 'ZkError';
    this.zkCode = zkCode;
    this.op = op;
    this.path = path;
    this.opIndex = opIndex;
  }
}

/**
 * True when `err` is a {@link ZkError} with one of `codes`.
 *
 * @example
 * ```ts
 * if (isZk(err, ZkCode.NO_NODE)) return null;
 * ```
 */
export function isZk(err: unknown, ...codes: number[]): err is ZkError {
  return err instanceof ZkError && codes.includes(err.zkCode);
}

/**
 * A logger as `RegistryOptions.logger` (pino-compatible).
 *
 * @example
 * ```ts
 * const logger: ZkLogger = pino();
 * ```
 */
export interface ZkLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * What {@link parseZooKeeperUrl} returns.
 *
 * @example
 * ```ts
 * const { hosts, path, params } = parseZooKeeperUrl('zookeeper+leaf://zk:2181?name=a', 'zookeeper+leaf');
 * ```
 */
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
 *
 * @example
 * ```ts
 * normalizeZkPath('/flurry/') // '/flurry'
 * ```
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
 *
 * @example
 * ```ts
 * parseZooKeeperUrl('zookeeper://10.0.0.1:2181,10.0.0.2:2181/flurry', 'zookeeper').hosts
 * // ['10.0.0.1:2181', '10.0.0.2:2181']
 * ```
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

const STATES_CLOSED = -2;
const STATES_CONNECTING = 1;

/**
 * Options of {@link ZkSession.open}.
 *
 * @example
 * ```ts
 * const o: ZkSessionOptions = { hosts: ['127.0.0.1:2181'], url, sessionTimeoutMs: 10_000, connectTimeoutMs: 5000 };
 * ```
 */
export interface ZkSessionOptions {
  readonly hosts: readonly string[];
  /** The registry URL (for messages; a password is removed). */
  readonly url: string;
  /** Requested session timeout; the server negotiates it within its min/max. */
  readonly sessionTimeoutMs: number;
  /** How long to wait for the first connection. */
  readonly connectTimeoutMs: number;
  readonly logger?: ZkLogger | undefined;
  /** Join an existing session instead of creating one (tests use it to close a session from outside). */
  readonly resume?: { sessionId: Buffer; password: Buffer } | undefined;
}

/**
 * The state of a {@link ZkSession}.
 *
 * @example
 * ```ts
 * if (session.state === 'disconnected') throw unreachable();
 * ```
 */
export type ZkSessionState = 'connected' | 'disconnected' | 'expired' | 'closed';

/**
 * One ZooKeeper session. Every operation has a time limit (`opTimeoutMs` unless given)
 * and rejects with a {@link ZkError}; an operation that times out while the session
 * believes it is connected drops the socket so the client reconnects (possibly to
 * another server), as the Java client's read timeout would.
 *
 * @example
 * ```ts
 * const s = await ZkSession.open({ hosts: ['127.0.0.1:2181'], url, sessionTimeoutMs: 6000, connectTimeoutMs: 5000 });
 * console.log(s.timeoutMs, s.sessionIdHex, s.state);
 * await s.close();
 * ```
 */
export class ZkSession {
  readonly requestedTimeoutMs: number;
  readonly url: string;
  /** Number of claims currently held through this session (kept by the drivers). */
  holds = 0;
  private readonly client: ZkClient;
  private _state: ZkSessionState = 'disconnected';
  private closing = false;
  private readonly waiters = new Set<() => void>();
  private readonly logger: ZkLogger | undefined;
  private opTimeout: number;
  /** When the current connection attempt (TCP connect + session handshake) started. */
  private attemptStartedAt = Date.now();
  private readonly handshakeTimeoutMs: number;
  private readonly watchdog: NodeJS.Timeout;

  private constructor(client: ZkClient, opts: ZkSessionOptions) {
    this.client = client;
    this.url = opts.url;
    this.requestedTimeoutMs = opts.sessionTimeoutMs;
    this.logger = opts.logger;
    this.opTimeout = Math.max(500, opts.connectTimeoutMs);
    // The client library waits forever for the answer to its session handshake: a server
    // that accepts the TCP connection but does not answer (still starting, stalled) would
    // keep it from ever trying again. Cut such an attempt short so it retries.
    this.handshakeTimeoutMs = Math.min(
      Math.min(5000, Math.max(1000, Math.floor(opts.sessionTimeoutMs / 2))),
      Math.max(250, Math.floor(opts.connectTimeoutMs / 3)),
    );
    this.watchdog = setInterval(() => this.checkHandshake(), Math.max(100, Math.floor(this.handshakeTimeoutMs / 4)));
    this.watchdog.unref();
  }

  private checkHandshake(): void {
    const cm = this.client.connectionManager;
    if (this.closing || this.dead || this._state === 'connected' || cm.state !== STATES_CONNECTING) return;
    if (Date.now() - this.attemptStartedAt < this.handshakeTimeoutMs) return;
    this.attemptStartedAt = Date.now();
    try {
      cm.socket?.destroy();
    } catch {
      /* gone */
    }
  }

  /**
   * Connects and resolves once the session is established; rejects with
   * `FLURRY_E_REGISTRY_UNREACHABLE` (naming the URL and the hosts tried) after
   * `connectTimeoutMs`, or with `FLURRY_E_REGISTRY_AUTH` if the server refuses it.
   *
   * @example
   * ```ts
   * const s = await ZkSession.open({ hosts: ['127.0.0.1:2181'], url: 'zookeeper://127.0.0.1:2181/x', sessionTimeoutMs: 10_000, connectTimeoutMs: 3_000 });
   * ```
   */
  static async open(opts: ZkSessionOptions): Promise<ZkSession> {
    const client = zk.createClient(opts.hosts.join(','), {
      sessionTimeout: opts.sessionTimeoutMs,
      // Delay between rounds over all servers; small so a restarted server is found fast.
      spinDelay: Math.min(1000, Math.max(50, Math.floor(opts.connectTimeoutMs / 5))),
      retries: 0,
      ...(opts.resume ? { sessionId: opts.resume.sessionId, sessionPassword: opts.resume.password } : {}),
    });
    const session = new ZkSession(client, opts);
    const tried = new Set<string>();
    const cm = client.connectionManager;
    const findNext = cm.findNextServer.bind(cm);
    // A reconnect timer may fire after close(): without this guard it would open a new
    // socket and, the client being closed, reconnect forever.
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

  /** The session's password (with {@link sessionIdHex}, lets another client take the session over). */
  get sessionPassword(): Buffer {
    return this.client.getSessionPassword();
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

  /**
   * Waits until the session is connected (true), or it is dead or `ms` passed (false).
   */
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
        if (this._state === 'connected') {
          // No answer on a connection that looks alive: drop it so the client reconnects.
          try {
            this.client.connectionManager.socket?.destroy();
          } catch {
            /* already gone */
          }
        }
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
  async getData(path: string, timeoutMs?: number): Promise<{ data: Buffer; stat: ZkStat } | null> {
    try {
      return await this.run<{ data: Buffer; stat: ZkStat }>('getData', path, timeoutMs, (cb) =>
        this.client.getData(path, (e, d, s) => cb(e, e ? undefined : { data: d ?? Buffer.alloc(0), stat: s })),
      );
    } catch (err) {
      if (isZk(err, ZkCode.NO_NODE)) return null;
      throw err;
    }
  }

  /** The names of the node's children (empty if the node does not exist). */
  async getChildren(path: string, timeoutMs?: number): Promise<string[]> {
    try {
      return await this.run<string[]>('getChildren', path, timeoutMs, (cb) =>
        this.client.getChildren(path, (e, c) => cb(e, c)),
      );
    } catch (err) {
      if (isZk(err, ZkCode.NO_NODE)) return [];
      throw err;
    }
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
   * Runs a transaction built by `build` atomically. Rejects with a {@link ZkError} whose
   * `opIndex` names the operation that failed. Expected versions are passed exactly
   * (version 0 included, which the client library would otherwise turn into "any").
   */
  multi(build: (tx: MultiBuilder) => void, timeoutMs?: number): Promise<void> {
    const tx = this.client.transaction();
    const versions: Array<number | undefined> = [];
    const builder: MultiBuilder = {
      create(path, data, mode) {
        tx.create(path, data, mode);
        versions.push(undefined);
        return builder;
      },
      check(path, version) {
        tx.check(path, version);
        versions.push(version);
        return builder;
      },
      setData(path, data, version) {
        tx.setData(path, data, version);
        versions.push(version);
        return builder;
      },
      remove(path, version) {
        tx.remove(path, version);
        versions.push(version);
        return builder;
      },
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
        cb(e as unknown as ZkClientException);
      }),
    );
  }

  /**
   * Ends the session (its ephemeral nodes go at once) and frees every socket and timer.
   * Idempotent; bounded even when the server does not answer.
   */
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
    if (!wasLive) {
      try {
        cm.socket?.destroy();
      } catch {
        /* gone */
      }
    }
    const until = Date.now() + (wasLive ? 1000 : 200);
    while (cm.state !== STATES_CLOSED && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    if (cm.state !== STATES_CLOSED) {
      try {
        cm.socket?.destroy();
      } catch {
        /* gone */
      }
    }
  }
}

/**
 * Builder handed to {@link ZkSession.multi}.
 *
 * @example
 * ```ts
 * await session.multi((tx) => tx.check('/a/slot', -1).setData('/a/hw', data, 4));
 * ```
 */
export interface MultiBuilder {
  create(path: string, data: Buffer, mode: number): MultiBuilder;
  check(path: string, version: number): MultiBuilder;
  setData(path: string, data: Buffer, version: number): MultiBuilder;
  remove(path: string, version: number): MultiBuilder;
}

/**
 * Options of {@link ZkSessionPool}.
 *
 * @example
 * ```ts
 * new ZkSessionPool({ hosts: ['127.0.0.1:2181'], url: 'zookeeper://127.0.0.1:2181/x', connectTimeoutMs: 5000 });
 * ```
 */
export interface ZkSessionPoolOptions {
  readonly hosts: readonly string[];
  readonly url: string;
  readonly connectTimeoutMs: number;
  readonly logger?: ZkLogger | undefined;
}

/**
 * Keeps one live session per requested session timeout (a lease TTL). `get(ttl)` returns
 * the live one, waits for a reconnecting one (up to the connect timeout), or opens a new
 * one when the old one expired, so claims after an expiry work without a new driver.
 * Sessions of another TTL that hold no claim are closed when a new one is opened.
 *
 * @example
 * ```ts
 * const pool = new ZkSessionPool({ hosts: ['127.0.0.1:2181'], url, connectTimeoutMs: 5000 });
 * const s = await pool.get(10_000);
 * await pool.close();
 * ```
 */
export class ZkSessionPool {
  private readonly sessions = new Map<number, ZkSession>();
  private readonly opening = new Map<number, Promise<ZkSession>>();
  private closed = false;
  constructor(private readonly opts: ZkSessionPoolOptions) {}

  /** A connected session with the requested timeout. Rejects UNREACHABLE or CLOSED. */
  async get(sessionTimeoutMs: number): Promise<ZkSession> {
    this.assertOpen();
    const cur = this.sessions.get(sessionTimeoutMs);
    if (cur && !cur.dead) {
      if (await cur.waitConnected(this.opts.connectTimeoutMs)) return cur;
      if (!cur.dead) {
        throw registryError(
          'UNREACHABLE',
          `ZooKeeper at ${redactUrl(this.opts.url)} is unreachable: the session has been disconnected for over ${this.opts.connectTimeoutMs} ms (hosts: ${this.opts.hosts.join(', ')})`,
          { url: redactUrl(this.opts.url), hosts: [...this.opts.hosts] },
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

  /** True after close(). */
  get isClosed(): boolean {
    return this.closed;
  }

  private assertOpen(): void {
    if (this.closed)
      throw registryError('CLOSED', `the registry ${redactUrl(this.opts.url)} was closed; open a new one`, {
        url: redactUrl(this.opts.url),
      });
  }
}

/**
 * Maps a failure of a ZooKeeper operation to a coded error: no answer, a lost connection
 * or an unreachable server → `FLURRY_E_REGISTRY_UNREACHABLE`; an expired session →
 * `FLURRY_E_LEASE_LOST`; an ACL refusal → `FLURRY_E_REGISTRY_AUTH`; a {@link FlurryError}
 * passes through; anything else → `FLURRY_E_REGISTRY_UNREACHABLE` with the cause.
 *
 * @example
 * ```ts
 * try { await s.exists(p); } catch (e) { throw zkFailure(e, url, 'renewing slot 3'); }
 * ```
 */
export function zkFailure(err: unknown, url: string, doing: string): FlurryError {
  const display = redactUrl(url);
  if (err instanceof FlurryError) return err;
  if (err instanceof ZkError) {
    if (err.zkCode === ZkCode.SESSION_EXPIRED) {
      return registryError(
        'LEASE_LOST',
        `${doing}: the ZooKeeper session expired (the server stopped hearing from this process for longer than the session timeout); the lease is lost and its ephemeral node gone`,
        { url: display, zkCode: err.zkCode },
        err,
      );
    }
    if (err.zkCode === ZkCode.NO_AUTH || err.zkCode === ZkCode.AUTH_FAILED) {
      return registryError(
        'AUTH',
        `${doing}: ZooKeeper at ${display} refused access to ${err.path} (code ${err.zkCode}); grant this client create/write/delete on the registry path`,
        { url: display, path: err.path, zkCode: err.zkCode },
        err,
      );
    }
    const why =
      err.zkCode === ZkCode.TIMEOUT
        ? 'no answer in time'
        : err.zkCode === ZkCode.CONNECTION_LOSS
          ? 'connection lost'
          : `ZooKeeper error ${err.zkCode}`;
    return registryError(
      'UNREACHABLE',
      `${doing}: ZooKeeper at ${display} is unreachable (${why}); the holder stays fenced until it answers again`,
      { url: display, path: err.path, zkCode: err.zkCode },
      err,
    );
  }
  return registryError(
    'UNREACHABLE',
    `${doing}: ZooKeeper at ${display} failed: ${err instanceof Error ? err.message : String(err)}`,
    { url: display },
    err,
  );
}
