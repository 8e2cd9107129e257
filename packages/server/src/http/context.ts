/**
 * What the HTTP routes need from the running service: the layout, a way to issue IDs,
 * readiness, metrics, the limits and the optional public-ID codec. `service.ts` builds it
 * around the leased generator; the routes never see the registry, so no route can change
 * the node, the layout or the clock.
 *
 * @example
 * ```ts
 * const handler = createRequestHandler(context); // see handler.ts
 * ```
 */
import type { FlurryError, Layout } from '@flurry/core';
import type { Sequences } from '@flurry/segments';
import type { ConsoleAccess } from '../console/access.js';
import type { ConsoleData } from '../console/data.js';
import type { EventStreams } from '../console/events.js';
import type { ServiceMetrics } from '../metrics.js';

/**
 * Issues and reads public IDs (issue 7), when a key is configured.
 *
 * @example
 * ```ts
 * const publicIds: PublicIds = { next: () => codec.encode(gen.next()), decode: (s) => codec.decode(s) };
 * ```
 */
export interface PublicIds {
  /** A new ID, encrypted and encoded as a public ID string. */
  next(): string;
  /** The ID behind a public ID; throws coded `FLURRY_E_PUBLIC_ID_*` errors. */
  decode(publicId: string): bigint;
  /** The public ID of an existing ID (gRPC's EncodePublicId). */
  encode?(id: bigint): string;
}

/**
 * Where the routes get IDs: the service's issuer around the leased generator (see
 * ../issuing.ts), which reports every ID it issues and every refusal once, whichever
 * route or protocol asked.
 *
 * @example
 * ```ts
 * const id: string = ctx.ids.nextString();
 * ```
 */
export interface IdSource {
  /** One new ID; throws coded errors while fenced or not started. */
  next(): bigint;
  /** One new ID as a decimal string. */
  nextString(): string;
  /** Writes `count` new increasing IDs into `target` from `offset`; returns how many it wrote. */
  fill(target: BigUint64Array, offset: number, count: number): number;
}

/**
 * A minimal logger (pino's shape).
 *
 * @example
 * ```ts
 * const logger: Logger = pino();
 * ```
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  isLevelEnabled?(level: string): boolean;
}

/**
 * The service as the routes see it.
 *
 * @example
 * ```ts
 * const handler = createRequestHandler(httpContext(config, core, logger)); // see ../service-core.ts
 * ```
 */
export interface HttpContext {
  readonly layout: Layout;
  /** New IDs; they throw coded errors while fenced or not yet leased. */
  readonly ids: IdSource;
  /** Null while ready (valid lease, sane clock, not shutting down), else why not. */
  notReady(): FlurryError | null;
  /** The current node field values, if a lease is held. */
  node(): Readonly<Record<string, number>> | undefined;
  readonly metrics: ServiceMetrics;
  readonly publicIds: PublicIds | undefined;
  /** Segment mode (`--sequences URL`), when configured. */
  readonly sequences?: Sequences | undefined;
  /** The configured bearer token, if any. */
  readonly token: string | undefined;
  /** Whether the web console is served (absent: it is). */
  readonly consoleAccess?: ConsoleAccess;
  /** Whether /healthz, /readyz and /metrics need the token too. */
  readonly authHealth: boolean;
  readonly maxBatch: number;
  readonly maxUrlBytes: number;
  readonly maxBodyBytes: number;
  readonly logger: Logger;
  /** The OpenAPI document, serialized. */
  readonly openapi: string;
  /** Set on SIGTERM: responses carry `Connection: close`. */
  shuttingDown: boolean;
  /** The console's data (`/v1/status`, `/v1/cluster`) and event streams (`/v1/events`). */
  readonly console?: { readonly data: ConsoleData; readonly streams: EventStreams } | undefined;
}
