// A request path to its route: exact paths through one Map lookup, then the `{param}` patterns in table order.
import { serverError } from '../errors.js';
import type { HttpContext } from './context.js';
import { RequestHeaders } from './headers.js';
import type { Route, RouteHandler, RouteInput } from './route.js';

/** A route ready to serve: its handler, reusable input and the checks derived from its declaration. */
export interface BoundRoute {
  /** The metrics ID (index in the table). */
  readonly id: number;
  readonly route: Route;
  readonly handle: RouteHandler;
  readonly input: RouteInput;
  readonly allow: string;
  readonly allowHead: boolean;
  /** Token configured and the route's `auth` asks for it. */
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

  /** `headers` is the one object the dispatcher fills per request; every input refers to it. */
  constructor(routes: readonly Route[], ctx: HttpContext, headers: RequestHeaders = new RequestHeaders()) {
    routes.forEach((route, id) => {
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
        needsToken:
          ctx.limits.token !== undefined &&
          (route.auth === 'token' ||
            route.auth === 'token-or-query' ||
            (route.auth === 'health' && ctx.limits.authHealth)),
        tokenInQuery: route.auth === 'token-or-query',
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
  const prefix = p.prefix;
  if (path.length <= prefix.length || !path.startsWith(prefix)) return false;
  const params = p.input.params;
  params.length = 0;
  let start = prefix.length;
  const segs = p.segments;
  for (let i = 0; i < segs.length; i++) {
    if (start > path.length) return false;
    let end = path.indexOf('/', start);
    const last = i === segs.length - 1;
    if (end === -1) end = path.length;
    else if (last) return false; // more segments than the pattern has
    const seg = path.slice(start, end);
    const want = segs[i];
    if (want === null) {
      if (seg.length === 0) return false;
      params.push(seg);
    } else if (seg !== want) return false;
    if (!last && end === path.length) return false; // fewer segments than the pattern has
    start = end + 1;
  }
  return true;
}
