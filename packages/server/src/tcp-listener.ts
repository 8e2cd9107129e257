/**
 * What the TCP front-ends (Thrift, memcached, the gRPC port) share: checking their integer
 * options, listening, closing idle connections, and closing with a one-second grace for
 * peers that do not close.
 */
import type net from 'node:net';
import { FlurryError } from '@flurry/core';

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
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return (server.address() as net.AddressInfo).port;
}

/**
 * Ends every open socket and stops listening; a peer that does not close its side within a
 * second is cut off. `closed` is called back once the server has closed.
 */
export function endSockets(sockets: ReadonlySet<net.Socket>, closeServer: (closed: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    closeServer(resolve);
    for (const s of sockets) s.end();
    const timer = setTimeout(() => {
      for (const s of sockets) s.destroy();
    }, 1_000);
    timer.unref();
    if (sockets.size === 0) clearTimeout(timer);
  });
}

/** Sweeps of silence after which {@link IdleSweep} closes a connection. */
const QUIET_SWEEPS = 4;

/**
 * Closes connections that sent nothing for `idleMs` (after between 1 and 1.25 times that): one
 * timer per server that sweeps every quarter of `idleMs`, rather than a timer per socket
 * (`socket.setTimeout`), which every read and every write re-arms: on a request of a few
 * microseconds, that re-arming cost more than parsing the request.
 */
export class IdleSweep {
  /** Each open connection → sweeps since it last sent something. */
  private readonly quiet = new Map<net.Socket, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(idleMs: number) {
    this.timer = setInterval(() => this.sweep(), Math.ceil(idleMs / QUIET_SWEEPS));
    this.timer.unref();
  }

  /** Watches `socket` until it closes. */
  add(socket: net.Socket): void {
    this.quiet.set(socket, 0);
    socket.once('close', () => this.quiet.delete(socket));
  }

  /** `socket` sent something. */
  active(socket: net.Socket): void {
    this.quiet.set(socket, 0);
  }

  /** Stops sweeping (the server is closing). */
  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    for (const [socket, n] of this.quiet) {
      if (n >= QUIET_SWEEPS) socket.destroy();
      else this.quiet.set(socket, n + 1);
    }
  }
}
