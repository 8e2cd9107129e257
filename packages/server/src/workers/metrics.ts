/**
 * `/metrics` for `flurry serve --workers N`: the primary gathers every worker's prom-client
 * registry as JSON and merges them with prom-client's `AggregatorRegistry`. Counters and
 * histograms are summed over the workers (IDs issued, requests, refusals: the service's
 * totals); Flurry's gauges (`flurry_*`: the node, the lease deadline, readiness) are
 * per-worker figures and get a `worker` label (the worker's slot) instead of being summed;
 * Node's process gauges follow prom-client's own aggregation (sum, or the first value).
 * The primary adds `flurry_workers{state}` and `flurry_worker_restarts_total`.
 */
import { AggregatorRegistry, type Registry } from 'prom-client';

interface JsonMetric {
  name: string;
  type: string;
  values?: { labels?: Record<string, string | number>; value: number }[];
  [k: string]: unknown;
}

/** Merges the workers' metrics (and the primary's own registry) into one Prometheus text. */
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
