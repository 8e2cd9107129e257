// The client's errors: a FlurryError with a FLURRY_E_CLIENT_… code, or the code a server answered with.
import { FlurryError } from '@flurry/core';

/** The client's error codes. */
export const ClientErrorCode = {
  /** A `createClient` option is missing or out of range (no servers, a malformed URL, a negative size, lowWater ≥ size…). */
  CONFIG: 'FLURRY_E_CLIENT_CONFIG',
  /** Every server is down (or refused the token) and the buffer is empty; `details.servers` lists each server tried and its last error. */
  UNAVAILABLE: 'FLURRY_E_CLIENT_UNAVAILABLE',
  /** Every server answered 401: the token is missing or wrong. A configuration error, not retried. */
  UNAUTHORIZED: 'FLURRY_E_CLIENT_UNAUTHORIZED',
  /** The client was closed; create a new one. */
  CLOSED: 'FLURRY_E_CLIENT_CLOSED',
  /** A bad argument to a method (`batch(0)`, `decode('abc')`). */
  ARGUMENT: 'FLURRY_E_CLIENT_ARGUMENT',
  /** A server answered something that is not a valid Flurry response (not JSON, wrong count, IDs not increasing). */
  BAD_RESPONSE: 'FLURRY_E_CLIENT_BAD_RESPONSE',
  /** A request took longer than `timeoutMs`. */
  TIMEOUT: 'FLURRY_E_CLIENT_TIMEOUT',
  /** A connection to a server failed (refused, reset, DNS). */
  NETWORK: 'FLURRY_E_CLIENT_NETWORK',
  /** A server answered an error status (5xx, 404…) without a Flurry error code. */
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
