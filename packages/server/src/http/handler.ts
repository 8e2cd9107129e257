// The request handler on `node:http` directly: URL length (414) → body size (413) → route (404) →
// method (405) → bearer token (401) → the route. What a route throws becomes a coded JSON error
// (an unexpected one a 500 `FLURRY_E_INTERNAL` and one log line; never a stack trace).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FlurryError } from '@flurry/core';
import { clip as clipText, serverError } from '../errors.js';
import { BearerAuth } from './auth.js';
import type { HttpContext } from './context.js';
import { forHttpCaller } from './fenced.js';
import { RequestHeaders, scanHeaders } from './headers.js';
import { sendError } from './respond.js';
import type { Route } from './route.js';
import { Router, type BoundRoute } from './router.js';
import { ROUTES, UNMATCHED_ROUTE } from './routes/index.js';

/**
 * Builds the `(req, res)` handler for a service context, over the service's route table (or
 * another, e.g. a test's; the request metrics are labelled by the service's table only).
 *
 * @example
 * ```ts
 * createServer(createRequestHandler(ctx)).listen(8080, '127.0.0.1');
 * ```
 */
export function createRequestHandler(
  ctx: HttpContext,
  routes: readonly Route[] = ROUTES,
): (req: IncomingMessage, res: ServerResponse) => void {
  const auth = ctx.limits.token === undefined ? undefined : new BearerAuth(ctx.limits.token);
  const headers = new RequestHeaders();
  const router = new Router(routes, ctx, headers);
  const unmatched = routes === ROUTES ? UNMATCHED_ROUTE : routes.length;
  const metrics = ctx.metrics;
  const maxUrl = ctx.limits.maxUrlBytes;
  const maxBody = ctx.limits.maxBodyBytes;
  const debug = ctx.logger.isLevelEnabled?.('debug') ?? false;

  function done(req: IncomingMessage, url: string, routeId: number, status: number, t0: number): void {
    metrics.request(routeId, status, (performance.now() - t0) / 1000);
    if (debug) ctx.logger.debug({ method: req.method, url: clip(url), status, ms: performance.now() - t0 }, 'request');
  }

  function route(req: IncomingMessage, res: ServerResponse, url: string, t0: number): void {
    let routeId = unmatched;
    let status: number;
    try {
      if (url.length > maxUrl) {
        status = sendError(res, urlTooLong(url.length, maxUrl), { close: true });
      } else {
        scanHeaders(req.rawHeaders, headers);
        const bodyError =
          headers.contentLength === undefined && headers.transferEncoding === undefined
            ? null
            : refusedBody(headers, maxBody);
        if (bodyError) {
          status = sendError(res, bodyError, { close: true });
        } else {
          const q = url.indexOf('?');
          const path = q === -1 ? url : url.slice(0, q);
          const hit = router.match(path);
          if (hit === undefined) {
            status = sendError(
              res,
              serverError('NOT_FOUND', `no route ${clip(path)}; see /openapi.json for the routes of this service`),
            );
          } else {
            routeId = hit.id;
            status = serve(hit, req, res, url, q === -1 ? '' : url.slice(q + 1), t0);
            if (status === LATER) return;
          }
        }
      }
    } catch (err) {
      status = failed(res, err, req, url);
    }
    done(req, url, routeId, status, t0);
  }

  /** Method, token, then the route; {@link LATER} when it answers asynchronously. */
  function serve(
    hit: BoundRoute,
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    query: string,
    t0: number,
  ): number {
    const method = req.method;
    if (method !== 'GET' && !(method === 'HEAD' && hit.allowHead)) return notAllowed(res, method, hit.allow);
    if (hit.needsToken && auth !== undefined) {
      let given = headers.authorization;
      if (given === undefined && hit.tokenInQuery) given = queryToken(query);
      const e = auth.check(given);
      if (e !== null) return sendError(res, e);
    }
    hit.input.query = query;
    const out = hit.handle(res, hit.input);
    if (typeof out === 'number') return out;
    out.then(
      (status) => done(req, url, hit.id, status, t0),
      (err: unknown) => done(req, url, hit.id, failed(res, err, req, url), t0),
    );
    return LATER;
  }

  function failed(res: ServerResponse, err: unknown, req: IncomingMessage, url: string): number {
    const status = sendError(res, forHttpCaller(err));
    if (status === 500) logUnexpected(ctx.logger, err, req, url);
    return status;
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    if (ctx.shuttingDown) res.shouldKeepAlive = false;
    route(req, res, req.url ?? '', t0);
  };
}

/** Not a status: the route answers asynchronously and records its own metrics. */
const LATER = -1;

function urlTooLong(length: number, max: number): FlurryError {
  return serverError(
    'URL_TOO_LONG',
    `the request target is ${length} bytes long; at most ${max} are allowed (setting maxUrlBytes)`,
    { length, max },
  );
}

/** A request that announces a body: refused when chunked or over `maxBody` bytes. */
function refusedBody(headers: RequestHeaders, maxBody: number): FlurryError | null {
  if (headers.transferEncoding !== undefined) {
    return serverError(
      'BODY_TOO_LARGE',
      `this API reads no request bodies and refuses chunked ones (Transfer-Encoding: ${clip(headers.transferEncoding)}); send GET requests without a body`,
    );
  }
  const n = Number(headers.contentLength);
  if (!(n <= maxBody)) {
    return serverError(
      'BODY_TOO_LARGE',
      `the request body is ${clip(String(headers.contentLength))} bytes; at most ${maxBody} are allowed (setting maxBodyBytes), and no route reads one`,
      { max: maxBody },
    );
  }
  return null;
}

/** The one log line of an unexpected exception (its 500 `FLURRY_E_INTERNAL` is already sent). */
function logUnexpected(logger: HttpContext['logger'], err: unknown, req: IncomingMessage, url: string): void {
  logger.error(
    {
      err:
        err instanceof Error
          ? { message: err.message, stack: err.stack, code: (err as FlurryError).code }
          : String(err),
      method: req.method,
      url: clip(url),
    },
    'unexpected error in a request handler',
  );
}

function notAllowed(res: ServerResponse, method: string | undefined, allow: string): number {
  return sendError(
    res,
    serverError(
      'METHOD_NOT_ALLOWED',
      `method ${clip(String(method))} is not allowed here; use ${allow.replace(', ', ' or ')}`,
      { allow },
    ),
    { allow },
  );
}

/** `?token=` as an Authorization value (routes with auth `token-or-query` only). */
function queryToken(query: string): string | undefined {
  if (!query.includes('token=')) return undefined;
  const t = new URLSearchParams(query).get('token');
  return t === null ? undefined : `Bearer ${t}`;
}

/** Clipped for logs, with a `token=` query value masked. */
function clip(s: string): string {
  return clipText(s.includes('token=') ? s.replace(/([?&]token=)[^&]*/g, '$1***') : s, 100);
}
