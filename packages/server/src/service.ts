/**
 * The ID service: wires the configuration, the node-ID registry, the leased generator,
 * metrics, the HTTP server and (optionally) the Twitter-compatible Thrift server, and
 * shuts them down in order.
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
import {
  FlurryError,
  GENERATOR_DEFAULTS,
  assertKnownOptions,
  optionNames,
  PublicIdCodec,
  parseKeys,
  loadKeysFromFile,
  systemClock,
  type GeneratorEvent,
  type Layout,
} from '@flurry/core';
import { leasedGenerator, openRegistry, redactUrl, type LeasedGenerator, type Registry } from '@flurry/coordination';
import type { ServeConfig } from './config/index.js';
import { serverError } from './errors.js';
import type { HttpContext, Logger, PublicIds } from './http/context.js';
import { BatchBodyWriter } from './http/batch-body.js';
import { createHttpServer } from './http/server.js';
import { EpisodeLog, type Schedule } from './log-throttle.js';
import { ServiceMetrics } from './metrics.js';
import { openApiJson } from './openapi.js';
import type { ThriftServer } from './thrift/index.js';

/**
 * How far (ms) the wall clock may be behind the newest issued timestamp before `/readyz`
 * calls the clock insane: the generator's borrowing bound (`maxBorrowMs`, 1000). Smaller
 * steps back are absorbed by borrowing ticks; beyond it the generator waits or refuses.
 *
 * @example
 * ```ts
 * if (lastIssuedUnixMs - Date.now() > CLOCK_SANITY_MS) notReady();
 * ```
 */
export const CLOCK_SANITY_MS = GENERATOR_DEFAULTS.maxBorrowMs;

/**
 * The service's sequence-exhaustion policy unless configured: `borrow`. A tick's sequence
 * only runs out under batch load; borrowing then issues from up to 1 s ahead of the wall
 * clock (the generator's `maxBorrowMs`) instead of sleeping into each next millisecond, so
 * one client's batches get the layout's full rate while the response is being written.
 * IDs stay unique and increasing; the lease's high-water mark covers the borrowed ticks.
 * `--on-exhausted wait` keeps every ID's timestamp at or before the real time instead.
 *
 * @example
 * ```ts
 * const policy = config.onExhausted ?? SERVICE_ON_EXHAUSTED; // 'borrow'
 * ```
 */
export const SERVICE_ON_EXHAUSTED = 'borrow' as const;

/**
 * A running service.
 *
 * @example
 * ```ts
 * const service: RunningService = await startService(config, logger); await service.close();
 * ```
 */
export interface RunningService {
  /** The HTTP port (useful with `port: 0`). */
  readonly port: number;
  /** The Thrift port, when Thrift is on. */
  readonly thriftPort: number | undefined;
  /** The HTTP server. */
  readonly server: Server;
  /** Stops the service gracefully (see the module comment). Idempotent. */
  close(): Promise<void>;
}

/**
 * A pino-shaped logger with child loggers.
 *
 * @example
 * ```ts
 * const logger = pino() as unknown as ServiceLogger;
 * ```
 */
export interface ServiceLogger extends Logger {
  child(bindings: object): ServiceLogger;
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
  token: true,
  authHealth: true,
  maxBatch: true,
  maxUrlBytes: true,
  maxBodyBytes: true,
  publicKey: true,
  publicKeyFile: true,
  logLevel: true,
  allowRoot: true,
  shutdownTimeoutMs: true,
  configFile: true,
});

/**
 * Starts the service described by `config`.
 *
 * @throws FlurryError registry errors (`FLURRY_E_REGISTRY_*`), `FLURRY_E_CLOCK_BEHIND_HIGH_WATER`,
 * `FLURRY_E_PUBLIC_KEY_INVALID`, listen errors (`EADDRINUSE`).
 * @example
 * ```ts
 * const svc = await startService(config, logger);
 * process.once('SIGTERM', () => svc.close().then(() => process.exit(0)));
 * ```
 */
