// What the TCP front-ends (Thrift, memcached, the gRPC port) share.
import { once } from 'node:events';
import net from 'node:net';
import { FlurryError, type FlurryLogger } from '@flurry/core';

/** Throws `FLURRY_E_INVALID_OPTION` unless `v` is an integer from `min` to `max`. */
export function checkIntOption(what: string, name: string, v: unknown, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new FlurryError(
      'FLURRY_E_INVALID_OPTION',
      `${what} option ${name} must be an integer from ${min} to ${max}; got ${String(v)}`,
      { option: name, value: String(v), min, max },
    );
  }
}

/** Listens on `host:port` (0: a free port); rejects with the listen error (EADDRINUSE…). Resolves the port. */
export async function listenTcp(server: net.Server, host: string, port: number): Promise<number> {
  server.listen({ host, port });
  await once(server, 'listening'); // rejects on an 'error' first
  return (server.address() as net.AddressInfo).port;
}

type TcpLimits = { host: string; port: number; maxConnections: number; idleTimeoutMs: number };

/** Checks `port`, `maxConnections` and `idleTimeoutMs` (`FLURRY_E_INVALID_OPTION` naming `what`); fills in defaults. */
export function tcpLimits(what: string, o: Partial<TcpLimits> & { port: number }, idleTimeoutMs: number): TcpLimits {
  const limits = {
    host: o.host ?? '127.0.0.1',
    port: o.port,
    maxConnections: o.maxConnections ?? 10_000,
    idleTimeoutMs: o.idleTimeoutMs ?? idleTimeoutMs,
  };
  checkIntOption(what, 'port', limits.port, 0, 65_535);
  checkIntOption(what, 'maxConnections', limits.maxConnections, 1, 1_000_000);
  checkIntOption(what, 'idleTimeoutMs', limits.idleTimeoutMs, 0, 2_147_483_647);
  return limits;
}

/**
 * Listens (or rejects with the listen error): connections tracked, no-delay, ended alone by a socket error, swept when
 * idle; `close()` ends them all, cutting off peers still open a second later.
 */
export async function serveTcp(
  what: string,
  limits: TcpLimits,
  logger: Pick<FlurryLogger, 'warn'> | undefined,
  onSocket: (socket: net.Socket) => void,
) {
  const sockets = new Set<net.Socket>();
  const idle = limits.idleTimeoutMs > 0 ? new IdleSweep(limits.idleTimeoutMs) : undefined;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    idle?.add(socket);
    socket.on('error', () => socket.destroy()); // a reset or broken pipe ends this connection only
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  server.maxConnections = limits.maxConnections;
  server.on('error', (err) => logger?.warn({ err: err.message }, `${what} error`));
  const port = await listenTcp(server, limits.host, limits.port);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      idle?.stop();
      server.close(() => resolve());
      for (const s of sockets) s.end();
      if (sockets.size > 0)
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 1_000).unref();
    });
  return { port, server, sockets, close: () => (closing ??= close()) };
}

const QUIET_SWEEPS = 4;

/**
 * Closes connections quiet for `idleMs` (to 1.25×): one timer per server compares each socket's `bytesRead` every
 * quarter, so a read costs nothing (a per-socket `setTimeout` re-armed per read cost more than parsing a request).
 */
class IdleSweep {
  /** Per socket: its `bytesRead` at the last sweep, and the sweeps since it changed. */
  private readonly quiet = new Map<net.Socket, { read: number; sweeps: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(idleMs: number) {
    this.timer = setInterval(() => this.sweep(), Math.ceil(idleMs / QUIET_SWEEPS));
    this.timer.unref();
  }

  add(socket: net.Socket): void {
    this.quiet.set(socket, { read: socket.bytesRead, sweeps: 0 });
    socket.once('close', () => this.quiet.delete(socket));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    for (const [socket, q] of this.quiet) {
      if (socket.bytesRead !== q.read)
        [q.read, q.sweeps] = [socket.bytesRead, 1]; // read since the last sweep
      else if (++q.sweeps > QUIET_SWEEPS) socket.destroy();
    }
  }
}
