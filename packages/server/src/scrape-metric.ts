// One prom-client metric whose values are computed at scrape time (from typed arrays or
// a feature's counters), summed across `--workers` by the aggregator.
import type { Registry } from 'prom-client';

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