export async function startService(config: ServeConfig, logger: ServiceLogger): Promise<RunningService> {
  assertKnownOptions(config, SERVE_CONFIG_KEYS, 'startService config');
  const layout: Layout = config.layout;
  let lg: LeasedGenerator | undefined;
  let registry: Registry | undefined;
  let thrift: ThriftServer | undefined;

  // Totals survive the generator being replaced after a lease is lost and re-acquired.
  let issuedBase = 0;
  let lastGen: LeasedGenerator['generator'] | undefined;
  const issued = (): number => {
    if (!lg) return issuedBase;
    const g = lg.generator;
    if (g !== lastGen) {
      if (lastGen) issuedBase += lastGen.stats.issued;
      lastGen = g;
    }
    return issuedBase + g.stats.issued;
  };

  // Refusals come per call (thousands a second under load): logged per episode, at most
  // one summary line per 10 s, and one line when issuing resumes (see log-throttle.ts).
  // (Events come only from the generator, made after `metrics` below.)
  const {
    onEvent,
    issuedOk,
    flush: flushEventLogs,
  } = generatorEventLogging(logger, (e) => metrics.onGeneratorEvent(e));

  const publicIds = makePublicIds(config, () => {
    if (!lg) throw notStarted(config);
    const id = lg.next();
    issuedOk();
    return id;
  });

  let shuttingDown = false;
  const notReady = (): FlurryError | null => {
    if (shuttingDown) return serverError('UNAVAILABLE', 'the service is shutting down; use another instance');
    if (!lg) return notStarted(config);
    if (!lg.ready()) {
      return new FlurryError(
        'FLURRY_E_LEASE_EXPIRED',
        `the node-ID lease is not valid (its fencing deadline has passed without a successful renewal); the service issues nothing until the registry (${registry?.url ?? redactUrl(config.registry)}) renews it or grants a new one`,
      );
    }
    const now = systemClock.now();
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
  };

  const batchWriter = new BatchBodyWriter(config.maxBatch, Math.min(config.maxBatch, layout.maxSequence + 1));
  const metrics = new ServiceMetrics({
    issued,
    lease: () => lg?.lease,
    ready: () => notReady() === null,
    node: () => lg?.generator.node,
  });

  const ctx: HttpContext = {
    layout,
    nextString: () => {
      if (lg === undefined) throw notStarted(config);
      const id = lg.nextString();
      issuedOk();
      return id;
    },
    batchBody: (count: number) => {
      if (lg === undefined) throw notStarted(config);
      const leased = lg;
      const body = batchWriter.write(count, (a, o, n) => leased.fill(a, o, n));
      issuedOk();
      return body;
    },
    recycleBody: (body: Buffer) => batchWriter.recycle(body),
    notReady,
    node: () => lg?.generator.node,
    metrics,
    publicIds,
    token: config.token,
    authHealth: config.authHealth,
    maxBatch: config.maxBatch,
    maxUrlBytes: config.maxUrlBytes,
    maxBodyBytes: config.maxBodyBytes,
    logger: logger.child({ component: 'http' }),
    openapi: openApiJson(),
    shuttingDown: false,
  };

  const server = createHttpServer(ctx);
  await listen(server, config.port, config.host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ host: config.host, port }, 'http listening; acquiring a node-ID lease');

  try {
    const regLog = logger.child({ component: 'registry' });
    registry = await openRegistry(config.registry, {
      cluster: config.cluster,
      ...(config.leaseTtlMs !== undefined ? { ttlMs: config.leaseTtlMs } : {}),
      ...(config.leaseRenewMs !== undefined ? { renewIntervalMs: config.leaseRenewMs } : {}),
      ...(config.leaseMarginMs !== undefined ? { marginMs: config.leaseMarginMs } : {}),
      ...(config.highWaterWaitMs !== undefined ? { highWaterWaitMs: config.highWaterWaitMs } : {}),
      ...(config.registryConnectTimeoutMs !== undefined ? { connectTimeoutMs: config.registryConnectTimeoutMs } : {}),
      holder: { address: `${config.host}:${port}` },
      logger: { warn: (o, m) => regLog.warn(o, m), info: (o, m) => regLog.info(o, m) },
    });
    lg = await leasedGenerator({
      registry,
      layout,
      pin: { ...config.node },
      generator: {
        onEvent,
        onExhausted: config.onExhausted ?? SERVICE_ON_EXHAUSTED,
        ...(config.onClockBackwards !== undefined ? { onClockBackwards: config.onClockBackwards } : {}),
        ...(config.sequenceStart !== undefined ? { sequenceStart: config.sequenceStart } : {}),
      },
    });
    watchLease(lg, logger);
    if (config.thriftPort !== undefined) {
      const leased = lg;
      // Loaded only when asked for: the thrift library costs start-up time and memory.
      const { startThriftServer } = await import('./thrift/index.js');
      const thriftPort = config.thriftPort;
      thrift = await startThriftServer({
        host: config.host,
        port: thriftPort,
        generator: {
          next: () => {
            const id = leased.next();
            issuedOk();
            return id;
          },
        },
        layout,
        node: () => leased.generator.node,
        logger: logger.child({ component: 'thrift' }),
      }).catch((err: NodeJS.ErrnoException) => {
        if (err instanceof FlurryError || err.code === undefined) throw err;
        throw serverError(
          'LISTEN',
          `cannot listen for Thrift on ${config.host}:${thriftPort} (${err.code}); choose another --thrift-port, or stop what holds it`,
          { host: config.host, port: thriftPort, cause: err.code },
        );
      });
    }
  } catch (err) {
    await new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    if (lg) await lg.close().catch(() => undefined);
    if (registry) await registry.close().catch(() => undefined);
    throw err;
  }

  logger.info(
    {
      port,
      thriftPort: thrift?.port,
      layout: layout.name,
      spec: layout.describe().spec,
      node: lg.generator.node,
      registry: registry.url,
      cluster: config.cluster,
      auth: config.token !== undefined,
      publicIds: publicIds !== undefined,
    },
    'ready',
  );

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      shuttingDown = true;
      ctx.shuttingDown = true;
      logger.info({}, 'shutting down: finishing in-flight requests');
      await closeHttp(server, config.shutdownTimeoutMs);
      if (thrift)
        await thrift
          .close()
          .catch((err: unknown) => logger.warn({ err: String(err) }, 'closing the thrift server failed'));
      flushEventLogs(); // no request issues any more: sum up the refusals not yet logged
      const last = lg.generator.lastIssuedUnixMs;
      try {
        await lg.close();
        logger.info({ highWaterMs: last }, 'lease released with the final high-water mark');
      } catch (err) {
        // Nothing unsafe follows: the lease is fenced by its deadline and frees itself after the TTL,
        // and the next holder's floor covers everything issued here.
        logger.error(
          { error: errInfo(err), highWaterMs: last },
          'releasing the lease failed; the node ID frees itself when its TTL runs out',
        );
      }
      await registry
        .close()
        .catch((err: unknown) => logger.warn({ error: errInfo(err) }, 'closing the registry failed'));
      logger.info({}, 'stopped');
    })();
    return closing;
  };

  return { port, thriftPort: thrift?.port, server, close };
}

