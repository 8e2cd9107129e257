// The service's Prometheus metrics (docs/service-api.md#metrics). The request path only bumps typed
// arrays (prom-client's label hashing would cost more than a `/v1/ids/next`); series are built when scraped.
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { GeneratorEvent } from '@flurry/core';
import type { ManagedLease } from '@flurry/coordination';
import type { RouteMetrics } from './http/context.js';
import { ROUTE_NAMES } from './http/routes/index.js';
import { ProtocolMetrics } from './protocol-metrics.js';
import { registerScrapeMetric, RequestTable } from './scrape-metric.js';

/** Statuses the service answers with; anything else is counted under its own code too. */
const STATUSES = [200, 400, 401, 403, 404, 405, 413, 414, 431, 500, 503] as const;

/** Where scrape-time metrics are read from. */
export interface MetricSources {
  /** Total IDs issued by this process (every generator it has had). */
  issued(): number;
  lease(): Pick<ManagedLease, 'stats' | 'msUntilDeadline'> | undefined;
  /** Whether `/readyz` would answer 200. */
  ready(): boolean;
  node(): Readonly<Record<string, number>> | undefined;
  /** Seconds until the layout's end of life (negative once past); the gauge is left out without it. */
  endOfLifeSeconds?(): number;
}

/** The metrics of one service process. */
export class ServiceMetrics implements RouteMetrics {
  readonly registry: Registry;
  private readonly statusIndex = new Int16Array(600).fill(-1);
  private readonly extraStatuses: number[] = [];
  /** Requests by route × status (`STATUSES`, then `extraStatuses`). */
  private readonly table = new RequestTable(ROUTE_NAMES.length, STATUSES.length);
  private readonly regressions: Histogram;
  /** Generator events as plain integers, for the console's /v1/status (rare path only). */
  readonly events = { exhausted: 0, clockBackwards: 0, highWaterWaits: 0, fenced: 0 };
  /** Issuing refusals by code (fenced, clock backwards under the throw policy). */
  readonly refusals: Record<string, number> = Object.create(null) as Record<string, number>;
  /** Request metrics of the non-HTTP front-ends (`protocol="memcached"`, …; see protocol-metrics.ts). */
  readonly protocols: ProtocolMetrics;

  constructor(private readonly sources: MetricSources) {
    STATUSES.forEach((s, i) => (this.statusIndex[s] = i));
    const registry = (this.registry = new Registry());
    collectDefaultMetrics({ register: registry });

    const events = this.events;
    scrapeValue(registry, 'counter', 'flurry_ids_issued_total', 'IDs issued by this process.', () => sources.issued());
    registerScrapeMetric(
      registry,
      'flurry_http_requests_total',
      'HTTP requests by route and status.',
      'counter',
      () => {
        const statuses = [...STATUSES, ...this.extraStatuses];
        return this.table.pushCounts([], (r, s) => ({ route: ROUTE_NAMES[r], status: String(statuses[s]) }));
      },
    );
    const latency = 'flurry_http_request_duration_seconds';
    registerScrapeMetric(registry, latency, 'HTTP request latency in seconds, by route.', 'histogram', () =>
      this.table.pushHistograms([], latency, (r) => ({ route: ROUTE_NAMES[r] })),
    );
    const exhausted = 'Ticks whose sequence ran out, so the generator waited or borrowed.';
    scrapeValue(registry, 'counter', 'flurry_sequence_exhausted_waits_total', exhausted, () => events.exhausted);
    this.regressions = new Histogram({
      name: 'flurry_clock_regression_ms',
      help: 'Wall-clock steps backwards seen by the generator, by size in ms.',
      registers: [registry],
      buckets: [1, 10, 100, 1000, 10_000, 60_000],
    });
    const highWater = "Waits for the clock to pass a node's high-water mark.";
    scrapeValue(registry, 'counter', 'flurry_high_water_waits_total', highWater, () => events.highWaterWaits);
    const fenced = 'Refusals to issue because the lease deadline had passed.';
    scrapeValue(registry, 'counter', 'flurry_fenced_total', fenced, () => events.fenced);
    registerLeaseMetrics(registry, sources);
    this.protocols = new ProtocolMetrics(registry);
    const endOfLife = sources.endOfLifeSeconds?.bind(sources);
    if (endOfLife)
      scrapeValue(
        registry,
        'gauge',
        'flurry_layout_end_of_life_seconds',
        "Seconds until the layout's timestamp field runs out and no ID can be issued (negative once past). Alert under 31536000 (a year).",
        endOfLife,
      );
  }

