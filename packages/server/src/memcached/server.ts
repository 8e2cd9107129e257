// `flurry serve --memcached-port P`, katsubushi-compatible: a connection's first byte picks the protocol (0x80: binary,
// else text). docs/service-api.md#memcached-protocol-katsubushi-compatible
import { FlurryError, assertKnownOptions, optionNames, systemClock, type Clock, type FlurryLogger } from '@flurry/core';
import { FLURRY_VERSION } from '@flurry/coordination';
import type { ProtocolRecorder } from '../protocol-metrics.js';
import { BINARY_MAGIC, BinarySession } from './binary.js';
import { tokenCheck, type MemcachedContext, type MemcachedCounters, type Session } from './session.js';
import { TextSession } from './text.js';
export { MEMCACHED_COMMANDS } from './session.js';
import { serveTcp, tcpLimits } from '../tcp-listener.js';

/** A logger with pino's call shape. */
export type MemcachedLogger = Pick<FlurryLogger, 'warn'> & Partial<FlurryLogger>;

/** Options of {@link startMemcachedServer}. */
export interface MemcachedServerOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** TCP port; 0 picks a free one (see the returned `port`). Conventionally 11211. */
  port: number;
  /** Issues the IDs (the service's issuer, or a core `Generator`). */
  ids: { nextString(): string };
  /** When set, IDs and stats need SASL PLAIN with this password (binary protocol). */
  token?: string;
  /** Closes a connection idle this long, in ms (0 = never); default 600,000 (katsubushi's 600 s). */
  idleTimeoutMs?: number;
  /** Largest number of open connections (more are refused); default 10,000. */
  maxConnections?: number;
  /** What `version` answers; default Flurry's version. */
  version?: string;
  /** Receives a line per connection closed for a protocol violation; default silent. */
  logger?: MemcachedLogger;
  /** Wall clock of `stats` (`uptime`, `time`); default the system clock. */
  clock?: Clock;
  /** Per-request metrics (commands as in `MEMCACHED_COMMANDS`). */
  recorder?: ProtocolRecorder;
  /** IDs issued by the whole process, for `stats` (`ids_issued`); default: IDs issued here. */
  issued?: () => number;
}

/** A running memcached endpoint. */
export interface MemcachedServer {
  /** The port it listens on. */
  readonly port: number;
  /** The counters `stats` reports. */
  readonly counters: Readonly<MemcachedCounters>;
  /** Stops accepting, lets replies already written drain, closes every connection. */
  close(): Promise<void>;
}

/** The keys of {@link MemcachedServerOptions}; any other is refused with `FLURRY_E_UNKNOWN_OPTION`. */
const MEMCACHED_SERVER_OPTION_NAMES = optionNames<MemcachedServerOptions>({
  host: true,
  port: true,
  ids: true,
  token: true,
  idleTimeoutMs: true,
  maxConnections: true,
  version: true,
  logger: true,
  clock: true,
  recorder: true,
  issued: true,
});

/** Starts the endpoint; rejects with `FLURRY_E_INVALID_OPTION` for bad options, or the listen error (`EADDRINUSE`…). */
export async function startMemcachedServer(opts: MemcachedServerOptions): Promise<MemcachedServer> {
  assertKnownOptions(opts, MEMCACHED_SERVER_OPTION_NAMES, 'startMemcachedServer options');
  const limits = tcpLimits('memcached server', opts, 600_000);
  const clock = opts.clock ?? systemClock;
  if (!opts.ids || typeof opts.ids.nextString !== 'function') {
    throw new FlurryError('FLURRY_E_INVALID_OPTION', 'startMemcachedServer needs ids with a nextString() method', {});
  }
  const version = opts.version ?? FLURRY_VERSION;
  if (!/^[\x21-\x7e]{1,64}$/.test(version)) {
    throw new FlurryError(
      'FLURRY_E_INVALID_OPTION',
      'startMemcachedServer option version must be 1 to 64 printable ASCII characters without spaces',
      { option: 'version' },
    );
  }
  const logger = opts.logger;
  const counters: MemcachedCounters = {
    currConnections: 0,
    totalConnections: 0,
    cmdGet: 0,
    getHits: 0,
    getMisses: 0,
    bytesRead: 0,
    bytesWritten: 0,
  };
  const startedAt = clock.now();
  const issued = opts.issued ?? (() => counters.getHits);
  const ctx: MemcachedContext = {
    ids: opts.ids,
    auth: opts.token === undefined ? null : tokenCheck(opts.token),
    counters,
    version,
    recorder: opts.recorder,
    statLines: () => {
      const now = clock.now();
      return [
        ['pid', String(process.pid)],
        ['uptime', String(Math.max(0, Math.floor((now - startedAt) / 1000)))],
        ['time', String(Math.floor(now / 1000))],
        ['version', version],
        ...Object.entries(counters).map(([k, v]): [string, string] => [
          k.replace(/[A-Z]/g, '_$&').toLowerCase(),
          String(v),
        ]),
        ['ids_issued', String(issued())],
      ];
    },
    violation: (socket, reason) =>
      logger?.warn(
        { remote: `${socket.remoteAddress}:${socket.remotePort}`, reason },
        'memcached connection closed: bad request',
      ),
  };
  const { port, close } = await serveTcp('memcached server', limits, logger, (socket) => {
    counters.currConnections++;
    counters.totalConnections++;
    socket.on('close', () => counters.currConnections--);
    let session: Session | undefined;
    socket.on('data', (chunk: Buffer) => {
      session ??= chunk[0] === BINARY_MAGIC ? new BinarySession(ctx, socket) : new TextSession(ctx, socket);
      session.feed(chunk);
    });
  });
  logger?.info?.(
    { host: limits.host, port, auth: ctx.auth !== null ? 'sasl-plain' : 'none' },
    'memcached endpoint listening (text and binary protocols)',
  );

  return { port, counters, close };
}