/**
 * The service's handling of generator events: `count` sees every event (the metrics),
 * while the logs are rate-limited per episode ({@link EpisodeLog}): refusals while
 * fenced and under the `throw` clock policy are logged at their first occurrence, then at
 * most once per 10 s with the count, and end with one info line at the next issued ID
 * (call `issuedOk()` after each successful issue; it costs one boolean test). Other
 * clock-backwards events (a tolerated step, a wait) are throttled the same way without an
 * end line. An event more than 10 s after the previous one of its kind starts a new
 * episode (logged at warn again); summaries carry the largest `byMs` they cover (`byMsMin`
 * the smallest); a count still pending 10 s after the last line is written by an unref'd
 * timer, and `flush()` writes it at once (call it at shutdown). `now` is the monotonic
 * clock of the rate limit, `schedule` the timer (`null`: none; see log-throttle.ts).
 *
 * @example
 * ```ts
 * const { onEvent, issuedOk, flush } = generatorEventLogging(logger, (e) => metrics.onGeneratorEvent(e));
 * const gen = new Generator({ layout, node, onEvent });
 * const id = gen.next(); issuedOk();
 * // at shutdown
 * flush();
 * ```
 */
export function generatorEventLogging(
  logger: Pick<ServiceLogger, 'warn' | 'info'>,
  count: (e: GeneratorEvent) => void,
  now?: () => number,
  schedule?: Schedule | null,
): { onEvent: (e: GeneratorEvent) => void; issuedOk: () => void; flush: () => void } {
  const t = { ...(now === undefined ? {} : { now }), ...(schedule === undefined ? {} : { schedule }) };
  const fenced = new EpisodeLog({
    logger,
    message: 'refused to issue: lease deadline passed',
    noun: 'refusals',
    endMessage: 'issuing resumed: the lease is valid again',
    ...t,
  });
  const backwardsRefused = new EpisodeLog({
    logger,
    message: 'the wall clock stepped backwards',
    noun: 'refusals',
    endMessage: 'issuing resumed after the clock stepped backwards',
    maxOf: ['byMs'],
    ...t,
  });
  const backwards = new EpisodeLog({
    logger,
    message: 'the wall clock stepped backwards',
    noun: 'clock-backwards events',
    maxOf: ['byMs'],
    ...t,
  });
  return {
    onEvent: (e) => {
      count(e);
      if (e.type === 'clock-backwards')
        (e.action === 'threw' ? backwardsRefused : backwards).event({ byMs: e.byMs, action: e.action });
      else if (e.type === 'high-water-wait')
        logger.warn({ waitedMs: e.waitedMs }, "waited for the clock to pass the node's high-water mark");
      else if (e.type === 'fenced') fenced.event({ code: e.code });
    },
    issuedOk: () => {
      if (fenced.active || backwardsRefused.active) {
        fenced.end();
        backwardsRefused.end();
      }
    },
    flush: () => {
      fenced.flush();
      backwardsRefused.flush();
      backwards.flush();
    },
  };
}

