/**
 * How the etcd driver survives a dead host: fault-handling policies for the etcd3 client
 * (retry on the next host, skip a host that just failed), one lease keep-alive round trip
 * retried the same way, and etcd3's authentication errors.
 */
import {
  castGrpcError,
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdPermissionDeniedError,
  GRPCUnauthenticatedError,
  isRecoverableError,
  type Etcd3,
} from 'etcd3';

/** True for etcd3's authentication and permission errors. */
export function isAuthError(err: unknown): boolean {
  return (
    err instanceof EtcdAuthenticationFailedError ||
    err instanceof EtcdPermissionDeniedError ||
    err instanceof EtcdInvalidAuthTokenError ||
    err instanceof GRPCUnauthenticatedError
  );
}

/** The part of a cockatiel policy etcd3 calls. */
export type Policy = { execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> };

/** Runs `fn` again on the next host after a recoverable error (`cast` first), at most once per host, until `until`. */
async function eachHost<T>(
  hosts: number,
  fn: () => PromiseLike<T> | T,
  until = Infinity,
  cast = (e: unknown): unknown => e,
): Promise<T> {
  let last: unknown = new Error('keep-alive deadline passed before it could be sent');
  for (let i = 0; i < hosts && Date.now() < until; i++) {
    try {
      return await fn();
    } catch (e) {
      last = cast(e);
      if (!(last instanceof Error) || !isRecoverableError(last)) throw last;
    }
  }
  throw last;
}

/**
 * etcd3's global policy: a recoverable error retries on the next host, at most once per host
 * (safe: every write is a compare-and-set whose outcome a repeat recognises).
 */
export function retryEachHost(hosts: number): Policy {
  return { execute: (fn) => eachHost(hosts, () => fn({ signal: new AbortController().signal })) };
}

/** Thrown instead of calling a host that failed less than a second ago. */
export class HostSkippedError extends Error {}

/**
 * The per-host policy: with several hosts, a host that just failed is skipped for `openMs`
 * so calls (and keep-alive streams, which etcd3 does not retry) go to the live ones; with one
 * host it is a pass-through, so calls reach the engine again as soon as it is back.
 */
export function skipFailedHost(host: string, enabled: boolean, openMs: number): Policy {
  let openUntil = 0;
  let cause = '';
  return {
    async execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> {
      if (enabled && Date.now() < openUntil)
        throw new HostSkippedError(`${host} skipped for ${openMs} ms after a failure (${cause})`);
      try {
        return await fn({ signal: new AbortController().signal });
      } catch (e) {
        if (enabled && e instanceof Error && isRecoverableError(e)) {
          openUntil = Date.now() + openMs;
          cause = e.message.split('\n')[0];
        }
        throw e;
      }
    },
  };
}

async function keepAliveOn(client: Etcd3, leaseId: string, deadline: number): Promise<number> {
  const budget = Math.max(1, deadline - Date.now());
  const stream = await client.leaseClient.leaseKeepAlive({ deadline });
  return new Promise<number>((resolve, reject) => {
    let done = false;
    const finish = (f: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        stream.end();
      } catch {
        /* already closed */
      }
      f();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`keep-alive got no answer within ${budget} ms`))),
      Math.max(1, deadline - Date.now() + 100),
    );
    stream.on('data', (res: { TTL: string }) => finish(() => resolve(Number(res.TTL))));
    stream.on('error', (err: Error) => finish(() => reject(err)));
    stream.on('end', () => finish(() => reject(new Error('keep-alive stream ended without an answer'))));
    stream.write({ ID: leaseId });
  });
}

/**
 * One keep-alive round trip; resolves with the TTL etcd reports (0 = gone). etcd3 does not
 * fail streams over to another host, so a recoverable failure is retried once per host.
 */
export function keepAliveOnce(client: Etcd3, hosts: number, leaseId: string, deadline: number): Promise<number> {
  const cast = (e: unknown): unknown => (e instanceof Error ? castGrpcError(e) : e);
  return eachHost(hosts, () => keepAliveOn(client, leaseId, deadline), deadline, cast);
}
