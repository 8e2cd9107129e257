// The web console as a feature in the routes' context; each console route is declared through consoleRoute, so
// it answers 404 saying why while the console is off and no other module knows the rule.
import type { ServerResponse } from 'node:http';
import { serverError } from '../errors.js';
import type { HttpContext } from '../http/context.js';
import { FeatureSlot } from '../http/feature.js';
import type { Route } from '../http/route.js';
import type { ConsoleAccess } from './access.js';

/** The console as its routes see it. */
export interface ConsoleFeature {
  readonly access: ConsoleAccess;
  readonly data: { status(): unknown; cluster(): Promise<unknown> };
  readonly streams: { open(res: ServerResponse): number };
}

export const CONSOLE = new FeatureSlot<ConsoleFeature>('console');

/** The console of `ctx`; 503 on a context built without one (a bare test context). */
export function consoleOf(ctx: HttpContext): ConsoleFeature {
  const c = CONSOLE.get(ctx);
  if (!c) throw serverError('UNAVAILABLE', 'this service was built without console data (no ServiceCore console)');
  return c;
}

/** A console route: while the console is off, 404 saying why, whatever the token. */
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
