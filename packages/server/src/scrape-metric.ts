// Prometheus metrics whose values are computed at scrape time from typed arrays (the
// per-request paths only bump numbers), summed across `--workers` by the aggregator.
import type { Registry } from 'prom-client';

/** Latency buckets of the request histograms, seconds. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/** One scraped value as prom-client takes it. */
export type ScrapeValue = { value: number; labels: Record<string, string | number>; metricName?: string };

/** Registers `name` on `registry`; `values()` runs at each scrape. */
export function registerScrapeMetric(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'gauge' | 'histogram',
  values: () => unknown[],
): void {
  registry.registerMetric({
    name,
    help,
    type,
    get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: values() }),
  } as never);
}

/** The index in `bounds` of the bucket that counts `seconds` (`bounds.length`: the +Inf bucket). */
export function bucketOf(seconds: number, bounds: readonly number[] = LATENCY_BUCKETS): number {
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]) i++;
  return i;
}

/** Appends one histogram series (cumulative `buckets` over `bounds` then +Inf, sum, count) to `out`. */
export function pushHistogram(
  out: ScrapeValue[],
  name: string,
  labels: Record<string, string>,
  buckets: ArrayLike<number>,
  sum: number,
  bounds: readonly number[] = LATENCY_BUCKETS,
): void {
  let acc = 0;
  for (let i = 0; i < bounds.length; i++) {
    acc += buckets[i];
    out.push({ value: acc, labels: { le: bounds[i], ...labels }, metricName: name + '_bucket' });
  }
  acc += buckets[bounds.length];
  out.push({ value: acc, labels: { le: '+Inf', ...labels }, metricName: name + '_bucket' });
  out.push({ value: sum, labels, metricName: name + '_sum' });
  out.push({ value: acc, labels, metricName: name + '_count' });
}

/** The upper bound (ms) of the bucket holding the 99th percentile (the last finite bound for the +Inf bucket); null when empty. */
export function p99Ms(buckets: ArrayLike<number>, bounds: readonly number[] = LATENCY_BUCKETS): number | null {
  let total = 0;
  for (let i = 0; i <= bounds.length; i++) total += buckets[i];
  if (total === 0) return null;
  const target = Math.ceil(total * 0.99);
  let acc = 0;
  for (let i = 0; i < bounds.length; i++) {
    acc += buckets[i];
    if (acc >= target) return bounds[i] * 1000;
  }
  return bounds[bounds.length - 1] * 1000;
}
