/**
 * gRPC status codes for Flurry's errors (with the `FLURRY_E_…` code in the `flurry-error-code`
 * trailer or header: docs/grpc.md#errors), the bearer-token check and the per-call metrics,
 * as Connect interceptors.
 */
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { FlurryError } from '@flurry/core';
import { BearerAuth } from '../http/auth.js';
import { httpStatusOf } from '../errors.js';

/** The trailer (gRPC) or header (Connect) that names the `FLURRY_E_…` code of a failed call. */
export const ERROR_CODE_KEY = 'flurry-error-code';

const BY_CODE: Readonly<Record<string, Code>> = Object.freeze({
  FLURRY_E_BATCH_COUNT: Code.ResourceExhausted,
  FLURRY_E_SEQUENCE_COUNT: Code.ResourceExhausted,
  FLURRY_E_UNAUTHORIZED: Code.Unauthenticated,
  FLURRY_E_PUBLIC_IDS_DISABLED: Code.Unimplemented,
  FLURRY_E_PUBLIC_DECODE_DISABLED: Code.PermissionDenied,
  FLURRY_E_SEQUENCES_DISABLED: Code.Unimplemented,
  FLURRY_E_SEQUENCE_KEY_UNKNOWN: Code.NotFound,
  FLURRY_E_SEQUENCE_KEY_EXISTS: Code.AlreadyExists,
  FLURRY_E_BODY_TOO_LARGE: Code.ResourceExhausted,
});

/**
 * The gRPC code of an error: by its `FLURRY_E_…` code where one is named above, else by
 * its HTTP status (400 → `INVALID_ARGUMENT`, 401 → `UNAUTHENTICATED`, 403 →
 * `PERMISSION_DENIED`, 404 → `NOT_FOUND`, 409 → `ALREADY_EXISTS`, 503 → `UNAVAILABLE`,
 * else `INTERNAL`).
 */
export function grpcCodeOf(err: unknown): Code {
  if (err instanceof FlurryError) {
    const c = BY_CODE[err.code];
    if (c !== undefined) return c;
  }
  switch (httpStatusOf(err)) {
    case 400:
      return Code.InvalidArgument;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.NotFound;
    case 409:
      return Code.AlreadyExists;
    case 413:
    case 414:
    case 431:
      return Code.ResourceExhausted;
    case 503:
      return Code.Unavailable;
    default:
      return Code.Internal;
  }
}

/**
 * The Connect error a call ends with for `err`: a {@link ConnectError} passes through
 * (Connect's own protocol errors); a {@link FlurryError} becomes its gRPC code, its
 * message prefixed with the code, and the code in the {@link ERROR_CODE_KEY} trailer;
 * anything else is `INTERNAL` with `FLURRY_E_INTERNAL`.
 */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const flurryCode = err instanceof FlurryError ? err.code : 'FLURRY_E_INTERNAL';
  const message =
    err instanceof FlurryError
      ? `${err.code}: ${err.message}`
      : 'FLURRY_E_INTERNAL: the call failed inside the service';
  return new ConnectError(message, grpcCodeOf(err), { [ERROR_CODE_KEY]: flurryCode }, undefined, err);
}

/**
 * An interceptor that requires `authorization: Bearer TOKEN` (compared in constant time,
 * see ../http/auth.ts) on every call for which `guarded(serviceName)` is true; a missing
 * or wrong token ends the call with `UNAUTHENTICATED` and `FLURRY_E_UNAUTHORIZED`.
 */
export function bearerToken(token: string, guarded: (serviceName: string) => boolean): Interceptor {
  const auth = new BearerAuth(token);
  return (next) => (req) => {
    if (guarded(req.service.typeName)) {
      const refused = auth.check(req.header.get('authorization') ?? undefined);
      if (refused) throw toConnectError(refused);
    }
    return next(req);
  };
}

/**
 * Receives one finished call: the wire protocol (`grpc`, `grpc-web` or `connect`), the
 * method (`IdService/NextId`), its gRPC code name (`ok`, `unavailable`, …) and its
 * duration in seconds (a stream's: until its last message).
 */
export type CallRecorder = (protocol: string, method: string, code: string, seconds: number) => void;

/**
 * An interceptor that times every call and reports it to `record` (when given), and turns
 * any error into its coded Connect error ({@link toConnectError}).
 */
export function callMetrics(
  record: CallRecorder | undefined,
  now: () => number = performance.now.bind(performance),
): Interceptor {
  if (record === undefined) {
    return (next) => (req) =>
      next(req).then(
        (res) => (res.stream ? { ...res, message: coded(res.message) } : res),
        (err: unknown) => Promise.reject(toConnectError(err)),
      );
  }
  return (next) => async (req) => {
    const start = now();
    const method = `${req.service.name}/${req.method.name}`;
    const protocol = protocolOf(req.header.get('content-type'));
    const done = (code: Code | undefined): void =>
      record(protocol, method, code === undefined ? 'ok' : codeName(code), (now() - start) / 1000);
    let res;
    try {
      res = await next(req);
    } catch (err) {
      const ce = toConnectError(err);
      done(ce.code);
      throw ce;
    }
    if (!res.stream) {
      done(undefined);
      return res;
    }
    const inner = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* inner;
        } catch (err) {
          const ce = toConnectError(err);
          done(ce.code);
          throw ce;
        }
        done(undefined);
      })(),
    };
  };
}

async function* coded<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw toConnectError(err);
  }
}

const NAMES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(
    Object.entries(Code)
      .filter(([, v]) => typeof v === 'number')
      .map(([k, v]) => [v, k.replace(/[A-Z]/g, (c, i: number) => (i === 0 ? c : '_' + c)).toLowerCase()]),
  ),
);

/** The snake_case name of a gRPC code, as gRPC spells it in lower case (`resource_exhausted`). */
export function codeName(code: Code): string {
  return NAMES[code] ?? String(code);
}

/**
 * The wire protocol of a call from its content type: `grpc-web` (`application/grpc-web…`),
 * `grpc` (`application/grpc…`), else `connect` (JSON or binary Connect, and Connect's GET).
 */
export function protocolOf(contentType: string | null): 'grpc' | 'grpc-web' | 'connect' {
  if (contentType === null || !contentType.startsWith('application/grpc')) return 'connect';
  return contentType.startsWith('application/grpc-web') ? 'grpc-web' : 'grpc';
}
