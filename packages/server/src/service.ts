// The ID service: the issuing core (service-core.ts) composed with its features from the steps in
// service-steps.ts. HTTP listens first (`/readyz` says 503), then segment mode's store opens, a generator
// is leased and the TCP front-ends start; an outage of the store or registry is retried with backoff.
import type { RegistryOptions } from '@flurry/coordination';
import { assertKnownOptions } from '@flurry/core';
import { SEQUENCES, SegmentMode } from './sequences/mode.js';
import { SERVE_CONFIG_KEYS, type ServeConfig } from './config/index.js';
import type { HttpContext } from './http/context.js';
import { TlsFiles } from './tls.js';
import { publicIdsOn } from './public-ids/codec.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { createServiceCore, httpContext, type ServiceCore } from './service-core.js';
import {
  abortStart,
  leaseGenerator,
  listenHttp,
  shutdown,
  startGrpc,
  startMemcached,
  startThrift,
  type ServiceLogger,
} from './service-steps.js';
import { retryOutage, waitedFor, type RetryOutageOptions, type StartWait } from './start-retry.js';
import type { GrpcServer } from './grpc/index.js';
import type { ThriftServer } from './thrift/server.js';
import type { MemcachedServer } from './memcached/index.js';

export { CLOCK_SANITY_MS } from './service-core.js';
export { SERVICE_ON_EXHAUSTED, type ServiceLogger } from './service-steps.js';

/** A running service. */
export interface RunningService {
  /** The HTTP port (useful with `port: 0`). */
  readonly port: number;
  /** The Thrift port, when Thrift is on. */
  readonly thriftPort: number | undefined;
  /** The memcached port, when the memcached endpoint is on. */
  readonly memcachedPort?: number | undefined;
  /** The gRPC / gRPC-Web / Connect port, when on. */
  readonly grpcPort?: number | undefined;
  /** The HTTP server. */
  readonly server: HttpServer;
  /** Stops the service gracefully (`shutdown` in service-steps.ts). Idempotent. */
  close(): Promise<void>;
  /** Re-reads the TLS certificate and key (SIGHUP); false when TLS is off. Throws `FLURRY_E_CONFIG` for a bad pair (the old one stays). */
  reloadTls?(): boolean;
}

/** Options of {@link startService} beyond the configuration. */
export interface StartServiceOptions {
  /** Aborting it while the start waits out an outage stops the start (it rejects with `FLURRY_E_UNAVAILABLE`). */
  signal?: AbortSignal;
  /** The backoff of the start's retries after an outage (default 500 ms doubling to 30 s) and its timers. */
  retry?: Pick<RetryOutageOptions, 'initialMs' | 'maxMs' | 'timers' | 'now'>;
  /** Registry options added to the configuration's (tests: a manual clock). */
  registryOptions?: Partial<RegistryOptions>;
  /**
   * Adapts the HTTP context before the server is built (`--workers`: a cluster worker answers
   * `/metrics`, `/readyz` and `/v1/status` for the whole service; see workers/worker.ts).
   */
  adaptContext?: (ctx: HttpContext, core: ServiceCore) => HttpContext;
}

const START_OPTION_KEYS = ['signal', 'retry', 'registryOptions', 'adaptContext'] as const;

/**
 * Starts the service described by `config`: the configuration comes from
 * `loadServeConfig` (flags, `FLURRY_*` variables, a config file), the logger is pino or
 * anything of its shape with `child()`. Resolves once the lease is held and the service
 * is ready; it listens meanwhile and waits out an outage of the store or the registry
 * (retrying with backoff); rejects with the coded error when it cannot start for another
 * reason, or when `options.signal` aborts the wait (nothing is left running).
 *
 * @throws FlurryError registry errors (`FLURRY_E_REGISTRY_*`), `FLURRY_E_CLOCK_BEHIND_HIGH_WATER`,
 * `FLURRY_E_CONFIG` (an unusable public-ID key), `FLURRY_E_LISTEN` (HTTP or Thrift port taken),
 * `FLURRY_E_UNKNOWN_OPTION` (a config key that is not a setting).
 * @example
 * ```ts
 * import { loadServeConfig, startService } from '@flurry/server';
 * import { pino } from 'pino';
 *
 * // The same settings as `flurry serve --port 0 --registry redis://127.0.0.1:6379 --token …`:
 * const config = loadServeConfig(['--port', '0', '--registry', 'redis://127.0.0.1:6379'], {
 *   FLURRY_TOKEN: process.env.FLURRY_TOKEN,
 * });
 * const svc = await startService(config, pino());
 * console.log(`GET http://127.0.0.1:${svc.port}/v1/ids/next`);
 * process.once('SIGTERM', () => void svc.close().then(() => process.exit(0)));
 * ```
 */
