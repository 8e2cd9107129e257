// The ID service: HTTP listens first (`/readyz` says 503), then segment mode's store opens, a generator
// is leased and the TCP front-ends start; an outage is retried with backoff.
import { assertKnownOptions, FlurryError } from '@flurry/core';
import { leasedGenerator, openRegistry, type LeasedGenerator, type RegistryOptions } from '@flurry/coordination';
import { SEQUENCES, SegmentMode } from './sequences/routes.js';
import { registryOptionsOf, SERVE_CONFIG_KEYS, type ServeConfig } from './config/index.js';
import type { HttpContext, Logger } from './http/context.js';
import { TlsFiles } from './tls.js';
import { PUBLIC_IDS, publicIdsOn } from './public-ids/codec.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { createServiceCore, httpContext, type ServiceCore } from './service-core.js';
import { retryOutage, waitedFor, type RetryOutageOptions, type StartWait } from './start-retry.js';
import type { GrpcServer } from './grpc/server.js';
import type { IdServiceContext } from './grpc/id-service.js';
import type { ThriftServer } from './thrift/server.js';
import type { MemcachedServer } from './memcached/server.js';
import { serverError } from './errors.js';
import { listenTcp } from './tcp-listener.js';
import { UUIDS } from './http/routes/uuids.js';

export { CLOCK_SANITY_MS } from './service-core.js';

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

/** The logger `startService` writes to: pino's shape, with `child(bindings)` (each line has a `component`). */
export interface ServiceLogger extends Logger {
  child(bindings: object): ServiceLogger;
}

/** The service's default sequence-exhaustion policy: `borrow` up to `maxBorrowMs` ahead (the high-water mark covers it). */
export const SERVICE_ON_EXHAUSTED = 'borrow' as const;

/** Listens on `host:port`; resolves with the bound port, or rejects with `FLURRY_E_LISTEN`. */
export function listenHttp(server: HttpServer, port: number, host: string): Promise<number> {
  return listening('HTTP', 'host or port (--host, --port)', host, port, listenTcp(server, host, port));
}

/**
 * Leases a generator from the configured registry for the core's issuer, advertising `host:port`; throws
 * `FLURRY_E_REGISTRY_*` or `FLURRY_E_CLOCK_BEHIND_HIGH_WATER`.
 */
export async function leaseGenerator(
  config: ServeConfig,
  core: ServiceCore,
  port: number,
  logger: ServiceLogger,
  registryOptions: Partial<RegistryOptions> = {},
): Promise<LeasedGenerator> {
  const regLog = logger.child({ component: 'registry' });
  const registry = await openRegistry(config.registry, {
    ...registryOptionsOf(config),
    holder: { address: `${config.host}:${port}` },
    logger: { warn: (o, m) => regLog.warn(o, m), info: (o, m) => regLog.info(o, m) },
    ...registryOptions,
  });
  core.registry = registry;
  const policies = {
    onExhausted: config.onExhausted ?? SERVICE_ON_EXHAUSTED,
    ...(config.onClockBackwards !== undefined ? { onClockBackwards: config.onClockBackwards } : {}),
    ...(config.sequenceStart !== undefined ? { sequenceStart: config.sequenceStart } : {}),
  };
  const lg = await leasedGenerator({
    registry,
    layout: core.layout,
    pin: { ...config.node },
    generator: { onEvent: core.issuer.onEvent, ...policies },
  }).catch(async (err: unknown) => {
    // No lease: close the registry, so that a retry after an outage opens a fresh one.
    core.registry = undefined;
    await registry.close().catch(() => undefined);
    throw err;
  });
  core.issuer.attach(lg);
  core.uuids.attach(lg, registry, policies); // UUIDv7 on the same lease (see issuing.ts)
  core.console.data.watch(lg);
  watchLease(lg, logger);
  return lg;
}

function listening<T>(what: string, choose: string, host: string, port: number, started: Promise<T>): Promise<T> {
  return started.catch((err: NodeJS.ErrnoException) => {
    if (err instanceof FlurryError || err.code === undefined) throw err;
    throw serverError(
      'LISTEN',
      `cannot listen for ${what} on ${host}:${port} (${err.code}); choose another ${choose}, or stop what holds it`,
      { host, port, cause: err.code },
    );
  });
}

/** Starts the Thrift server when `thriftPort` is set (its library is loaded only then, as for the others). */
async function startThrift(
  { host, thriftPort }: Pick<ServeConfig, 'host' | 'thriftPort'>,
  core: ServiceCore,
  logger: ServiceLogger,
): Promise<ThriftServer | undefined> {
  if (thriftPort === undefined) return undefined;
  const { startThriftServer } = await import('./thrift/server.js');
  const started = startThriftServer({
    host,
    port: thriftPort,
    generator: core.issuer,
    layout: core.layout,
    node: () => core.issuer.leased?.generator.node ?? {},
    logger: logger.child({ component: 'thrift' }),
  });
  return listening('Thrift', '--thrift-port', host, thriftPort, started);
}

export async function startMemcached(
  c: Pick<ServeConfig, 'host' | 'memcachedPort' | 'memcachedIdleTimeoutMs' | 'token'>,
  core: ServiceCore,
  logger: ServiceLogger,
): Promise<MemcachedServer | undefined> {
  if (c.memcachedPort === undefined) return undefined;
  const { startMemcachedServer, MEMCACHED_COMMANDS } = await import('./memcached/server.js');
  const started = startMemcachedServer({
    host: c.host,
    port: c.memcachedPort,
    ids: core.issuer,
    ...(c.token !== undefined ? { token: c.token } : {}),
    idleTimeoutMs: c.memcachedIdleTimeoutMs,
    recorder: core.metrics.protocols.recorder('memcached', MEMCACHED_COMMANDS),
    issued: () => core.issuer.issued(),
    logger: logger.child({ component: 'memcached' }),
  });
  return listening('memcached', '--memcached-port', c.host, c.memcachedPort, started);
}

