// `flurry serve`: the start-up checks and warnings, then the ID service (../../service.ts) until SIGTERM/SIGINT.
import cluster from 'node:cluster';
import { once } from 'node:events';
import v8 from 'node:v8';
import { pino } from 'pino';
import { loadServeConfig, serveHelp, serveFlagSpecs, type EnvWarning, type ServeConfig } from '../../config/index.js';
import { defaultRegistryWarning, hostProbe } from '../../container.js';
import { endOfLifeWarning } from '../../end-of-life.js';
import { serverError } from '../../errors.js';
import { startService, type ServiceLogger } from '../../service.js';
import { resolveWorkers } from '../../workers/count.js';
import { runPrimary } from '../../workers/primary.js';
import { workerHooks } from '../../workers/worker.js';
import { hasFlag, parseCommandLine } from '../args.js';
import { errorLine, onSignals, warnUnknownEnv, write, type CliIo } from '../io.js';

/** Runs `flurry serve`; resolves to the exit code once the service has stopped. */
export async function serveCommand(io: CliIo): Promise<number> {
  // Warn about misspelt FLURRY_* variables first (even if a setting is then rejected), and again in the log.
  const envWarnings = await warnUnknownEnv(io);
  if (hasFlag(parseCommandLine(io.argv, serveFlagSpecs()), 'help')) {
    await write(io.stdout, serveHelp());
    return 0;
  }
  const config = loadServeConfig(io.argv, io.env, io.now);
  // 20% keeps the heap near its live size under bursts (docs/grpc.md#memory); `node --heap-growing-percent=N` wins.
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent')))
    v8.setFlagsFromString('--heap-growing-percent=20');
  if (typeof process.getuid === 'function' && process.getuid() === 0 && !config.allowRoot)
    throw serverError(
      'RUN_AS_ROOT',
      'flurry serve refuses to run as root: an ID service needs no privileges. Run it as an unprivileged user, or pass --allow-root (FLURRY_ALLOW_ROOT=1) if you must.',
    );
  const logger = await startLogger(io, config, envWarnings);
  const workers = resolveWorkers(config.workers);
  if (workers > 1 && cluster.isPrimary) return runPrimary({ config, logger, workers });
  const hooks = cluster.isWorker ? workerHooks() : undefined;

  // A signal while starting stops the service once it is up (its lease released, not left to expire),
  // or stops the wait for a store or registry that is down.
  let signalled: string | undefined;
  const stop = new AbortController();
  // With TLS, SIGHUP re-reads the certificate and key (a bad pair is logged; the old one stays).
  let reloadTls: (() => void) | undefined;
  const onHup = () => {
    try {
      reloadTls?.();
    } catch (err) {
      const code = (err as { code?: string }).code;
      logger.error({ code, error: String(err) }, 'TLS reload failed; the certificate in use stays');
    }
  };
  const offSignals = onSignals(
    (s) => {
      signalled ??= s;
      stop.abort();
    },
    config.tlsCert !== undefined ? onHup : undefined,
  );
  try {
    let service;
    try {
      service = await startService(config, logger, {
        signal: stop.signal,
        adaptContext: hooks?.adaptContext,
      });
      hooks?.started();
      const running = service;
      reloadTls = () => void running.reloadTls?.();
    } catch (err) {
      if (signalled === undefined) throw err;
      logger.info({ signal: signalled }, 'signal received while starting; stopped');
      return 0;
    }
    if (!stop.signal.aborted) await once(stop.signal, 'abort');
    logger.info({ signal: signalled }, 'signal received');
    try {
      await service.close();
      return 0;
    } catch (err) {
      logger.error({ error: String(err) }, 'shutdown failed');
      io.stderr.write(errorLine(err));
      return 1;
    }
  } finally {
    hooks?.stop();
    // A worker keeps its handlers: the primary's SIGTERM after the group's must not kill a drained worker.
    if (!cluster.isWorker) offSignals();
  }
}

/** The JSON logger, with the start-up warnings (misspelt variables, `file:` in a container, a layout within a year of its end of life). */
async function startLogger(io: CliIo, config: ServeConfig, envWarnings: readonly EnvWarning[]): Promise<ServiceLogger> {
  const logger = pino({
    level: config.logLevel,
    base: { pid: process.pid, service: 'flurry' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }) as unknown as ServiceLogger;
  for (const w of envWarnings) logger.warn({ variable: w.variable, suggestion: w.suggestion }, w.message);
  const containerWarning = defaultRegistryWarning(config.registrySource === 'default', hostProbe(io.env));
  if (containerWarning !== undefined) logger.warn({ registry: config.registry }, containerWarning);
  const startedAt = (io.now ?? Date.now)();
  const eol = endOfLifeWarning(config.layout, startedAt);
  if (eol !== undefined && !cluster.isWorker) {
    await write(io.stderr, `flurry: warning: ${eol}.\n`);
    const { name: layout, expiresAt } = config.layout;
    const endOfLifeSeconds = Math.floor((expiresAt.getTime() - startedAt) / 1000);
    logger.warn({ layout, endOfLife: expiresAt.toISOString(), endOfLifeSeconds }, eol);
  }
  return logger;
}
