// gRPC status codes for Flurry's errors (docs/grpc.md#errors), the bearer-token check and the per-call metrics.
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { FlurryError } from '@flurry/core';
import { BearerAuth } from '../http/auth.js';
import { httpStatusOf } from '../errors.js';

/** The codes whose gRPC code is not the one of their HTTP status. */
const BY_CODE: Partial<Record<string, Code>> = {
  FLURRY_E_BATCH_COUNT: Code.ResourceExhausted,
  FLURRY_E_SEQUENCE_COUNT: Code.ResourceExhausted,
  FLURRY_E_PUBLIC_IDS_DISABLED: Code.Unimplemented,
  FLURRY_E_SEQUENCES_DISABLED: Code.Unimplemented,
};
const BY_STATUS: Partial<Record<number, Code>> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.AlreadyExists,
  413: Code.ResourceExhausted,
  414: Code.ResourceExhausted,
  431: Code.ResourceExhausted,
  503: Code.Unavailable,
};

// The Connect error a call ends with: Connect's own as they are; a FlurryError's gRPC code by its code, else by its
// HTTP status, its message and `flurry-error-code` trailer carrying the code; anything else `INTERNAL`.
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const f = err instanceof FlurryError ? err : undefined;
  const code = (f && BY_CODE[f.code]) ?? BY_STATUS[httpStatusOf(err)] ?? Code.Internal;
  const message = f ? `${f.code}: ${f.message}` : 'FLURRY_E_INTERNAL: the call failed inside the service';
  return new ConnectError(message, code, { 'flurry-error-code': f?.code ?? 'FLURRY_E_INTERNAL' }, undefined, err);
}

/** Requires `authorization: Bearer TOKEN` on the calls of `guarded` services (else `UNAUTHENTICATED`). */
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

/** Receives one finished call: protocol, method (`IdService/NextId`), gRPC code name (`ok`…), seconds. */
export type CallRecorder = (protocol: string, method: string, code: string, seconds: number) => void;

/** Times every call for `record` and turns any error into its coded Connect error. */
export function callMetrics(
  record: CallRecorder | undefined,
  now: () => number = performance.now.bind(performance),
): Interceptor {
  return (next) => async (req) => {
    const start = now();
    // The wire protocol: `grpc-web`, `grpc`, else (JSON or binary Connect, Connect's GET) `connect`.
    const grpc = /^application\/(grpc-web|grpc)/.exec(req.header.get('content-type') ?? '');
    const done = (code?: Code): void =>
      record?.(
        grpc ? grpc[1] : 'connect',
        `${req.service.name}/${req.method.name}`,
        code === undefined ? 'ok' : codeToString(code),
        (now() - start) / 1000,
      );
    const failed = (err: unknown): never => {
      const ce = toConnectError(err);
      done(ce.code);
      throw ce;
    };
    const res = await next(req).catch(failed);
    if (!res.stream) {
      done();
      return res;
    }
    const inner = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* inner;
        } catch (err) {
          failed(err);
        }
        done();
      })(),
    };
  };
}
