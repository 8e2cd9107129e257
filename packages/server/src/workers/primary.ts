/**
 * The primary of `flurry serve --workers N`: it checks that N node IDs are free
 * (./count.ts), forks N `node:cluster` workers (each one a whole service with its own
 * lease, sharing the HTTP, Thrift and memcached ports through the cluster module; a port
 * any later protocol opens with `listen()` in the worker, gRPC's included, is shared the
 * same way), and supervises them:
 *
 * - a worker that dies after the service was ready is restarted in the same slot with
 *   backoff (0.5 s doubling to 30 s, back to 0.5 s once its successor is ready); the dead
 *   worker's lease is released (a graceful stop) or expires, and the successor leases a
 *   free node ID; a hung worker (SIGSTOP) is fenced by its lease's deadline like any service;
 * - a worker that dies before any worker was ever ready (a bad setting, a port taken,
 *   every node ID held) stops the start: the others are stopped and `flurry serve` exits
 *   with that worker's exit code (its error is on stderr);
 * - SIGTERM or SIGINT: every worker gets SIGTERM and drains (in-flight requests finish,
 *   cut after `shutdownTimeoutMs`, leases released); workers still alive 5 s after that are
 *   SIGKILLed. Exit 0 when every worker stopped cleanly, else 1; with TLS, SIGHUP is passed
 *   on to every worker (each re-reads the certificate and key);
 * - it keeps the worker table (every worker reports every 500 ms) and sends it to every
 *   worker, which answers `/readyz` and `/v1/status` with it, and it aggregates `/metrics`
 *   (./metrics.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import { Counter, Gauge, Registry } from 'prom-client';
import type { ServeConfig } from '../config/index.js';
import type { ServiceLogger } from '../service-steps.js';
import { checkNodeIds } from './count.js';
import { aggregateMetrics } from './metrics.js';
import { isWorkerMessage, type WorkerEntry, type WorkerMessage, type WorkerReport } from './types.js';

/** A report older than this marks a worker `silent` (not ready). */
export const SILENT_AFTER_MS = 3_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const KILL_AFTER_MS = 5_000;
const METRICS_WAIT_MS = 2_000;

/** What {@link runPrimary} needs. */
export interface PrimaryOptions {
  readonly config: ServeConfig;
  readonly logger: ServiceLogger;
  /** How many workers (from `resolveWorkers`). */
  readonly workers: number;
  /** Wall clock (tests). */
  readonly now?: () => number;
}

interface Slot {
  readonly slot: number;
  worker: Worker | undefined;
  restarts: number;
  report: WorkerReport | undefined;
  backoffMs: number;
  restartTimer: NodeJS.Timeout | undefined;
}

interface MetricsGather {
  readonly from: Worker;
  readonly askId: number;
  readonly waiting: Set<number>;
  readonly results: { slot: number; metrics: unknown[] }[];
  readonly timer: NodeJS.Timeout;
}

/**
 * Runs the primary until SIGTERM/SIGINT (or a failed start); resolves to the exit code.
 *
 * @throws FlurryError `FLURRY_E_WORKERS_NODE_IDS` when fewer node IDs are free than workers.
 */
