/** Coded errors of the node-ID registries. All are {@link FlurryError}s from the core. */
import { FlurryError } from '@flurry/core';

/** The codes of the node-ID registries (the core's are in `ErrorCode` of `@flurry/core`). */
export const RegistryErrorCode = {
  /** The registry URL is malformed or names an unknown scheme. */
  URL_INVALID: 'FLURRY_E_REGISTRY_URL',
  /** The engine could not be reached (connection refused, timeout, DNS). */
  UNREACHABLE: 'FLURRY_E_REGISTRY_UNREACHABLE',
  /** The engine refused the credentials. */
  AUTH: 'FLURRY_E_REGISTRY_AUTH',
  /** Every node ID is held; details list how many and by whom. */
  EXHAUSTED: 'FLURRY_E_REGISTRY_EXHAUSTED',
  /** The lease was lost (expired, taken over, session expired); the holder must stop issuing. */
  LEASE_LOST: 'FLURRY_E_LEASE_LOST',
  /** A static or Kubernetes node ID is invalid for the layout. */
  STATIC_NODE: 'FLURRY_E_REGISTRY_STATIC_NODE',
  /** An option (TTL, renewal interval, margin, cluster name) is out of range. */
  OPTION: 'FLURRY_E_REGISTRY_OPTION',
  /** The engine's client library (an optional dependency) is not installed. */
  CLIENT_MISSING: 'FLURRY_E_REGISTRY_CLIENT_MISSING',
  /** The registry was closed. */
  CLOSED: 'FLURRY_E_REGISTRY_CLOSED',
  /** Stored registry data is corrupt or from an incompatible version. */
  CORRUPT: 'FLURRY_E_REGISTRY_CORRUPT',
  /** A Redis registry without `appendonly yes` + `appendfsync always` (it can lose claims and high-water marks). */
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

export { redactUrl } from '@flurry/core';
