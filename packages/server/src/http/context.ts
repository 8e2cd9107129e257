// What the HTTP routes see of the service: never the registry, so no route can change the node,
// the layout or the clock.
import type { FlurryError, FlurryLogger, Layout, UuidFormat, UuidTextForm } from '@flurry/core';

/** Where the routes get IDs: the service's issuer around the leased generator (../issuing.ts). */
export interface IdSource {
  /** One new ID; throws coded errors while fenced or not started. */
  next(): bigint;
  nextString(): string;
  /** Writes `count` new increasing IDs into `target` from `offset`; returns how many it wrote. */
  fill(target: BigUint64Array, offset: number, count: number): number;
}

/** Where the UUID routes get UUIDv7: the service's generator on its own node lease (see ../issuing.ts). */
export interface UuidSource {
  /** The node and sequence widths, for decoding. */
  readonly format: UuidFormat;
  /** One new UUID, canonical; throws coded errors while fenced or not started. */
  next(): string;
  nextAs(form: UuidTextForm): string;
  batch(n: number, form?: UuidTextForm): string[];
}

/** A minimal logger (pino's shape): core's `FlurryLogger` plus `error`, `debug` and the level check. */
export interface Logger extends FlurryLogger {
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  isLevelEnabled?(level: string): boolean;
}

/** What the routes and the request handler use of the service's metrics (`ServiceMetrics` in ../metrics.ts is one). */
export interface RouteMetrics {
  /** Counts one request of route `route` (its index in `ROUTES`) answered with `status` after `seconds`. */
  request(route: number, status: number, seconds: number): void;
  /** The Prometheus text exposition. */
  text(): Promise<string>;
  readonly contentType: string;
}

/** The service as the routes see it. */
export interface HttpContext {
  readonly layout: Layout;
  readonly ids: IdSource;
  /** Null while ready (valid lease, sane clock, not shutting down), else why not. */
  notReady(): FlurryError | null;
  readonly metrics: RouteMetrics;
  /** Checked on every route: the token (`authHealth`: /healthz, /readyz and /metrics need it too) and size limits. */
  readonly limits: {
    readonly token: string | undefined;
    readonly authHealth: boolean;
    readonly maxBatch: number;
    readonly maxUrlBytes: number;
    readonly maxBodyBytes: number;
  };
  readonly logger: Logger;
  /** Set on SIGTERM: responses carry `Connection: close`. */
  shuttingDown: boolean;
  readonly features: FeatureStates;
}

// A feature (a folder: its routes, state and settings) keeps its state in its own slot of the context; nothing
// outside it knows the state's type.
/** Each feature's state on one context, by slot. */
export type FeatureStates = Map<FeatureSlot<unknown>, unknown>;

/** The slot of one feature's state (the feature's module owns it). */
export class FeatureSlot<T> {
  constructor(readonly name: string) {}

  /** The feature's state on `ctx`, or undefined when the feature is off. */
  get(ctx: Pick<HttpContext, 'features'>): T | undefined {
    return ctx.features.get(this) as T | undefined;
  }

  /** Sets (or, with undefined, clears) the feature's state on `ctx`. */
  set(ctx: Pick<HttpContext, 'features'>, state: T | undefined): void {
    if (state === undefined) ctx.features.delete(this);
    else ctx.features.set(this, state);
  }
}
