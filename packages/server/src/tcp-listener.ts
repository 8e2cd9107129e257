// What the TCP front-ends (Thrift, memcached, the gRPC port) share.
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

/** Ends every open socket and stops listening (`closeServer`); a peer that does not close within a second is cut off. */
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

const QUIET_SWEEPS = 4;

/**
 * Closes connections that sent nothing for `idleMs` (to 1.25 times that): one timer per server sweeping each
 * quarter of it and comparing each socket's `bytesRead` with the last sweep's, so a read costs nothing (a
 * per-socket `setTimeout`, re-armed by every read and write, cost more than parsing a request).
 */
export class IdleSweep {
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
