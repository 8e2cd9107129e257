/** Coded errors of the node-ID registries. All are {@link FlurryError}s from the core. */
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

export { redactUrl } from '@flurry/core';