function notStarted(config: ServeConfig): FlurryError {
  return serverError(
    'UNAVAILABLE',
    `the service is starting: it has no node-ID lease from ${redactUrl(config.registry)} yet; retry shortly`,
  );
}

function makePublicIds(config: ServeConfig, next: () => bigint): PublicIds | undefined {
  let keys;
  try {
    if (config.publicKey !== undefined) keys = parseKeys(config.publicKey);
    else if (config.publicKeyFile !== undefined) keys = loadKeysFromFile(config.publicKeyFile);
    else return undefined;
  } catch (err) {
    const setting = config.publicKey !== undefined ? 'publicKey' : 'publicKeyFile';
    throw serverError(
      'CONFIG',
      `invalid setting ${setting}: ${err instanceof FlurryError ? `${err.code}: ${err.message}` : String(err)}`,
      { setting },
    );
  }
  const codec = PublicIdCodec.create({ keys, bits: config.layout.totalBits });
  return {
    next: () => codec.encode(next()),
    decode: (s: string) => codec.decode(s),
  };
}

function watchLease(lg: LeasedGenerator, logger: ServiceLogger): void {
  const log = logger.child({ component: 'lease' });
  const attach = (lease: LeasedGenerator['lease']): void => {
    const em = lease as unknown as { on?(ev: string, fn: (x: unknown) => void): void };
    if (typeof em.on !== 'function') return;
    // Renewal failures and re-acquisitions are logged by the registry itself.
    em.on('lost', (err) =>
      log.error({ error: errInfo(err) }, 'lease lost: issuing is fenced until a new lease is acquired'),
    );
    em.on('node-changed', (node) => log.warn({ node }, 'node ID changed after re-acquiring'));
  };
  attach(lg.lease);
}

function errInfo(err: unknown): object {
  return err instanceof FlurryError ? { code: err.code, message: err.message } : { message: String(err) };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(
        serverError(
          'LISTEN',
          `cannot listen for HTTP on ${host}:${port} (${err.code ?? err.message}); choose another host or port (--host, --port), or stop what holds it`,
          { host, port, cause: err.code },
        ),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function closeHttp(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    };
    server.close(() => finish());
    server.closeIdleConnections();
    // Connections that finish their in-flight request become idle: close them too.
    const idle = setInterval(() => server.closeIdleConnections(), 25);
    const cut = setTimeout(() => {
      server.closeAllConnections();
      setTimeout(finish, 50).unref();
    }, timeoutMs);
  });
}
