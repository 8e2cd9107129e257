/** Calls into a registry engine, bounded in time, and their failures as coded `FlurryError`s. */
import { FlurryError } from '@flurry/core';
import { errorText, registryError } from './errors.js';

export class TimeoutError extends Error {}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** `err` as a `FlurryError`: coded errors pass through, others become `FLURRY_E_REGISTRY_UNREACHABLE`. */
export function toFlurry(err: unknown, url: string, doing: string): FlurryError {
  if (err instanceof FlurryError) return err;
  const why =
    err instanceof TimeoutError
      ? `${err.message} while trying to ${doing}; check that the engine is up and reachable`
      : `${doing} failed: ${errorText(err)}`;
  return registryError('UNREACHABLE', `${url}: ${why}`, { url }, err);
}
