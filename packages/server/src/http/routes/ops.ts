/**
 * Operational routes: `/healthz` (the process answers), `/readyz` (200 only while the
 * lease is valid and the clock sane), `/metrics` (Prometheus text), `/openapi.json` and
 * `/v1/layout`.
 *
 * @example
 * ```ts
 * readyz(ctx, res); // 200 {"status":"ready",…} or 503 with the reason's code
 * ```
 */
import type { ServerResponse } from 'node:http';
import type { HttpContext } from '../context.js';
import { JSON_TYPE, sendError, sendText } from '../respond.js';

const HEALTHY = '{"status":"ok"}';

/**
 * `GET /healthz` → 200 `{"status":"ok"}` while the process serves requests.
 *
 * @example
 * ```ts
 * healthz(res);
 * ```
 */
export function healthz(res: ServerResponse): number {
  return sendText(res, 200, JSON_TYPE, HEALTHY);
}

/**
 * `GET /readyz` → 200 `{"status":"ready","node":{…}}`, or 503 with `Retry-After` and the
 * coded reason (`FLURRY_E_LEASE_EXPIRED`, `FLURRY_E_CLOCK_BACKWARDS`, `FLURRY_E_UNAVAILABLE`…).
 *
 * @example
 * ```ts
 * readyz(ctx, res);
 * ```
 */
export function readyz(ctx: HttpContext, res: ServerResponse): number {
  const reason = ctx.notReady();
  if (reason) return sendError(res, reason);
  return sendText(res, 200, JSON_TYPE, JSON.stringify({ status: 'ready', node: ctx.node() ?? null }));
}

/**
 * `GET /v1/layout` → the layout's description (fields, epoch, unit, end of life, capacity)
 * and this service's current node.
 *
 * @example
 * ```ts
 * layoutRoute(ctx, res, describedLayoutJson);
 * ```
 */
export function layoutRoute(ctx: HttpContext, res: ServerResponse): number {
  const body = JSON.stringify({ ...(ctx.layout.describe() as object), node: ctx.node() ?? null });
  return sendText(res, 200, JSON_TYPE, body);
}

/**
 * `GET /openapi.json`.
 *
 * @example
 * ```ts
 * openapi(ctx, res);
 * ```
 */
export function openapi(ctx: HttpContext, res: ServerResponse): number {
  return sendText(res, 200, JSON_TYPE, ctx.openapi);
}
