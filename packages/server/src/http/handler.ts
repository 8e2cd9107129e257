/**
 * The request handler: limits, routing, authentication and error mapping, on `node:http`
 * directly. The per-request path is a length check, one pass over the raw headers, a
 * `switch` on the precomputed path strings and the route itself; everything a route
 * throws becomes a coded JSON error with its status (never a stack trace). An unexpected
 * exception is a 500 `FLURRY_E_INTERNAL` plus one log line, and the server keeps running.
 *
 * Order of checks: URL length (414) → body size (413) → route (404) → method (405) →
 * bearer token (401) → the route (400 bad input, 403, 503 fenced, 200).
 *
 * @example
 * ```ts
 * const server = http.createServer(createRequestHandler(context));
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { FlurryError } from '@flurry/core';
import { serverError } from '../errors.js';
import { RouteId } from '../metrics.js';
import { BearerAuth } from './auth.js';
import type { HttpContext } from './context.js';
import { RequestHeaders, scanHeaders } from './headers.js';
import { idsBatch, idsDecode, idsNext } from './routes/ids.js';
import { leafDecode, leafGet } from './routes/leaf.js';
import { healthz, layoutRoute, openapi, readyz } from './routes/ops.js';
import { publicDecode, publicNext } from './routes/public-ids.js';
import { idsRange } from './routes/range.js';
import { sendError, sendText } from './respond.js';

const IDS_PREFIX = '/v1/ids/';
const LEAF_PREFIX = '/api/snowflake/get/';
const PUBLIC_PREFIX = '/v1/public-ids/';
/** Routes that issue IDs answer GET only; read-only routes also HEAD. */
const ALLOW_ISSUE = 'GET';
const ALLOW_READ = 'GET, HEAD';

/**
 * Builds the `(req, res)` handler for a service context.
 *
 * @example
 * ```ts
 * createServer(createRequestHandler(ctx)).listen(8080, '127.0.0.1');
 * ```
 */
