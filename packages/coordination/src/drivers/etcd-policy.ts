/** How the etcd driver survives a dead host: etcd3 fault-handling policies and a keep-alive retried per host. */
import {
  castGrpcError,
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdPermissionDeniedError,
  GRPCUnauthenticatedError,
  isRecoverableError,
  type Etcd3,
} from 'etcd3';

export function isAuthError(err: unknown): boolean {
  return (
    err instanceof EtcdAuthenticationFailedError ||
    err instanceof EtcdPermissionDeniedError ||
    err instanceof EtcdInvalidAuthTokenError ||
    err instanceof GRPCUnauthenticatedError
  );
}

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

/** etcd3's global policy: retry once per host (safe: every write is a compare-and-set a repeat recognises). */
export function retryEachHost(hosts: number): Policy {
  return { execute: (fn) => eachHost(hosts, () => fn({ signal: new AbortController().signal })) };
}

/** With several hosts, one that just failed is skipped for `openMs` (keep-alive streams too); else a pass-through. */
export function skipFailedHost(host: string, enabled: boolean, openMs: number): Policy {
  let openUntil = 0;
  let cause = '';
  return {
    async execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> {
      if (enabled && Date.now() < openUntil)
        throw new Error(`${host} skipped for ${openMs} ms after a failure (${cause})`);
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

/** One keep-alive round trip: the TTL etcd reports (0 = gone), retried once per host (etcd3 does not fail streams over). */
export function keepAliveOnce(client: Etcd3, hosts: number, leaseId: string, deadline: number): Promise<number> {
  const cast = (e: unknown): unknown => (e instanceof Error ? castGrpcError(e) : e);
  return eachHost(hosts, () => keepAliveOn(client, leaseId, deadline), deadline, cast);
}
