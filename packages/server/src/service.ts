/**
 * The ID service: wires the configuration, the node-ID registry, the leased generator,
 * metrics, the HTTP server and (optionally) the Twitter-compatible Thrift server, and
 * shuts them down in order. {@link startService} composes named steps (service-core.ts,
 * service-steps.ts), each usable and testable on its own.
 *
 * Start-up: listen on HTTP first (so `/healthz` answers and `/readyz` says 503 while the
 * lease is being acquired, and the Leaf-compatible registry learns this service's
 * `ip:port`), then open the registry and acquire a lease through `leasedGenerator`, then
 * start Thrift. A failure to acquire stops the service with the coded error.
 *
 * Shutdown ({@link RunningService.close}): stop accepting connections, let in-flight
 * requests finish (cut after `shutdownTimeoutMs`), stop Thrift, then close the leased
 * generator (it reports the final high-water mark and releases the lease, so another
 * process may take the node ID at once and continues above every ID issued here), then
 * close the registry.
 *
 * @example
 * ```ts
 * const service = await startService(loadServeConfig([], process.env), pino());
 * console.log(service.port);
 * await service.close();
 * ```
 */
import type { Server } from 'node:http';
import { assertKnownOptions, optionNames } from '@flurry/core';
import { openSequences, type Sequences } from '@flurry/segments';
import { SequenceMetrics } from './sequence-metrics.js';
import type { ServeConfig } from './config/index.js';
import { createHttpServer } from './http/server.js';
import { createServiceCore, httpContext, type ServiceCore } from './service-core.js';
import {
  abortStart,
  leaseGenerator,
  listenHttp,
  shutdown,
  startGrpc,
  startThrift,
  type ServiceLogger,
} from './service-steps.js';
import type { GrpcServer } from './grpc/index.js';
import type { ThriftServer } from './thrift/index.js';

export { CLOCK_SANITY_MS } from './service-core.js';
export { SERVICE_ON_EXHAUSTED, type ServiceLogger } from './service-steps.js';

/**
 * A running service.
 *
 * @example
 * ```ts
 * const service: RunningService = await startService(config, logger);
 * console.log(`http on ${service.port}, thrift on ${service.thriftPort ?? 'off'}`);
 * await service.close();
 * ```
 */
export interface RunningService {
  /** The HTTP port (useful with `port: 0`). */
  readonly port: number;
  /** The Thrift port, when Thrift is on. */
  readonly thriftPort: number | undefined;
  /** The gRPC / gRPC-Web / Connect port, when on. */
  readonly grpcPort?: number | undefined;
  /** The HTTP server. */
  readonly server: Server;
  /** Stops the service gracefully (see the module comment). Idempotent. */
  close(): Promise<void>;
}

/**
 * The keys of {@link ServeConfig}: `startService` refuses any other key (a hand-built config with `clustr` or
 * `leaseTtl`) with `FLURRY_E_UNKNOWN_OPTION` naming the closest valid one. Adding a field to `ServeConfig`
 * without listing it here fails to compile.
 *
 * @example
 * ```ts
 * SERVE_CONFIG_KEYS.includes('cluster'); // true
 * ```
 */
export const SERVE_CONFIG_KEYS = optionNames<ServeConfig>({
  host: true,
  port: true,
  layout: true,
  node: true,
  registry: true,
  registrySource: true,
  cluster: true,
  leaseTtlMs: true,
  leaseRenewMs: true,
  leaseMarginMs: true,
  highWaterWaitMs: true,
  registryConnectTimeoutMs: true,
  onExhausted: true,
  onClockBackwards: true,
  sequenceStart: true,
  thriftPort: true,
  grpcPort: true,
  token: true,
  authHealth: true,
  console: true,
  maxBatch: true,
  maxUrlBytes: true,
  maxBodyBytes: true,
  publicKey: true,
  publicKeyFile: true,
  sequences: true,
  autoCreate: true,
  allowVolatileStore: true,
  sequenceMaxStep: true,
  sequenceTargetMs: true,
  logLevel: true,
  allowRoot: true,
  shutdownTimeoutMs: true,
  configFile: true,
});

/**
 * Starts the service described by `config`: the configuration comes from
 * `loadServeConfig` (flags, `FLURRY_*` variables, a config file), the logger is pino or
 * anything of its shape with `child()`. Resolves once the lease is held and the service
 * is ready; rejects with the coded error when it cannot be (nothing is left running).
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
export async function startService(config: ServeConfig, logger: ServiceLogger): Promise<RunningService> {
  assertKnownOptions(config, SERVE_CONFIG_KEYS, 'startService config');
  const core = createServiceCore(config, logger);
  let sequenceMetrics: SequenceMetrics | undefined;
  // Segment mode (--sequences URL): opened first, so a bad store URL, credentials or a volatile Redis stop the start.
  const sequences: Sequences | undefined =
    config.sequences === undefined
      ? undefined
      : await openSequences(config.sequences, {
          autoCreate: config.autoCreate,
          allowVolatileStore: config.allowVolatileStore,
          maxBatch: config.maxBatch,
          maxStep: config.sequenceMaxStep,
          targetSegmentMs: config.sequenceTargetMs,
          onEvent: (sequenceMetrics ??= new SequenceMetrics(core.metrics.registry)).onEvent,
        });
  if (sequences && sequenceMetrics) sequenceMetrics.attach(sequences);
  const ctx = { ...httpContext(config, core, logger.child({ component: 'http' })), sequences };
  core.console.data.sequences = sequences;
  const server = createHttpServer(ctx);
  const closeSequences = async (): Promise<void> => {
    if (!sequences) return;
    const { handedBack, wasted } = await sequences.close();
    logger.info({ handedBack: handedBack.toString(), wasted: wasted.toString() }, 'sequences closed');
  };
  let port: number;
  try {
    port = await listenHttp(server, config.port, config.host);
  } catch (err) {
    await closeSequences().catch(() => undefined);
    throw err;
  }
  logger.info({ host: config.host, port }, 'http listening; acquiring a node-ID lease');

  let thrift: ThriftServer | undefined;
  let grpc: GrpcServer | undefined;
  try {
    await leaseGenerator(config, core, port, logger);
    thrift = await startThrift(config, core, logger);
    grpc = await startGrpc(config, core, ctx, logger);
  } catch (err) {
    await thrift?.close().catch(() => undefined);
    await abortStart(server, core);
    await closeSequences().catch(() => undefined);
    throw err;
  }
  logReady(config, core, port, thrift, logger, grpc);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= shutdown({ config, core, ctx, server, thrift, grpc, logger }).finally(closeSequences));
  return { port, thriftPort: thrift?.port, grpcPort: grpc?.port, server, close };
}

function logReady(
  config: ServeConfig,
  core: ServiceCore,
  port: number,
  thrift: ThriftServer | undefined,
  logger: ServiceLogger,
  grpc?: GrpcServer,
): void {
  logger.info(
    {
      port,
      thriftPort: thrift?.port,
      grpcPort: grpc?.port,
      layout: core.layout.name,
      spec: core.layout.describe().spec,
      node: core.issuer.leased?.generator.node,
      registry: core.registry?.url,
      cluster: config.cluster,
      auth: config.token !== undefined,
      publicIds: core.publicIds !== undefined,
    },
    'ready',
  );
}