export async function startService(
  config: ServeConfig,
  logger: ServiceLogger,
  options: StartServiceOptions = {},
): Promise<RunningService> {
  assertKnownOptions(config, SERVE_CONFIG_KEYS, 'startService config');
  assertKnownOptions(options, START_OPTION_KEYS, 'startService options');
  const core = createServiceCore(config, logger);
  const base: HttpContext = { ...httpContext(config, core, logger.child({ component: 'http' })) };
  const ctx = options.adaptContext ? options.adaptContext(base, core) : base;
  const segments =
    config.sequences === undefined
      ? undefined
      : new SegmentMode(config.sequences, config, () => core.notReady() ?? undefined);
  SEQUENCES.set(ctx, segments);
  const tls = TlsFiles.fromConfig(config);
  const server = createHttpServer(ctx, tls);
  const closeSequences = async (): Promise<void> => segments?.close(logger);
  const port = await listenHttp(server, config.port, config.host);
  logger.info({ host: config.host, port }, 'http listening; acquiring a node-ID lease');

  // An outage of the store or the registry is waited out (not ready, retried with backoff);
  // bad input (a URL, credentials, a missing table) stops the start with its coded error.
  const startLog = logger.child({ component: 'start' });
  const now = options.retry?.now ?? Date.now;
  const retry = {
    ...options.retry,
    signal: options.signal,
    onWait: (wait: StartWait) => {
      core.startWait = wait;
      startLog.warn(
        {
          waitingFor: wait.step,
          code: wait.error.code,
          error: wait.error.message,
          attempt: wait.attempt,
          retryInMs: wait.retryInMs,
        },
        `${waitedFor(wait.step)} is not answering; not ready, retrying`,
      );
    },
  };
  let thrift: ThriftServer | undefined;
  let memcached: MemcachedServer | undefined;
  let grpc: GrpcServer | undefined;
  try {
    if (segments) {
      await retryOutage('store', () => segments.open(core.metrics.registry), retry);
      answered(core, startLog, now);
    }
    await retryOutage('registry', () => leaseGenerator(config, core, port, logger, options.registryOptions), retry);
    answered(core, startLog, now);
    thrift = await startThrift(config, core, logger);
    memcached = await startMemcached(config, core, logger);
    grpc = await startGrpc(config, core, ctx, logger, tls);
  } catch (err) {
    await thrift?.close().catch(() => undefined);
    await memcached?.close().catch(() => undefined);
    await abortStart(server, core);
    await closeSequences().catch(() => undefined);
    throw err;
  }
  logger.info(
    {
      port,
      thriftPort: thrift?.port,
      memcachedPort: memcached?.port,
      grpcPort: grpc?.port,
      layout: core.layout.name,
      spec: core.layout.describe().spec,
      node: core.issuer.leased?.generator.node,
      registry: core.registry?.url,
      cluster: config.cluster,
      auth: config.token !== undefined,
      publicIds: publicIdsOn(config),
    },
    'ready',
  );

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= shutdown({ config, core, ctx, server, thrift, memcached, grpc, logger, closeSequences }));
  return {
    port,
    thriftPort: thrift?.port,
    memcachedPort: memcached?.port,
    grpcPort: grpc?.port,
    server,
    close,
    reloadTls: () => {
      if (!tls) return false;
      tls.reload();
      logger.info({ cert: tls.certFile }, 'TLS certificate and key reloaded');
      return true;
    },
  };
}

/** The store or registry answered after an outage: log it and clear the wait. */
function answered(core: ServiceCore, log: ServiceLogger, now: () => number): void {
  const wait = core.startWait;
  if (wait === undefined) return;
  core.startWait = undefined;
  log.info(
    { waitingFor: wait.step, failedTries: wait.attempt, waitedMs: Math.max(0, now() - wait.since) },
    `${waitedFor(wait.step)} answers; starting`,
  );
}
