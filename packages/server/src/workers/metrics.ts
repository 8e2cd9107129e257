/**
 * `/metrics` for `flurry serve --workers N` (docs/operations.md#worker-processes): prom-client's
 * `AggregatorRegistry` sums counters and histograms; Flurry's gauges get a `worker` label instead.
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