export function createRequestHandler(ctx: HttpContext): (req: IncomingMessage, res: ServerResponse) => void {
  const auth = ctx.token === undefined ? undefined : new BearerAuth(ctx.token);
  const headers = new RequestHeaders();
  const metrics = ctx.metrics;
  const maxUrl = ctx.maxUrlBytes;
  const maxBody = ctx.maxBodyBytes;
  const debug = ctx.logger.isLevelEnabled?.('debug') ?? false;

  function denied(): FlurryError | null {
    return auth === undefined ? null : auth.check(headers.authorization);
  }

  function route(req: IncomingMessage, res: ServerResponse, url: string, t0: number): void {
    let routeId: number = RouteId.Unmatched;
    let status: number;
    try {
      if (url.length > maxUrl) {
        status = sendError(
          res,
          serverError(
            'URL_TOO_LONG',
            `the request target is ${url.length} bytes long; at most ${maxUrl} are allowed (setting maxUrlBytes)`,
            { length: url.length, max: maxUrl },
          ),
          { close: true },
        );
      } else {
        scanHeaders(req.rawHeaders, headers);
        const bodyError =
          headers.contentLength === undefined && headers.transferEncoding === undefined ? null : checkBody();
        if (bodyError) {
          status = sendError(res, bodyError, { close: true });
        } else {
          const q = url.indexOf('?');
          const path = q === -1 ? url : url.slice(0, q);
          const query = q === -1 ? '' : url.slice(q + 1);
          const method = req.method;
          const isGet = method === 'GET';
          switch (path) {
            case '/v1/ids/next':
              routeId = RouteId.IdsNext;
              status = !isGet ? notAllowed(res, method, ALLOW_ISSUE) : (deny(res) ?? idsNext(ctx, res, headers.accept));
              break;
            case '/v1/ids':
              routeId = RouteId.IdsBatch;
              status = !isGet ? notAllowed(res, method, ALLOW_ISSUE) : (deny(res) ?? idsBatch(ctx, res, query));
              break;
            case '/v1/ids/range':
              routeId = RouteId.IdsRange;
              status = !readMethod(method)
                ? notAllowed(res, method, ALLOW_READ)
                : (deny(res) ?? idsRange(ctx, res, query));
              break;
            case '/v1/layout':
              routeId = RouteId.Layout;
              status = !readMethod(method) ? notAllowed(res, method, ALLOW_READ) : (deny(res) ?? layoutRoute(ctx, res));
              break;
            case '/healthz':
              routeId = RouteId.Healthz;
              status = !readMethod(method)
                ? notAllowed(res, method, ALLOW_READ)
                : ((ctx.authHealth ? deny(res) : undefined) ?? healthz(res));
              break;
            case '/readyz':
              routeId = RouteId.Readyz;
              status = !readMethod(method)
                ? notAllowed(res, method, ALLOW_READ)
                : ((ctx.authHealth ? deny(res) : undefined) ?? readyz(ctx, res));
              break;
            case '/metrics':
              routeId = RouteId.Metrics;
              if (!readMethod(method)) status = notAllowed(res, method, ALLOW_READ);
              else {
                const d = ctx.authHealth ? deny(res) : undefined;
                if (d !== undefined) status = d;
                else return void metricsRoute(res, t0);
              }
              break;
            case '/openapi.json':
              routeId = RouteId.OpenApi;
              status = !readMethod(method) ? notAllowed(res, method, ALLOW_READ) : openapi(ctx, res);
              break;
            case '/decodeSnowflakeId':
              routeId = RouteId.LeafDecode;
              status = !readMethod(method)
                ? notAllowed(res, method, ALLOW_READ)
                : (deny(res) ?? leafDecode(ctx, res, query));
              break;
            case '/v1/public-ids/next':
              routeId = RouteId.PublicNext;
              status = !isGet
                ? notAllowed(res, method, ALLOW_ISSUE)
                : (deny(res) ?? publicNext(ctx, res, headers.accept));
              break;
            default:
              if (isSegmentRoute(path, IDS_PREFIX)) {
                routeId = RouteId.IdsDecode;
                status = !readMethod(method)
                  ? notAllowed(res, method, ALLOW_READ)
                  : (deny(res) ?? idsDecode(ctx, res, path.slice(IDS_PREFIX.length)));
              } else if (isSegmentRoute(path, LEAF_PREFIX)) {
                routeId = RouteId.LeafGet;
                status = !isGet
                  ? notAllowed(res, method, ALLOW_ISSUE)
                  : (deny(res) ?? leafGet(ctx, res, path.slice(LEAF_PREFIX.length)));
              } else if (isSegmentRoute(path, PUBLIC_PREFIX)) {
                routeId = RouteId.PublicDecode;
                status = !readMethod(method)
                  ? notAllowed(res, method, ALLOW_READ)
                  : (deny(res) ?? publicDecode(ctx, res, path.slice(PUBLIC_PREFIX.length)));
              } else {
                status = sendError(
                  res,
                  serverError('NOT_FOUND', `no route ${clip(path)}; see /openapi.json for the routes of this service`),
                );
              }
          }
        }
      }
    } catch (err) {
      status = failed(res, err, req, url);
    }
    metrics.request(routeId, status, (performance.now() - t0) / 1000);
    if (debug) ctx.logger.debug({ method: req.method, url: clip(url), status, ms: performance.now() - t0 }, 'request');
  }

  function checkBody(): FlurryError | null {
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

  /** undefined when allowed; else the status of the 401 that was sent. */
  function deny(res: ServerResponse): number | undefined {
    if (auth === undefined) return undefined;
    const e = denied();
    return e === null ? undefined : sendError(res, e);
  }

  function metricsRoute(res: ServerResponse, t0: number): void {
    metrics.text().then(
      (text) => {
        const status = sendText(res, 200, metrics.contentType, text);
        metrics.request(RouteId.Metrics, status, (performance.now() - t0) / 1000);
      },
      (err: unknown) => {
        const status = failed(res, err, undefined, '/metrics');
        metrics.request(RouteId.Metrics, status, (performance.now() - t0) / 1000);
      },
    );
  }

  function failed(res: ServerResponse, err: unknown, req: IncomingMessage | undefined, url: string): number {
    const status = sendError(res, err);
    if (status === 500) {
      ctx.logger.error(
        {
          err:
            err instanceof Error
              ? { message: err.message, stack: err.stack, code: (err as FlurryError).code }
              : String(err),
          method: req?.method,
          url: clip(url),
        },
        'unexpected error in a request handler',
      );
    }
    return status;
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    if (ctx.shuttingDown) res.shouldKeepAlive = false;
    route(req, res, req.url ?? '', t0);
  };
}

/** `path` is `prefix` + one non-empty segment (no further `/`). */
function isSegmentRoute(path: string, prefix: string): boolean {
  return path.length > prefix.length && path.startsWith(prefix) && path.indexOf('/', prefix.length) === -1;
}

function readMethod(method: string | undefined): boolean {
  return method === 'GET' || method === 'HEAD';
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

function clip(s: string): string {
  return s.length > 100 ? s.slice(0, 100) + '…' : s;
}
