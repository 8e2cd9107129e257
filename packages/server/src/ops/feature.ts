/**
 * The operations routes' state (`/v1/layout`, `/healthz`, `/readyz`, `/metrics`, `/openapi.json`): the node,
 * extra `/readyz` fields and the serialized OpenAPI document, in the {@link OPERATIONS} slot of the context.
 */
import { FeatureSlot } from '../http/feature.js';

/** What the operations routes read besides the context's layout, readiness and metrics. */
export interface Operations {
  /** The current node field values, if a lease is held. */
  node(): Readonly<Record<string, number>> | undefined;
  /** Extra fields of the `/readyz` 200 body (`--workers`: `{ workers: { ready, total } }`). */
  readonly readyBody?: (() => Record<string, unknown>) | undefined;
  /** The OpenAPI document, serialized. */
  readonly openapi: string;
}

export const OPERATIONS = new FeatureSlot<Operations>('operations');