/** Starts the gRPC / gRPC-Web / Connect port when `grpcPort` is set, over the HTTP routes' context. */
async function startGrpc(
  { host, grpcPort }: Pick<ServeConfig, 'host' | 'grpcPort'>,
  core: ServiceCore,
  ctx: HttpContext,
  logger: ServiceLogger,
  tls?: TlsFiles,
): Promise<GrpcServer | undefined> {
  if (grpcPort === undefined) return undefined;
  const { startGrpcServer } = await import('./grpc/server.js');
  const protocols = core.metrics.protocols;
  const started = startGrpcServer({
    host,
    port: grpcPort,
    ids: idServiceContext(ctx),
    ready: () => core.notReady() === null,
    token: ctx.limits.token,
    authHealth: ctx.limits.authHealth,
    ...(tls ? { tls } : {}),
    record: (protocol, method, code, seconds) => protocols.call(protocol, method, code, seconds),
    logger: logger.child({ component: 'grpc' }),
  });
  return listening('gRPC', '--grpc-port', host, grpcPort, started);
}

export function idServiceContext(ctx: HttpContext): IdServiceContext {
  return {
    layout: ctx.layout,
    ids: ctx.ids,
    token: ctx.limits.token,
    maxBatch: ctx.limits.maxBatch,
    uuids: UUIDS.get(ctx),
    publicIds: PUBLIC_IDS.get(ctx),
    sequences: SEQUENCES.get(ctx)?.sequences,
  };
}

/** Undoes a start that failed after listening (errors ignored: the start's is the one to report). */
export async function abortStart(server: HttpServer, core: ServiceCore): Promise<void> {
  core.console.streams.close();
  core.console.data.close();
  await new Promise<void>((r) => server.close(() => r()));
  server.closeAllConnections();
  await core.uuids.close().catch(() => undefined);
  if (core.issuer.leased) await core.issuer.leased.close().catch(() => undefined);
  if (core.registry) await core.registry.close().catch(() => undefined);
}

// Stops a started service in order (docs/operations.md#graceful-shutdown): the lease is released last but for
// the registry and sequences, with the final high-water mark the next holder continues above.
export async function shutdown(p: {
  readonly config: ServeConfig;
  readonly core: ServiceCore;
  readonly ctx: HttpContext;
  readonly server: HttpServer;
  readonly thrift: ThriftServer | undefined;
  readonly memcached?: MemcachedServer | undefined;
  readonly grpc?: GrpcServer | undefined;
  readonly logger: ServiceLogger;
  readonly closeSequences?: () => Promise<void>;
}): Promise<void> {
  const { core, logger } = p;
  core.shuttingDown = true;
  p.ctx.shuttingDown = true;
  logger.info({}, 'shutting down: finishing in-flight requests');
  core.console.streams.close(); // open consoles would hold server.close() up
  core.console.data.close();
  await closeHttp(p.server, p.config.shutdownTimeoutMs);
  const frontEnds = { 'thrift server': p.thrift, 'memcached endpoint': p.memcached, 'gRPC server': p.grpc };
  for (const [name, server] of Object.entries(frontEnds))
    await server?.close().catch((err: unknown) => logger.warn({ err: String(err) }, `closing the ${name} failed`));
  core.issuer.flush(); // no request issues any more: sum up the refusals not yet logged
  await core.uuids.close().catch(() => undefined); // before the lease is released: its high-water mark counts
  const lg = core.issuer.leased;
  if (lg) {
    const last = lg.generator.lastIssuedUnixMs;
    try {
      await lg.close();
      logger.info({ highWaterMs: last }, 'lease released with the final high-water mark');
    } catch (err) {
      // Safe: the lease is fenced by its deadline and the next holder's floor covers what was issued here.
      logger.error(
        { error: errInfo(err), highWaterMs: last },
        'releasing the lease failed; the node ID frees itself when its TTL runs out',
      );
    }
  }
  await core.registry
    ?.close()
    .catch((err: unknown) => logger.warn({ error: errInfo(err) }, 'closing the registry failed'));
  await p
    .closeSequences?.()
    .catch((err: unknown) => logger.warn({ error: errInfo(err) }, 'closing the sequences failed'));
  logger.info({}, 'stopped');
}

// Renewal failures and re-acquisitions are logged by the registry itself.
function watchLease(lg: LeasedGenerator, logger: ServiceLogger): void {
  const log = logger.child({ component: 'lease' });
  lg.lease.on('lost', (err) =>
    log.error({ error: errInfo(err) }, 'lease lost: issuing is fenced until a new lease is acquired'),
  );
  lg.lease.on('node-changed', (node: unknown) => log.warn({ node }, 'node ID changed after re-acquiring'));
}

function errInfo(err: unknown): object {
  return err instanceof FlurryError ? { code: err.code, message: err.message } : { message: String(err) };
}

function closeHttp(server: HttpServer, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 25);
    const cut = setTimeout(() => {
      server.closeAllConnections();
      setTimeout(finish, 50).unref();
    }, timeoutMs);
    const finish = () => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    };
    server.close(() => finish());
    server.closeIdleConnections();
  });
}
