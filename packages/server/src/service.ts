// The ID service: HTTP listens first (`/readyz` says 503), then segment mode's store opens, a generator
// is leased and the TCP front-ends start (steps in service-steps.ts); an outage is retried with backoff.
import type { RegistryOptions } from '@flurry/coordination';
import { assertKnownOptions } from '@flurry/core';
import { SEQUENCES, SegmentMode } from './sequences/routes.js';
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
  /** The bound ports (useful with `port: 0`); the optional front-ends' only when on. */
  readonly port: number;
  readonly thriftPort: number | undefined;
  readonly memcachedPort?: number | undefined;
  readonly grpcPort?: number | undefined;
  readonly server: HttpServer;
  /** Stops the service gracefully. Idempotent. */
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
  /** Adapts the HTTP context before the server is built (`--workers`: see workers/worker.ts). */
  adaptContext?: (ctx: HttpContext, core: ServiceCore) => HttpContext;
}

const START_OPTION_KEYS = ['signal', 'retry', 'registryOptions', 'adaptContext'] as const;

/**
 * Starts the service described by `config` (from `loadServeConfig`) with a pino-shaped logger. Resolves
 * once the lease is held; it listens meanwhile and waits out an outage of the store or the registry;
 * rejects with the coded error for any other failure or an abort (nothing is left running).
 *
 * @throws FlurryError `FLURRY_E_REGISTRY_*`, `FLURRY_E_CLOCK_BEHIND_HIGH_WATER`, `FLURRY_E_CONFIG` (an unusable
 * public-ID key), `FLURRY_E_LISTEN` (a port taken), `FLURRY_E_UNKNOWN_OPTION` (a config key that is no setting).
 * @example
 * ```ts
 * // As `flurry serve --port 0 --registry redis://127.0.0.1:6379`:
 * const config = loadServeConfig(['--port', '0', '--registry', 'redis://127.0.0.1:6379'], process.env);
 * const svc = await startService(config, pino());
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

  const startLog = logger.child({ component: 'start' });
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
    onAnswered: (wait: StartWait, waitedMs: number) => {
      core.startWait = undefined;
      startLog.info(
        { waitingFor: wait.step, failedTries: wait.attempt, waitedMs: Math.max(0, waitedMs) },
        `${waitedFor(wait.step)} answers; starting`,
      );
    },
  };
  let thrift: ThriftServer | undefined;
  let memcached: MemcachedServer | undefined;
  let grpc: GrpcServer | undefined;
  try {
    if (segments) await retryOutage('store', () => segments.open(core.metrics.registry), retry);
    await retryOutage('registry', () => leaseGenerator(config, core, port, logger, options.registryOptions), retry);
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