  /** Records one finished request (the hot path); `route` is its index in `ROUTES`, or the unmatched ID. */
  request(route: number, status: number, seconds: number): void {
    let si = status >= 0 && status < 600 ? this.statusIndex[status] : -1;
    if (si < 0) si = this.addStatus(status);
    this.table.record(route, si, seconds);
  }

  /** Records a generator event (rare path). */
  onGeneratorEvent(e: GeneratorEvent): void {
    let refused: string | undefined;
    if (e.type === 'exhausted') this.events.exhausted++;
    else if (e.type === 'high-water-wait') this.events.highWaterWaits++;
    else if (e.type === 'fenced') {
      this.events.fenced++;
      refused = e.code;
    } else if (e.type === 'clock-backwards') {
      this.regressions.observe(e.byMs);
      this.events.clockBackwards++;
      if (e.action === 'threw') refused = 'FLURRY_E_CLOCK_BACKWARDS';
    }
    if (refused !== undefined) this.refusals[refused] = (this.refusals[refused] ?? 0) + 1;
  }

  /** Copies each route's request total and latency histogram counts (the console samples them, no allocation). */
  snapshot(into: Float64Array, buckets: Float64Array): void {
    for (let r = 0; r < this.table.rows; r++) into[r] = this.table.rowTotal(r);
    buckets.set(this.table.buckets);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private addStatus(status: number): number {
    const code = Math.trunc(status);
    const known = this.extraStatuses.indexOf(code);
    if (known >= 0) return STATUSES.length + known;
    this.extraStatuses.push(code);
    const column = this.table.addColumn();
    if (code >= 0 && code < 600) this.statusIndex[code] = column;
    return column;
  }
}

/** The lease's counters and deadline, readiness and the node fields, read from `sources` at scrape time. */
function registerLeaseMetrics(registry: Registry, sources: MetricSources): void {
  const leaseCounter = (name: string, help: string, pick: (s: ManagedLease['stats']) => number) =>
    scrapeValue(registry, 'counter', name, help, () => {
      const l = sources.lease();
      return l ? pick(l.stats) : 0;
    });
  leaseCounter('flurry_lease_renewals_total', 'Successful lease renewals.', (s) => s.renewals);
  leaseCounter('flurry_lease_renew_failures_total', 'Failed lease renewals.', (s) => s.renewFailures);
  leaseCounter('flurry_lease_lost_total', 'Leases lost (expired or taken over).', (s) => s.lost);
  leaseCounter('flurry_lease_reacquired_total', 'Leases acquired again after a loss.', (s) => s.reacquired);
  scrapeValue(
    registry,
    'gauge',
    'flurry_lease_deadline_seconds',
    'Seconds until the lease deadline (0 once passed, +Inf for a static node ID, -1 before the first lease).',
    () => {
      const l = sources.lease();
      return l ? l.msUntilDeadline() / 1000 : -1;
    },
  );
  scrapeValue(registry, 'gauge', 'flurry_ready', '1 when /readyz answers 200, else 0.', () =>
    sources.ready() ? 1 : 0,
  );
  registerScrapeMetric(registry, 'flurry_node_field', "This process's node field values.", 'gauge', () =>
    Object.entries(sources.node() ?? {}).map(([field, value]) => ({ value, labels: { field } })),
  );
}

/** A counter or gauge read at scrape time (the paths that count only bump plain numbers). */
function scrapeValue(registry: Registry, type: 'counter' | 'gauge', name: string, help: string, read: () => number) {
  registerScrapeMetric(registry, name, help, type, () => [{ value: read(), labels: {} }]);
}
