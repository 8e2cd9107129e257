import { FeatureSlot } from '../http/context.js';

/** What the operations routes read besides the context's layout, readiness and metrics. */
export interface Operations {
  node(): Readonly<Record<string, number>> | undefined; // while a lease is held
  /** Extra fields of the `/readyz` 200 body (`--workers`: `{ workers: { ready, total } }`). */
  readonly readyBody?: (() => Record<string, unknown>) | undefined;
  readonly openapi: string; // serialized
}

export const OPERATIONS = new FeatureSlot<Operations>('operations');
