// The primary of `flurry serve --workers N` (docs/operations.md#worker-processes): forks N workers, each a service
// with its own lease, restarts the dead with backoff, drains them on SIGTERM/SIGINT and keeps their table.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { ServeConfig } from '../config/index.js';
import { onSignals } from '../cli/io.js';
import type { ServiceLogger } from '../service.js';
import { checkNodeIds } from './count.js';
import { isWorkerMessage, type WorkerEntry, type WorkerMessage, type WorkerReport } from './types.js';

/** A report older than this marks a worker `silent` (not ready). */
export const SILENT_AFTER_MS = 3_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const KILL_AFTER_MS = 5_000;
const METRICS_WAIT_MS = 2_000;

interface Slot {
  readonly slot: number;
  worker?: Worker;
  restarts: number;
  report?: WorkerReport;
  backoffMs: number;
  restartTimer?: NodeJS.Timeout;
}

/** Runs the primary until SIGTERM/SIGINT (or a failed start); resolves to the exit code. */
export async function runPrimary(o: {
  readonly config: ServeConfig;
  readonly logger: ServiceLogger;
  readonly workers: number;
  readonly now?: () => number;
}): Promise<number> {
  const { config, logger, workers: count, now = Date.now } = o;
  const log = logger.child({ component: 'primary' });
  await checkNodeIds(config, count, log);
  const slots = Array.from({ length: count }, (_, slot): Slot => ({ slot, restarts: 0, backoffMs: 0 }));
  let stopping = false;
  let everReady = false;
  let failedStart: number | undefined;

  const table = (): WorkerEntry[] => slots.map((s) => workerEntry(s, stopping, now()));
  const { own, restartsTotal } = primaryRegistry(table);
  const broadcast = (): void => {
    const t = table();
    for (const s of slots) send(s.worker, { flurry: 'table', workers: t });
  };
  const gathers = metricsGathers(own, (err) =>
    log.error({ error: String(err) }, 'aggregating the workers’ metrics failed'),
  );
  let resolveDone: (code: number) => void = () => undefined;
  const done = new Promise<number>((r) => (resolveDone = r));
  let unclean = false;
  const maybeDone = (): void => {
    if (stopping && workersOf(slots).length === 0) resolveDone(failedStart ?? (unclean ? 1 : 0));
  };

  const fork = (s: Slot): void => {
    s.restartTimer = undefined;
    s.report = undefined;
    const w = cluster.fork();
    s.worker = w;
    w.on('message', (m: unknown) => {
      if (!isWorkerMessage(m)) return;
      if (m.flurry === 'report') {
        everReady ||= m.report.ready;
        const readinessChanged = (s.report?.ready === true) !== m.report.ready;
        s.report = m.report;
        if (m.report.ready) s.backoffMs = 0;
        if (readinessChanged) broadcast();
      } else if (m.flurry === 'metrics-ask') gathers.ask(w, m.id, workersOf(slots));
      else if (m.flurry === 'metrics-json') gathers.answer(m.id, w, s.slot, m.metrics);
    });
    w.on('exit', (code, signal) => {
      if (s.worker === w) s.worker = undefined;
      const how = { slot: s.slot, pid: w.process.pid, code, signal };
      if (stopping) {
        unclean ||= code !== 0;
        if (code !== 0) log.warn(how, 'worker did not stop cleanly');
        maybeDone();
        return;
      }
      if (!everReady) {
        log.error(how, 'worker exited before the service was ready; stopping (see its error above)');
        failedStart = code !== null && code !== 0 ? code : 1;
        stop('failed start');
        return;
      }
      s.backoffMs = s.backoffMs === 0 ? BACKOFF_MIN_MS : Math.min(BACKOFF_MAX_MS, s.backoffMs * 2);
      log.error({ ...how, restartInMs: s.backoffMs }, 'worker died; restarting it');
      s.restartTimer = setTimeout(() => {
        s.restarts++;
        restartsTotal.inc();
        fork(s);
      }, s.backoffMs);
      broadcast();
    });
  };

  const tick = setInterval(broadcast, 500);
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ why, workers: workersOf(slots).length }, 'stopping every worker');
    stopWorkers(slots, log, config.shutdownTimeoutMs + KILL_AFTER_MS);
    maybeDone();
  };
  // With TLS, SIGHUP (re-read the certificate and key) goes on to every worker.
  const onHup =
    config.tlsCert === undefined ? undefined : () => workersOf(slots).forEach((w) => w.process.kill('SIGHUP'));
  const offSignals = onSignals(stop, onHup);

  log.info({ workers: count, pid: process.pid }, `starting ${count} workers`);
  for (const s of slots) fork(s);
  try {
    const code = await done;
    log.info({ code, workers: count }, 'every worker stopped');
    return code;
  } finally {
    clearInterval(tick);
    offSignals();
  }
}

