/**
 * `flurry serve [settings]`: runs the ID service (../../service.ts) until SIGTERM/SIGINT, after the
 * start-up checks and warnings (run as root, misspelt `FLURRY_*` variables, `file:` in a container, a
 * layout near its end of life). Exit codes as in ../../errors.ts `failureKind`; a graceful stop exits 0.
 */
import cluster from 'node:cluster';
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
  // A misspelt FLURRY_* variable is ignored: say so first (even if a setting is then
  // rejected), on stderr, and again in the JSON log once it exists.
  const envWarnings = await warnUnknownEnv(io);
  if (hasFlag(parseCommandLine(io.argv, serveFlagSpecs()), 'help')) {
    await write(io.stdout, serveHelp());
    return 0;
  }
  const config = loadServeConfig(io.argv, io.env, io.now);
  // V8 lets the old generation grow to up to four times what its last full collection kept; under a burst of
  // calls that made peaks of 250 to 380 MB. 20% keeps the service near its live size (docs/grpc.md#memory);
  // `node --heap-growing-percent=N` (0: V8's own rule) wins.
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent')))
    v8.setFlagsFromString('--heap-growing-percent=20');
  if (typeof process.getuid === 'function' && process.getuid() === 0 && !config.allowRoot) {
    throw serverError(
      'RUN_AS_ROOT',
      'flurry serve refuses to run as root: an ID service needs no privileges. Run it as an unprivileged user, or pass --allow-root (FLURRY_ALLOW_ROOT=1) if you must.',
    );
  }
  const logger = await startLogger(io, config, envWarnings);
  // --workers N: the primary supervises N cluster workers (../../workers/); each worker runs the code below.
  const workers = resolveWorkers(config.workers);
  if (workers > 1 && cluster.isPrimary) return runPrimary({ config, logger, workers });
  const hooks = cluster.isWorker ? workerHooks() : undefined;

  // Signals are taken from the start: one that arrives while the lease is being acquired
  // stops the service as soon as it is up (its lease is then released, not left to expire).
  // A signal while the start waits out an outage of the store or registry stops the wait.
  let signalled: string | undefined;
  const starting = new AbortController();
  let onSignal: (signal: string) => void = (signal) => {
    signalled ??= signal;
    starting.abort();
  };
  // With TLS, SIGHUP re-reads the certificate and key (a bad pair is logged; the old one stays).
  let reloadTls: (() => void) | undefined;
  const onHup = () => {
    try {
      reloadTls?.();
    } catch (err) {
      logger.error(
        { code: (err as { code?: string }).code, error: String(err) },
        'TLS reload failed; the certificate in use stays',
      );
    }
  };
  const offSignals = onSignals((signal) => onSignal(signal), config.tlsCert !== undefined ? onHup : undefined);
  try {
    let service;
    try {
      service = await startService(config, logger, {
        signal: starting.signal,
        ...(hooks ? { adaptContext: hooks.adaptContext } : {}),
      });
      hooks?.started();
      const running = service;
      reloadTls = () => void running.reloadTls?.();
    } catch (err) {
      if (signalled === undefined) throw err;
      logger.info({ signal: signalled }, 'signal received while starting; stopped');
      return 0;
    }
    return await new Promise<number>((resolve) => {
      let stopping = false;
      onSignal = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'signal received');
        service.close().then(
          () => resolve(0),
          (err: unknown) => {
            logger.error({ error: String(err) }, 'shutdown failed');
            io.stderr.write(errorLine(err));
            resolve(1);
          },
        );
      };
      if (signalled !== undefined) onSignal(signalled);
    });
  } finally {
    hooks?.stop();
    // A worker keeps its handlers until it exits: a SIGTERM to the process group reaches it
    // before the primary's own, and that second one must not kill a worker that has drained.
    if (!cluster.isWorker) offSignals();
  }
}

/**
 * The service's JSON logger, with the start-up warnings logged: misspelt `FLURRY_*` variables, `file:` in a
 * container, and within a year of the layout's end of life (also on stderr; once, by the primary when there are
 * workers), long before it is refused (past its end of life loadServeConfig refuses it, exit 2).
 */
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
    const expiresAt = config.layout.expiresAt;
    logger.warn(
      {
        layout: config.layout.name,
        endOfLife: expiresAt.toISOString(),
        endOfLifeSeconds: Math.floor((expiresAt.getTime() - startedAt) / 1000),
      },
      eol,
    );
  }
  return logger;
}
