// The request handler on `node:http` directly: URL length (414) → body size (413) → route (404) →
// method (405) → bearer token (401) → the route. What a route throws becomes a coded JSON error
// (an unexpected one a 500 `FLURRY_E_INTERNAL` and one log line; never a stack trace).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { FlurryError } from '@flurry/core';
import { clip as clipText, serverError } from '../errors.js';
import { BearerAuth } from './auth.js';
import type { HttpContext } from './context.js';
import { RequestHeaders, scanHeaders } from './headers.js';
import { RETRY_AFTER_SECONDS, sendError } from './respond.js';
import type { Route, RouteHandler, RouteInput } from './route.js';
import { ROUTES, UNMATCHED_ROUTE } from './routes/index.js';

/** Builds the `(req, res)` handler for a service context, over the service's route table (or a test's). */
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

  // Method, token, then the route; LATER when it answers asynchronously.
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
    if (status === 500) {
      const e =
        err instanceof Error
          ? { message: err.message, stack: err.stack, code: (err as FlurryError).code }
          : String(err);
      ctx.logger.error({ err: e, method: req.method, url: clip(url) }, 'unexpected error in a request handler');
    }
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

function queryToken(query: string): string | undefined {
  if (!query.includes('token=')) return undefined;
  const t = new URLSearchParams(query).get('token');
  return t === null ? undefined : `Bearer ${t}`;
}

/** Clipped for logs, with a `token=` query value masked. */
function clip(s: string): string {
  return clipText(s.includes('token=') ? s.replace(/([?&]token=)[^&]*/g, '$1***') : s, 100);
}

// The generator's `FLURRY_E_LEASE_EXPIRED` speaks to the lease holder; an HTTP caller is told what it can do instead.
/** `err` as an HTTP caller should read it: a fenced refusal reworded (code, status and details kept). */
export function forHttpCaller(err: unknown): unknown {
  if (!(err instanceof FlurryError) || err.code !== 'FLURRY_E_LEASE_EXPIRED' || !('overByMs' in err.details))
    return err;
  const over = err.details.overByMs;
  const ms = typeof over === 'number' ? Math.round(over) : undefined;
  let why: string;
  if (ms === undefined) why = 'its node-ID lease was lost or released, and it holds no new one yet';
  else if (err.details.clock === 'wall')
    why = `its node-ID lease's wall-clock deadline passed ${ms} ms ago (the machine was probably suspended, or its clock stepped forward)`;
  else why = `its node-ID lease expired ${ms} ms ago (a renewal did not arrive in time, or the process was paused)`;
  return new FlurryError(
    err.code,
    `this instance issues no IDs now: ${why}; it resumes once the registry renews or grants the lease. Retry after the Retry-After delay (${RETRY_AFTER_SECONDS} s) or send the request to another instance`,
    { ...err.details },
  );
}

// The router: exact paths through one Map lookup, then the `{param}` patterns in table order.
/** A route ready to serve: its handler, reusable input and the checks derived from its declaration. */
export interface BoundRoute {
  readonly id: number;
  readonly route: Route;
  readonly handle: RouteHandler;
  readonly input: RouteInput;
  readonly allow: string;
  readonly allowHead: boolean;
  readonly needsToken: boolean;
  readonly tokenInQuery: boolean;
  /** Pattern routes: the literal start of the path, then the segments after it (`null` for a `{param}`). */
  readonly prefix: string;
  readonly segments: ReadonlyArray<string | null>;
}

/** The dispatcher's lookup structure over a route table. */
export class Router {
  private readonly exact = new Map<string, BoundRoute>();
  private readonly patterns: BoundRoute[] = [];

  // `headers`: the one object the dispatcher fills per request; every input refers to it.
  constructor(routes: readonly Route[], ctx: HttpContext, headers: RequestHeaders = new RequestHeaders()) {
    routes.forEach((route, id) => {
      const auth = route.auth ?? 'token';
      const brace = route.path.indexOf('{');
      const prefix = brace === -1 ? route.path : route.path.slice(0, brace);
      if (brace !== -1 && !prefix.endsWith('/'))
        throw serverError('INTERNAL', `route ${route.name}: a {param} must be a whole path segment, e.g. /v1/ids/{id}`);
      const segments =
        brace === -1
          ? []
          : route.path
              .slice(brace)
              .split('/')
              .map((s) => (s.startsWith('{') ? null : s));
      const bound: BoundRoute = {
        id,
        route,
        handle: route.create(ctx),
        input: { query: '', params: [], headers },
        allow: route.methods,
        allowHead: route.methods.includes('HEAD'),
        needsToken: ctx.limits.token !== undefined && auth !== 'none' && (auth !== 'health' || ctx.limits.authHealth),
        tokenInQuery: auth === 'token-or-query',
        prefix,
        segments,
      };
      if (brace === -1) {
        if (this.exact.has(prefix))
          throw serverError(
            'INTERNAL',
            `route ${route.name}: the path ${prefix} is declared twice; give each route its own path`,
          );
        this.exact.set(prefix, bound);
      } else this.patterns.push(bound);
    });
  }

  /** The route of `path` (without the query), its `input.params` filled; undefined when none. */
  match(path: string): BoundRoute | undefined {
    const hit = this.exact.get(path);
    if (hit !== undefined) return hit;
    for (const p of this.patterns) if (matchPattern(p, path)) return p;
    return undefined;
  }
}

function matchPattern(p: BoundRoute, path: string): boolean {
  if (path.length <= p.prefix.length || !path.startsWith(p.prefix)) return false;
  const parts = path.slice(p.prefix.length).split('/');
  if (parts.length !== p.segments.length) return false;
  const params = p.input.params;
  params.length = 0;
  for (let i = 0; i < parts.length; i++) {
    const want = p.segments[i];
    if (want !== null ? parts[i] !== want : parts[i].length === 0) return false;
    if (want === null) params.push(parts[i]);
  }
  return true;
}
