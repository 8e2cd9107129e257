// A worker of `flurry serve --workers N` (docs/operations.md#worker-processes): a whole service that reports to
// the primary, answers `/readyz` and `/v1/status` from the primary's table and serves its aggregated `/metrics`.
import type { FlurryError } from '@flurry/core';
import type { HttpContext } from '../http/context.js';
import type { ServiceCore } from '../service-core.js';
import { OPERATIONS } from '../ops/feature.js';
import { SILENT_AFTER_MS } from './primary.js';
import { isWorkerMessage, type WorkerEntry, type WorkerMessage, type WorkerReport } from './types.js';

const REPORT_EVERY_MS = 500;

/** The hooks `flurry serve` wires into a cluster worker's service (`started` once it is up, `stop` at the end), talking to the primary over `send`. */
export function workerHooks(
  send: (m: WorkerMessage) => void = (m) => void process.send?.(m),
  channel: NodeJS.EventEmitter = process,
  now: () => number = Date.now,
) {
  let core: ServiceCore | undefined;
  let table: readonly WorkerEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let askId = 0;
  const asks = new Map<number, (text: string) => void>();
  let lastReady: boolean | undefined;

  const report = (): void => {
    if (!core) return;
    const r = workerReport(core, now());
    lastReady = r.ready;
    try {
      send({ flurry: 'report', report: r });
    } catch {
      /* the channel is closing: nothing to report to */
    }
  };
  const onMessage = (m: unknown): void => {
    if (!isWorkerMessage(m)) return;
    if (m.flurry === 'table') table = m.workers;
    else if (m.flurry === 'metrics-ask' && core) {
      const id = m.id;
      void core.metrics.registry.getMetricsAsJSON().then(
        (metrics) => send({ flurry: 'metrics-json', id, metrics }),
        () => send({ flurry: 'metrics-json', id, metrics: [] }),
      );
    } else if (m.flurry === 'metrics-text') {
      asks.get(m.id)?.(m.text);
      asks.delete(m.id);
    }
  };
  channel.on('message', onMessage);

  const othersReady = (): boolean =>
    table.some((w) => w.ready && w.pid !== process.pid && now() - w.reportedAt < SILENT_AFTER_MS);
  /** The whole service's readiness: this worker's own, or else any other ready worker's. */
  const serviceNotReady = (own: FlurryError | null): FlurryError | null =>
    own !== null && !core?.shuttingDown && othersReady() ? null : own;

  return {
    adaptContext: (ctx: HttpContext, c: ServiceCore): HttpContext => {
      core = c;
      const metrics = ctx.metrics;
      c.console.data.workers = () => table;
      timer ??= setInterval(report, REPORT_EVERY_MS).unref();
      const ops = OPERATIONS.get(ctx);
      if (ops)
        OPERATIONS.set(ctx, {
          ...ops,
          readyBody: () => {
            const t = now();
            const fresh = table.filter((w) => t - w.reportedAt < SILENT_AFTER_MS);
            if (fresh.length === 0) return { workers: { ready: lastReady === true ? 1 : 0, total: 1 } };
            return { workers: { ready: fresh.filter((w) => w.ready).length, total: table.length } };
          },
        });
      return {
        ...ctx,
        notReady: () => serviceNotReady(ctx.notReady()),
        metrics: {
          request: (route, status, seconds) => metrics.request(route, status, seconds),
          contentType: metrics.contentType,
          text: () =>
            new Promise<string>((resolve) => {
              const id = ++askId;
              const fallback = setTimeout(() => {
                asks.delete(id);
                void metrics.text().then(resolve);
              }, 5_000);
              asks.set(id, (text) => {
                clearTimeout(fallback);
                resolve(text);
              });
              send({ flurry: 'metrics-ask', id });
            }),
        },
      };
    },
    started: report,
    stop: () => {
      if (timer) clearInterval(timer);
      timer = undefined;
      channel.off('message', onMessage);
    },
  };
}

function workerReport(c: ServiceCore, now: number): WorkerReport {
  const reason = c.notReady();
  const status = c.console.data.status();
  const lease = status.lease;
  return {
    pid: process.pid,
    ready: reason === null,
    node: c.issuer.leased?.generator.node ?? null,
    lease: lease
      ? { slot: lease.slot, deadlineMs: lease.deadlineMs, renewals: lease.renewals, fenced: lease.fenced }
      : null,
    issued: status.generator.issued,
    idsPerSecond: status.generator.idsPerSecond,
    notReady: reason === null ? null : { code: reason.code, message: reason.message },
    reportedAt: now,
  };
}
