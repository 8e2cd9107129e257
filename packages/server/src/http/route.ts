/**
 * The shape of one HTTP route: everything about it in one declaration (its path, its
 * metrics name, its methods, who may call it, its handler and its OpenAPI operation).
 * The table of declarations is `routes/index.ts`; the dispatcher (`router.ts`), the
 * metrics route labels and the OpenAPI document are all derived from it.
 */
import type { ServerResponse } from 'node:http';
import type { HttpContext } from './context.js';
import type { RequestHeaders } from './headers.js';

/**
 * The methods a route answers: `GET` for routes that issue IDs (a `HEAD` would issue one
 * and throw it away), `GET, HEAD` for read-only routes. The string is the `Allow` header.
 */
export type RouteMethods = 'GET' | 'GET, HEAD';

/** Routes that issue IDs: `GET` only. */
export const ISSUE: RouteMethods = 'GET';

/** Read-only routes: `GET` and `HEAD`. */
export const READ: RouteMethods = 'GET, HEAD';

/**
 * Who may call a route when a bearer token is configured: `token` always needs it,
 * `token-or-query` too but also takes it as `?token=` (only `/v1/events`: a browser's
 * EventSource cannot send headers), `health` needs it only with `authHealth` (health,
 * readiness, metrics), `none` never (the OpenAPI document).
 */
export type RouteAuth = 'token' | 'token-or-query' | 'health' | 'none';

/**
 * What a handler gets besides the response. One object per handler, reused across
 * requests (the hot path allocates nothing for it): read it synchronously.
 */
export interface RouteInput {
  /** The query string without `?` ('' when none). */
  query: string;
  /** The values of the path's `{…}` segments, in order, still percent-encoded. */
  readonly params: string[];
  /** The request headers the service reads. */
  readonly headers: RequestHeaders;
}

/**
 * A route's handler: writes the response and returns its status, or a promise of the
 * status for a route that answers later (the metrics are recorded when it settles). It
 * may throw a coded error: the dispatcher turns it into the error response.
 */
export type RouteHandler = (res: ServerResponse, input: RouteInput) => number | Promise<number>;

/** One route's declaration. */
export interface Route {
  /** The `route` label of its metrics, e.g. `ids_next` (snake case, unique). */
  readonly name: string;
  /**
   * The path: exact (`/v1/ids/next`, looked up in a Map), or with `{name}` segments
   * (`/v1/ids/{id}`: each matches one non-empty segment without `/`). Exact paths win
   * over patterns; patterns are tried in table order. Also the OpenAPI path.
   */
  readonly path: string;
  readonly methods: RouteMethods;
  readonly auth: RouteAuth;
  /** Builds the handler once per service (per-service state, e.g. buffers, lives in its closure). */
  create(ctx: HttpContext): RouteHandler;
  /** The OpenAPI operation object of its `get`. */
  readonly openapi: Record<string, unknown>;
}
