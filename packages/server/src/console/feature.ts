/**
 * The web console as a feature: whether it is served ({@link ConsoleAccess}), its data (`/v1/status`,
 * `/v1/cluster`) and its event streams (`/v1/events`), in the {@link CONSOLE} slot of the routes' context.
 * Each console route is declared through {@link consoleRoute}, so it answers 404 saying why while the console
 * is off (docs/console.md); no other module knows the rule.
 */
import type { ServerResponse } from 'node:http';
import { serverError } from '../errors.js';
import type { HttpContext } from '../http/context.js';
import { FeatureSlot } from '../http/feature.js';
import type { Route } from '../http/route.js';
import type { ConsoleAccess } from './access.js';
import type { ClusterBody, StatusBody } from './types.js';

/** The console as its routes see it. */
export interface ConsoleFeature {
  /** Whether the console is served, and why not. */
  readonly access: ConsoleAccess;
  readonly data: { status(): StatusBody; cluster(): Promise<ClusterBody> };
  /** Answers one `GET /v1/events` on `res` (a stream, or a 503); returns the status sent. */
  readonly streams: { open(res: ServerResponse): number };
}

export const CONSOLE = new FeatureSlot<ConsoleFeature>('console');

/** The console of `ctx`; throws 503 on a context built without console data (a bare test context). */
export function consoleOf(ctx: HttpContext): ConsoleFeature {
  const c = CONSOLE.get(ctx);
  if (!c) throw serverError('UNAVAILABLE', 'this service was built without console data (no ServiceCore console)');
  return c;
}

/** A console route: while the console is off, its handler answers 404 saying why, whatever the token. */
export function consoleRoute(route: Route): Route {
  return {
    ...route,
    create: (ctx) => {
      const access = CONSOLE.get(ctx)?.access;
      if (access?.on === false)
        return () => {
          throw serverError('NOT_FOUND', access.why);
        };
      return route.create(ctx);
    },
  };
}
