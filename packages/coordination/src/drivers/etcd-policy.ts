/**
 * How the etcd driver survives a dead host: fault-handling policies for the etcd3 client
 * (retry on the next host, skip a host that just failed) and its authentication errors.
 */
import {
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdPermissionDeniedError,
  GRPCUnauthenticatedError,
  isRecoverableError,
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

/**
 * etcd3's global policy: a recoverable error retries on the next host, at most once per host
 * (safe: every write is a compare-and-set whose outcome a repeat recognises).
 */
export function retryEachHost(hosts: number): Policy {
  return {
    async execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> {
      let last: unknown;
      for (let i = 0; i < hosts; i++) {
        try {
          return await fn({ signal: new AbortController().signal });
        } catch (e) {
          last = e;
          if (!(e instanceof Error) || !isRecoverableError(e)) throw e;
        }
      }
      throw last;
    },
  };
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
