// The client's errors: a FlurryError with a FLURRY_E_CLIENT_… code, or the code a server answered with.
import { FlurryError } from '@flurry/core';

/** The client's error codes; what each means: docs/client.md#errors. */
export const ClientErrorCode = {
  CONFIG: 'FLURRY_E_CLIENT_CONFIG',
  UNAVAILABLE: 'FLURRY_E_CLIENT_UNAVAILABLE',
  UNAUTHORIZED: 'FLURRY_E_CLIENT_UNAUTHORIZED',
  CLOSED: 'FLURRY_E_CLIENT_CLOSED',
  ARGUMENT: 'FLURRY_E_CLIENT_ARGUMENT',
  BAD_RESPONSE: 'FLURRY_E_CLIENT_BAD_RESPONSE',
  TIMEOUT: 'FLURRY_E_CLIENT_TIMEOUT',
  NETWORK: 'FLURRY_E_CLIENT_NETWORK',
  HTTP_STATUS: 'FLURRY_E_CLIENT_HTTP_STATUS',
} as const;

/** Union of the client's error code strings. */
export type ClientErrorCodeValue = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

/** Creates a client error. */
export function clientError(
  code: keyof typeof ClientErrorCode,
  message: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): FlurryError {
  return new FlurryError(ClientErrorCode[code], message, details, cause === undefined ? undefined : { cause });
}

/** @internal The error of a call on a closed client. */
export function closedError(): FlurryError {
  return clientError('CLOSED', 'the client is closed; create a new one with createClient()');
}

/** @internal Checks the `n` of `batch(n)` / `uuids(n)`: an integer from 1 to 1,000,000. */
export function assertCount(call: string, n: number): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1_000_000)
    throw clientError('ARGUMENT', `${call}(n) takes an integer n from 1 to 1000000; got ${String(n)}`, {
      value: String(n),
    });
}