export async function runPrimary(o: PrimaryOptions): Promise<number> {
  const { config, logger, workers: count } = o;
  const now = o.now ?? Date.now;
  const log = logger.child({ component: 'primary' });
  await checkNodeIds(config, count, (err) =>
    log.warn(
      { error: String(err) },
      'the registry does not answer; not checking free node IDs, the workers wait for it',
    ),
  );
  const slots: Slot[] = Array.from({ length: count }, (_, slot) => ({
    slot,
    worker: undefined,
    restarts: 0,
    report: undefined,
    backoffMs: 0,
    restartTimer: undefined,
  }));
  const bySlot = new Map<number, Slot>();
  let stopping = false;
  let everReady = false;
  let failedStart: number | undefined;
  let gatherId = 0;
  const gathers = new Map<number, MetricsGather>();

  const entry = (s: Slot): WorkerEntry => {
    const r = s.report;
    const fresh = r !== undefined && now() - r.reportedAt < SILENT_AFTER_MS;
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
  };
  const table = (): WorkerEntry[] => slots.map(entry);

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

  const send = (w: Worker | undefined, m: WorkerMessage): void => {
    if (w && w.isConnected()) w.send(m, undefined, () => undefined);
  };
  const broadcast = (): void => {
    const t = table();
    for (const s of slots) send(s.worker, { flurry: 'table', workers: t });
  };
  const finishGather = (id: number): void => {
    const g = gathers.get(id);
    if (!g) return;
    gathers.delete(id);
    clearTimeout(g.timer);
    void aggregateMetrics(g.results, own).then(
      (text) => send(g.from, { flurry: 'metrics-text', id: g.askId, text }),
      (err: unknown) => log.error({ error: String(err) }, 'aggregating the workers’ metrics failed'),
    );
  };

  let resolveDone: (code: number) => void = () => undefined;
  const done = new Promise<number>((r) => (resolveDone = r));
  const liveWorkers = (): Worker[] => slots.flatMap((s) => (s.worker ? [s.worker] : []));
  const maybeDone = (): void => {
    if (!stopping || liveWorkers().length > 0) return;
    resolveDone(failedStart ?? (cleanStops === stopped ? 0 : 1));
  };
  let cleanStops = 0;
  let stopped = 0;

  const fork = (s: Slot): void => {
    s.restartTimer = undefined;
    s.report = undefined;
    const w = cluster.fork();
    s.worker = w;
    bySlot.set(w.id, s);
    w.on('message', (m: unknown) => {
      if (!isWorkerMessage(m)) return;
      if (m.flurry === 'report') {
        const wasReady = s.report?.ready === true;
        s.report = m.report;
        if (m.report.ready) {
          s.backoffMs = 0;
          if (!everReady) {
            everReady = true;
          }
        }
        if (wasReady !== m.report.ready) broadcast();
      } else if (m.flurry === 'metrics-ask') {
        const id = ++gatherId;
        const targets = liveWorkers().filter((x) => x.isConnected());
        const g: MetricsGather = {
          from: w,
          askId: m.id,
          waiting: new Set(targets.map((x) => x.id)),
          results: [],
          timer: setTimeout(() => finishGather(id), METRICS_WAIT_MS),
        };
        gathers.set(id, g);
        for (const x of targets) send(x, { flurry: 'metrics-ask', id });
      } else if (m.flurry === 'metrics-json') {
        const g = gathers.get(m.id);
        if (!g || !g.waiting.delete(w.id)) return;
        g.results.push({ slot: s.slot, metrics: m.metrics });
        if (g.waiting.size === 0) finishGather(m.id);
      }
    });
    w.on('exit', (code, signal) => {
      bySlot.delete(w.id);
      if (s.worker === w) s.worker = undefined;
      const how = { slot: s.slot, pid: w.process.pid, code, signal };
      if (stopping) {
        stopped++;
        if (code === 0) cleanStops++;
        else log.warn(how, 'worker did not stop cleanly');
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
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ why, workers: liveWorkers().length }, 'stopping every worker');
    for (const s of slots) {
      if (s.restartTimer) clearTimeout(s.restartTimer);
      s.restartTimer = undefined;
    }
    for (const w of liveWorkers()) w.process.kill('SIGTERM');
    killTimer = setTimeout(() => {
      for (const w of liveWorkers()) {
        log.error({ pid: w.process.pid }, 'worker still running after the shutdown timeout; SIGKILL');
        w.process.kill('SIGKILL');
      }
    }, config.shutdownTimeoutMs + KILL_AFTER_MS);
    maybeDone();
  };
  const onTerm = (): void => stop('SIGTERM');
  const onInt = (): void => stop('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  // With TLS, SIGHUP (re-read the certificate and key) goes on to every worker.
  const onHup = (): void => {
    for (const w of liveWorkers()) w.process.kill('SIGHUP');
  };
  if (config.tlsCert !== undefined) process.on('SIGHUP', onHup);

  log.info({ workers: count, pid: process.pid }, `starting ${count} workers`);
  for (const s of slots) fork(s);
  try {
    const code = await done;
    log.info({ code, workers: count }, 'every worker stopped');
    return code;
  } finally {
    clearInterval(tick);
    if (killTimer) clearTimeout(killTimer);
    for (const g of gathers.values()) clearTimeout(g.timer);
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    process.off('SIGHUP', onHup);
  }
}
