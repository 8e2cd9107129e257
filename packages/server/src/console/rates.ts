/**
 * Rates for the console without touching the hot path: a timer samples the running totals
 * (IDs issued, requests per route, the latency histogram) into fixed rings four times a
 * second, and `/v1/status` reads differences: IDs per second over the last second, requests
 * per second per route over the last second, and each route's p99 over the last 10 s (the
 * upper bound of the histogram bucket holding it). Nothing is allocated per ID or per
 * request; one sample copies a few hundred numbers.
 */
import type { ServiceMetrics } from '../metrics.js';
import { LATENCY_BUCKETS, p99Ms } from '../scrape-metric.js';
import { ROUTE_NAMES } from '../http/routes/index.js';
import type { ProtocolRow } from '../protocol-metrics.js';

/** Sampling period (ms). */
const TICK_MS = 250;
/** Samples kept: 10 s of history plus the newest. */
const RING = 41;
/** Samples back for "the last second". */
const SECOND = 4;

/** Where {@link RateSampler} reads its totals. */
export interface RateSources {
  issued(): number;
  readonly metrics: ServiceMetrics;
  /** Monotonic ms (the service clock's). */
  monotonic(): number;
}

export class RateSampler {
  private readonly nRoutes = ROUTE_NAMES.length;
  private readonly width = LATENCY_BUCKETS.length + 1;
  private readonly times = new Float64Array(RING);
  private readonly issuedAt = new Float64Array(RING);
  private readonly totals: Float64Array;
  private readonly hist: Float64Array;
  /** One route's latency buckets over the last 10 s (scratch of {@link route}). */
  private readonly window = new Float64Array(this.width);
  /** Requests per `protocol command` at each sample (the non-HTTP front-ends; a handful of keys). */
  private readonly protocolAt: Array<Map<string, number>> = [];
  private n = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly src: RateSources) {
    this.totals = new Float64Array(RING * this.nRoutes);
    this.hist = new Float64Array(RING * this.nRoutes * this.width);
  }

  /** Starts sampling (idempotent); the timer is unref'd. */
  start(): void {
    if (this.timer) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), TICK_MS);
    this.timer.unref();
  }

  /** Stops sampling (idempotent). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes one sample now (the timer calls it; tests may too). */
  sample(): void {
    const i = this.n % RING;
    this.times[i] = this.src.monotonic();
    this.issuedAt[i] = this.src.issued();
    this.src.metrics.snapshot(
      this.totals.subarray(i * this.nRoutes, (i + 1) * this.nRoutes),
      this.hist.subarray(i * this.nRoutes * this.width, (i + 1) * this.nRoutes * this.width),
    );
    const m = new Map<string, number>();
    for (const r of this.src.metrics.protocols.rows()) m.set(r.protocol + ' ' + r.command, r.requests);
    this.protocolAt[i] = m;
    this.n++;
  }

  /** Ring index of the sample `back` samples before the newest (clamped to the oldest kept). */
  private idx(back: number): number {
    const b = Math.min(back, this.n - 1, RING - 1);
    return (this.n - 1 - b) % RING;
  }

  private perSecond(now: number, then: number, a: number, b: number): number {
    const dt = this.times[now] - this.times[then];
    return dt > 0 ? Math.round(((a - b) * 1000) / dt) : 0;
  }

  /** IDs issued per second over the last second (0 before two samples). */
  idsPerSecond(): number {
    if (this.n < 2) return 0;
    const now = this.idx(0);
    const then = this.idx(SECOND);
    return this.perSecond(now, then, this.issuedAt[now], this.issuedAt[then]);
  }

  /** One route's total requests, requests per second over the last second and p99 over the last 10 s. */
  route(r: number): { requests: number; perSecond: number; p99Ms: number | null } {
    if (this.n === 0) return { requests: 0, perSecond: 0, p99Ms: null };
    const nr = this.nRoutes;
    const now = this.idx(0);
    const then = this.idx(SECOND);
    const oldest = this.idx(RING - 1);
    const requests = this.totals[now * nr + r];
    const perSecond = this.n < 2 ? 0 : this.perSecond(now, then, requests, this.totals[then * nr + r]);
    const w = this.width;
    const a = (now * nr + r) * w;
    const b = (oldest * nr + r) * w;
    for (let i = 0; i < w; i++) this.window[i] = this.hist[a + i] - (oldest === now ? 0 : this.hist[b + i]);
    return { requests, perSecond, p99Ms: p99Ms(this.window) };
  }

  /**
   * The non-HTTP front-ends' rows (gRPC, gRPC-Web, Connect, memcached: see
   * ../protocol-metrics.ts), each with its requests per second over the last second.
   */
  protocols(): Array<ProtocolRow & { perSecond: number }> {
    const rows = this.src.metrics.protocols.rows();
    if (this.n < 2) return rows.map((r) => ({ ...r, perSecond: 0 }));
    const now = this.idx(0);
    const then = this.idx(SECOND);
    return rows.map((r) => {
      const key = r.protocol + ' ' + r.command;
      const a = this.protocolAt[now].get(key) ?? 0;
      const b = this.protocolAt[then].get(key) ?? 0;
      return { ...r, perSecond: this.perSecond(now, then, a, b) };
    });
  }
}
