// The service's state apart from its servers, and the routes' context. Building it opens nothing
// (no socket, no registry), so a test can serve requests in-process once a generator is attached.
import { CONSOLE, consoleAccess } from './console/routes.js';
import { OPERATIONS } from './ops/feature.js';
import { UUIDS } from './http/routes/uuids.js';
import {
  FlurryError,
  GENERATOR_DEFAULTS,
  systemClock,
  type Clock,
  type GeneratorEvent,
  type Layout,
} from '@flurry/core';
import { redactUrl, type Registry } from '@flurry/coordination';
import type { ServeConfig } from './config/index.js';
import { ConsoleData } from './console/data.js';
import { EventStreams } from './console/events.js';
import { serverError } from './errors.js';
import type { FeatureStates, HttpContext, Logger } from './http/context.js';
import { PUBLIC_IDS, makePublicIds, publicIdsOn } from './public-ids/codec.js';
import { LeasedIssuer, UuidIssuer, type EventLogger } from './issuing.js';
import { ServiceMetrics } from './metrics.js';
import { openApiJson } from './openapi.js';
import { waitedFor, type StartWait } from './start-retry.js';

/** How far (ms) the wall clock may be behind the newest issued timestamp before `/readyz` fails: `maxBorrowMs`. */
export const CLOCK_SANITY_MS = GENERATOR_DEFAULTS.maxBorrowMs;

/** The running service's state, apart from its servers. */
export interface ServiceCore {
  readonly layout: Layout;
  readonly issuer: LeasedIssuer;
  /** The UUIDv7 generator on the issuer's lease. */
  readonly uuids: UuidIssuer;
  readonly metrics: ServiceMetrics;
  /** Null while ready (valid lease, sane clock, not shutting down), else why not. */
  notReady(): FlurryError | null;
  registry: Registry | undefined;
  shuttingDown: boolean;
  /** While the start waits out an outage of the store or registry: what it waits for and why. */
  startWait: StartWait | undefined;
  /** Each feature's state (shared with the routes' context). */
  readonly features: FeatureStates;
  readonly console: { readonly data: ConsoleData; readonly streams: EventStreams };
}

/** Builds the core of a service from its configuration. */
export function createServiceCore(
  config: ServeConfig,
  logger: EventLogger,
  options: { clock?: Clock } = {},
): ServiceCore {
  const clock = options.clock ?? systemClock;
  const notStartedError = () => notStarted(config, core.startWait);
  const issuing = {
    logger,
    count: (e: GeneratorEvent) => core.metrics.onGeneratorEvent(e),
    notStarted: notStartedError,
  };
  const issuer: LeasedIssuer = new LeasedIssuer(issuing);
  const core: ServiceCore = {
    layout: config.layout,
    issuer,
    uuids: new UuidIssuer({ ...issuing, layout: config.layout }),
    metrics: new ServiceMetrics({
      issued: () => issuer.issued(),
      lease: () => issuer.leased?.lease,
      ready: () => core.notReady() === null,
      node: () => issuer.leased?.generator.node,
      endOfLifeSeconds: () => (config.layout.expiresAt.getTime() - clock.now()) / 1000,
    }),
    notReady: () => readiness(core, config, clock, notStartedError),
    registry: undefined,
    features: new Map(),
    shuttingDown: false,
    startWait: undefined,
    console: undefined as unknown as ServiceCore['console'],
  };
  const data = new ConsoleData({ core, config, clock, publicIds: publicIdsOn(config) });
  (core as { console: ServiceCore['console'] }).console = { data, streams: new EventStreams(data) };
  return core;
}

/** The context of the HTTP routes over a service core; `FLURRY_E_CONFIG` for an unusable public-ID key. */
export function httpContext(config: ServeConfig, core: ServiceCore, logger: Logger): HttpContext {
  const ctx: HttpContext = {
    layout: core.layout,
    ids: core.issuer,
    notReady: () => core.notReady(),
    metrics: core.metrics,
    limits: {
      token: config.token,
      authHealth: config.authHealth,
      maxBatch: config.maxBatch,
      maxUrlBytes: config.maxUrlBytes,
      maxBodyBytes: config.maxBodyBytes,
    },
    logger,
    shuttingDown: false,
    features: core.features,
  };
  UUIDS.set(ctx, core.uuids);
  OPERATIONS.set(ctx, { node: () => core.issuer.leased?.generator.node, openapi: openApiJson() });
  CONSOLE.set(ctx, { access: consoleAccess(config.console, config.host, config.token), ...core.console });
  PUBLIC_IDS.set(
    ctx,
    makePublicIds(config, config.layout.totalBits, () => core.issuer.next()),
  );
  return ctx;
}

function readiness(
  core: ServiceCore,
  config: ServeConfig,
  clock: Clock,
  notStartedError: () => FlurryError,
): FlurryError | null {
  const layout = config.layout;
  if (core.shuttingDown) return serverError('UNAVAILABLE', 'the service is shutting down; use another instance');
  const lg = core.issuer.leased;
  if (!lg) return notStartedError();
  if (!lg.ready()) {
    return new FlurryError(
      'FLURRY_E_LEASE_EXPIRED',
      `the node-ID lease is not valid (its fencing deadline has passed without a successful renewal); the service issues nothing until the registry (${core.registry?.url ?? redactUrl(config.registry)}) renews it or grants a new one`,
    );
  }
  const now = clock.now();
  if (now < layout.epochMs) {
    return new FlurryError(
      'FLURRY_E_CLOCK_BEFORE_EPOCH',
      `the system clock (${new Date(now).toISOString()}) is before the layout's epoch (${new Date(layout.epochMs).toISOString()}); fix the clock`,
    );
  }
  if (now >= layout.expiresAt.getTime()) {
    return new FlurryError(
      'FLURRY_E_LAYOUT_EXPIRED',
      `the layout ${layout.name} ran out at ${layout.expiresAt.toISOString()}; move to a layout with a later epoch`,
    );
  }
  const behind = lg.generator.lastIssuedUnixMs - now;
  if (behind > CLOCK_SANITY_MS + layout.unitMs) {
    return new FlurryError(
      'FLURRY_E_CLOCK_BACKWARDS',
      `the system clock is ${Math.round(behind)} ms behind the newest ID issued here (more than ${CLOCK_SANITY_MS} ms); IDs resume once it catches up`,
      { behindMs: Math.round(behind) },
    );
  }
  return null;
}

function notStarted(config: ServeConfig, wait: StartWait | undefined): FlurryError {
  if (wait !== undefined) {
    const what = `${waitedFor(wait.step)} ${redactUrl(wait.step === 'store' ? (config.sequences ?? '') : config.registry)}`;
    return serverError(
      'UNAVAILABLE',
      `the service is starting: ${what} is not answering (${wait.error.code}: ${wait.error.message}); ` +
        `try ${wait.attempt} failed, the next in ${wait.retryInMs} ms; the service becomes ready by itself once it answers`,
      { waitingFor: wait.step, cause: wait.error.code, attempt: wait.attempt, since: wait.since },
    );
  }
  return serverError(
    'UNAVAILABLE',
    `the service is starting: it has no node-ID lease from ${redactUrl(config.registry)} yet; retry shortly`,
  );
}