/** A slot's row in the worker table, its state derived from its last report. */
function workerEntry(s: Slot, stopping: boolean, now: number): WorkerEntry {
  const r = s.report;
  const fresh = r !== undefined && now - r.reportedAt < SILENT_AFTER_MS;
  const state: WorkerEntry['state'] = stopping
    ? 'stopping'
    : !s.worker
      ? 'restarting'
      : !r
        ? 'starting'
        : !fresh
          ? 'silent'
          : r.ready
            ? 'ready'
            : 'not-ready';
  return {
    slot: s.slot,
    pid: r?.pid ?? s.worker?.process.pid ?? 0,
    restarts: s.restarts,
    ready: state === 'ready',
    state,
    node: r?.node ?? null,
    lease: r?.lease ?? null,
    issued: r?.issued ?? '0',
    idsPerSecond: fresh ? (r?.idsPerSecond ?? 0) : 0,
    notReady: r?.notReady ?? null,
    reportedAt: r?.reportedAt ?? 0,
  };
}

/** The primary's own metrics (workers by state, restarts), added to the aggregated `/metrics`. */
function primaryRegistry(table: () => WorkerEntry[]): { own: Registry; restartsTotal: Counter } {
  const own = new Registry();
  new Gauge({
    name: 'flurry_workers',
    help: 'Worker processes of flurry serve --workers, by state (ready, not-ready, starting, silent, restarting, stopping).',
    labelNames: ['state'],
    registers: [own],
    collect() {
      this.reset();
      for (const e of table()) this.inc({ state: e.state });
    },
  });
  const restartsTotal = new Counter({
    name: 'flurry_worker_restarts_total',
    help: 'Workers of flurry serve --workers restarted after they died.',
    registers: [own],
  });
  return { own, restartsTotal };
}

const workersOf = (slots: Slot[]): Worker[] => slots.flatMap((s) => (s.worker ? [s.worker] : []));

/** SIGTERM to every live worker (pending restarts cancelled); SIGKILL to those still alive after `killAfterMs` (unref'd: the workers keep the primary up). */
function stopWorkers(slots: Slot[], log: ServiceLogger, killAfterMs: number): void {
  for (const s of slots) clearTimeout(s.restartTimer);
  for (const w of workersOf(slots)) w.process.kill('SIGTERM');
  setTimeout(() => {
    for (const w of workersOf(slots)) {
      log.error({ pid: w.process.pid }, 'worker still running after the shutdown timeout; SIGKILL');
      w.process.kill('SIGKILL');
    }
  }, killAfterMs).unref();
}

function send(w: Worker | undefined, m: WorkerMessage): void {
  if (w && w.isConnected()) w.send(m, undefined, () => undefined);
}

/** A worker's `/metrics`: every live worker's metrics (what came within {@link METRICS_WAIT_MS}) and the primary's, aggregated. */
function metricsGathers(own: Registry, onError: (err: unknown) => void) {
  let gatherId = 0;
  const gathers = new Map<number, (from: Worker, slot: number, metrics: unknown[]) => void>();
  return {
    ask(from: Worker, askId: number, workers: Worker[]): void {
      const id = ++gatherId;
      const targets = workers.filter((x) => x.isConnected());
      const waiting = new Set(targets.map((x) => x.id));
      const results: { slot: number; metrics: unknown[] }[] = [];
      const finish = (): void => {
        gathers.delete(id);
        clearTimeout(timer);
        void aggregateMetrics(results, own).then(
          (text) => send(from, { flurry: 'metrics-text', id: askId, text }),
          onError,
        );
      };
      // Unref'd: a gather left when the primary stops only answers a worker that is gone (send skips it).
      const timer = setTimeout(finish, METRICS_WAIT_MS).unref();
      gathers.set(id, (w, slot, metrics) => {
        if (!waiting.delete(w.id)) return;
        results.push({ slot, metrics });
        if (waiting.size === 0) finish();
      });
      for (const x of targets) send(x, { flurry: 'metrics-ask', id });
    },
    answer: (id: number, from: Worker, slot: number, metrics: unknown[]): void =>
      gathers.get(id)?.(from, slot, metrics),
  };
}

interface JsonMetric {
  name: string;
  type: string;
  values?: { labels?: Record<string, string | number>; value: number }[];
  [k: string]: unknown;
}

/** The workers' metrics and the primary's in one text: counters and histograms summed, Flurry's gauges labelled by `worker`. */
export async function aggregateMetrics(
  perWorker: readonly { readonly slot: number; readonly metrics: readonly unknown[] }[],
  own: Registry,
): Promise<string> {
  const arrays: object[][] = perWorker.map(({ slot, metrics }) =>
    (metrics as JsonMetric[]).map((m) =>
      m.type === 'gauge' && m.name.startsWith('flurry_') && Array.isArray(m.values)
        ? { ...m, values: m.values.map((v) => ({ ...v, labels: { ...v.labels, worker: String(slot) } })) }
        : m,
    ),
  );
  arrays.push(await own.getMetricsAsJSON());
  return AggregatorRegistry.aggregate(arrays).metrics();
}
