// One HTTP route in one declaration; the table (`routes/index.ts`) drives the dispatcher, the
// metrics labels and the OpenAPI document.
import type { ServerResponse } from 'node:http';
import type { HttpContext } from './context.js';
import type { RequestHeaders } from './headers.js';

/** The `Allow` header: routes that issue IDs take no `HEAD` (it would issue one and throw it away). */
export type RouteMethods = 'GET' | 'GET, HEAD';
export const ISSUE: RouteMethods = 'GET';
export const READ: RouteMethods = 'GET, HEAD';

/** Who needs the configured token (default `token`): `token-or-query` also takes `?token=` (EventSource sends no headers), `health` only with `authHealth`. */
export type RouteAuth = 'token' | 'token-or-query' | 'health' | 'none';

/** What a handler gets besides the response: one object per handler, reused across requests (read it synchronously). */
export interface RouteInput {
  query: string;
  /** The values of the path's `{…}` segments, in order, still percent-encoded. */
  readonly params: string[];
  readonly headers: RequestHeaders;
}

/** Writes the response and returns its status (or a promise of it); a coded error it throws becomes the error response. */
export type RouteHandler = (res: ServerResponse, input: RouteInput) => number | Promise<number>;

export interface Route {
  /** The `route` label of its metrics, e.g. `ids_next` (snake case, unique). */
  readonly name: string;
  /** Exact, or with `{name}` segments (each one non-empty segment); exact paths win, patterns go in table order. */
  readonly path: string;
  readonly methods: RouteMethods;
  readonly auth?: RouteAuth;
  /** Builds the handler once per service (its state, e.g. buffers, lives in the closure). */
  create(ctx: HttpContext): RouteHandler;
  readonly openapi: Record<string, unknown>;
}
