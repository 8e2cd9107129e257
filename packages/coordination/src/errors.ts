/** Coded errors of the node-ID registries (all {@link FlurryError}s from the core), and engine calls bounded in time. */
import { FlurryError } from '@flurry/core';

/** The codes of the node-ID registries (the core's are `ErrorCode`); what each means: docs/node-ids.md#errors. */
export const RegistryErrorCode = {
  URL_INVALID: 'FLURRY_E_REGISTRY_URL',
  UNREACHABLE: 'FLURRY_E_REGISTRY_UNREACHABLE',
  AUTH: 'FLURRY_E_REGISTRY_AUTH',
  EXHAUSTED: 'FLURRY_E_REGISTRY_EXHAUSTED',
  LEASE_LOST: 'FLURRY_E_LEASE_LOST',
  STATIC_NODE: 'FLURRY_E_REGISTRY_STATIC_NODE',
  OPTION: 'FLURRY_E_REGISTRY_OPTION',
  CLIENT_MISSING: 'FLURRY_E_REGISTRY_CLIENT_MISSING',
  CLOSED: 'FLURRY_E_REGISTRY_CLOSED',
  CORRUPT: 'FLURRY_E_REGISTRY_CORRUPT',
  VOLATILE: 'FLURRY_E_REGISTRY_VOLATILE',
} as const;

/** Creates a registry error (`FLURRY_E_` + the code). */
export function registryError(
  code: keyof typeof RegistryErrorCode,
  message: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): FlurryError {
  return new FlurryError(RegistryErrorCode[code], message, details, cause === undefined ? undefined : { cause });
}

export function optionError(option: string, message: string, details: Record<string, unknown> = {}): FlurryError {
  return registryError('OPTION', message, { option, ...details });
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

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

export { redactUrl } from '@flurry/core';
