// Metrics computed at scrape time from typed arrays, summed across `--workers` by the aggregator.
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

/** The upper bound (ms) of the bucket holding the 99th percentile (+Inf: the last finite bound); null when empty. */
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

const HISTOGRAM = LATENCY_BUCKETS.length + 1;

/** Requests by row (a route, a command) × column (a status, an outcome), and a latency histogram per row. */
export class RequestTable {
  /** `[row * width + column]` */
  private counts: Float64Array;
  /** `[row * (LATENCY_BUCKETS + 1) + bucket]` */
  readonly buckets: Float64Array;
  private readonly sums: Float64Array;

  constructor(
    readonly rows: number,
    private width: number,
  ) {
    this.counts = new Float64Array(rows * width);
    this.buckets = new Float64Array(rows * HISTOGRAM);
    this.sums = new Float64Array(rows);
  }

  record(row: number, column: number, seconds: number): void {
    this.counts[row * this.width + column]++;
    this.buckets[row * HISTOGRAM + bucketOf(seconds)]++;
    this.sums[row] += seconds;
  }

  /** Counts a request without a latency (the histogram holds the timed ones). */
  bump(row: number, column: number): void {
    this.counts[row * this.width + column]++;
  }

  count(row: number, column: number): number {
    return this.counts[row * this.width + column];
  }

  rowTotal(row: number): number {
    let t = 0;
    for (let c = 0; c < this.width; c++) t += this.counts[row * this.width + c];
    return t;
  }

  addColumn(): number {
    const [old, column] = [this.counts, this.width];
    this.width = column + 1;
    this.counts = new Float64Array(this.rows * this.width);
    for (let r = 0; r < this.rows; r++) this.counts.set(old.subarray(r * column, (r + 1) * column), r * this.width);
    return column;
  }

  histogram(row: number): Float64Array {
    return this.buckets.subarray(row * HISTOGRAM, (row + 1) * HISTOGRAM);
  }

  /** Appends every count above 0 to `out`, labelled by `labels(row, column)`; returns `out`. */
  pushCounts(out: ScrapeValue[], labels: (row: number, column: number) => Record<string, string>): ScrapeValue[] {
    for (let r = 0; r < this.rows; r++)
      for (let c = 0; c < this.width; c++) {
        const value = this.count(r, c);
        if (value > 0) out.push({ value, labels: labels(r, c) });
      }
    return out;
  }

  /** Appends the histogram series `name` of every row with a request to `out`; returns `out`. */
  pushHistograms(out: ScrapeValue[], name: string, labels: (row: number) => Record<string, string>): ScrapeValue[] {
    for (let r = 0; r < this.rows; r++) {
      const buckets = this.histogram(r);
      if (buckets.some((b) => b > 0)) pushHistogram(out, name, labels(r), buckets, this.sums[r]);
    }
    return out;
  }
}
