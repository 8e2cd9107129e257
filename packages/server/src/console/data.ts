// The console's data, read-only: the `/v1/status` body from the service core and the `/v1/cluster` body through
// one shared cache (cluster.ts). Rates come from a timer's samples of the running totals, never from the hot path
// (docs/console.md#get-v1status-route-status-get-head).
import { hostname } from 'node:os';
import { systemClock, type Clock, type FlurryError, type Layout } from '@flurry/core';
import {
  FLURRY_VERSION,
  redactUrl,
  type LeasedGenerator,
  type ManagedLease,
  type Registry,
} from '@flurry/coordination';
import type { FeatureStates } from '../http/context.js';
import { SEQUENCES } from '../sequences/routes.js';
import type { ServeConfig } from '../config/index.js';
import { ROUTE_NAMES } from '../http/routes/index.js';
import type { LeasedIssuer } from '../issuing.js';
import type { ServiceMetrics } from '../metrics.js';
import { LATENCY_BUCKETS, p99Ms } from '../scrape-metric.js';
import type { ProtocolRow } from '../protocol-metrics.js';
import { END_OF_LIFE_WARNING_MS } from '../end-of-life.js';
import { ClusterCache } from './cluster.js';
import type { WorkerEntry } from '../workers/types.js';

/** What the console reads of the service core (`ServiceCore` is one). */
export interface ConsoleSource {
  readonly layout: Layout;
  readonly issuer: Pick<LeasedIssuer, 'issued' | 'leased'>;
  readonly metrics: ServiceMetrics;
  readonly registry: Registry | undefined; // once opened
  readonly features: FeatureStates;
  notReady(): FlurryError | null;
}

export interface ConsoleDataOptions {
  readonly core: ConsoleSource;
  readonly config: Pick<ServeConfig, 'registry' | 'cluster' | 'leaseTtlMs' | 'leaseRenewMs' | 'token'>;
  readonly publicIds: boolean; // a key is configured
  readonly clock?: Clock;
}

export class ConsoleData {
  readonly startedAt: number;
  /** With `--workers N`: the worker table the primary sends. */
  workers: (() => readonly WorkerEntry[]) | undefined = undefined;
  private readonly clock: Clock;
  private readonly rates: RateSampler;
  private readonly clusterCache: ClusterCache;
  private watched: ManagedLease | undefined;
  private lastRenewalAt: number | null = null;
  private lastRenewalLatencyMs: number | null = null;
  private readonly onRenewed = (e: { startedAt: number }): void => {
    const c = this.leaseClock();
    this.lastRenewalAt = c.now();
    this.lastRenewalLatencyMs = Math.max(0, Math.round((c.monotonic() - e.startedAt) * 10) / 10);
  };

  constructor(private readonly o: ConsoleDataOptions) {
    this.clock = o.clock ?? systemClock;
    this.startedAt = this.clock.now();
    this.rates = new RateSampler(o.core, this.clock);
    this.clusterCache = new ClusterCache({
      core: o.core,
      config: o.config,
      clock: this.clock,
      cacheMs: 1000, // one registry read serves every caller for this long
      self: () => this.ownLease(),
    });
  }

  private leaseClock(): Clock {
    return this.o.core.registry?.clock ?? this.clock;
  }

  private ownLease(): ManagedLease | undefined {
    return this.o.core.issuer.leased?.lease;
  }

  /** Starts watching the renewals of `lg`'s lease and sampling rates. */
  watch(lg: LeasedGenerator): void {
    const lease = lg.lease;
    if (this.watched !== lease) {
      this.watched?.off('renewed', this.onRenewed);
      this.watched = lease;
      if (typeof lease.on === 'function') lease.on('renewed', this.onRenewed);
      // Just claimed (and settled with one renewal): its last renewal so far.
      this.lastRenewalAt ??= this.leaseClock().now();
    }
    this.rates.start();
  }

  /** Stops the sampler and forgets the lease (idempotent). */
  close(): void {
    this.rates.stop();
    this.watched?.off('renewed', this.onRenewed);
    this.watched = undefined;
  }

  status() {
    const core = this.o.core;
    const now = this.clock.now();
    const layout = core.layout;
    const lg = core.issuer.leased;
    const ev = core.metrics.events;
    const sequences = SEQUENCES.get(core)?.sequences;
    const last = lg?.generator.lastIssuedUnixMs ?? 0;
    const notReady = core.notReady();
    return {
      now,
      version: FLURRY_VERSION,
      host: hostname(),
      pid: process.pid,
      startedAt: this.startedAt,
      uptimeMs: Math.max(0, now - this.startedAt),
      layout: {
        name: layout.name,
        totalBits: layout.totalBits,
        fields: layout.fields.map((f) => ({ name: f.name, bits: f.bits, shift: f.shift, kind: f.kind })),
        epochMs: layout.epochMs,
        unitMs: layout.unitMs,
        endOfLifeMs: layout.expiresAt.getTime(),
        endOfLifeWarning: layout.expiresAt.getTime() - now < END_OF_LIFE_WARNING_MS,
      },
      lease: this.leaseStatus(),
      generator: {
        issued: String(core.issuer.issued()),
        idsPerSecond: this.rates.idsPerSecond(),
        exhaustions: ev.exhausted,
        borrowMs: lg && last > 0 ? Math.max(0, Math.round(last - now)) : 0,
        clockBackwards: ev.clockBackwards,
        highWaterWaits: ev.highWaterWaits,
        fenced: ev.fenced,
      },
      refusals: { ...core.metrics.refusals },
      publicIds: {
        issue: this.o.publicIds,
        decode: this.o.publicIds && this.o.config.token !== undefined,
      },
      routes: ROUTE_NAMES.slice(0, -1).map((name, r) => ({ name, ...this.rates.route(r) })),
      protocols: this.rates.protocols(),
      sequences: sequences
        ? sequences.status().map((s) => ({
            key: s.key,
            step: s.step,
            position: s.current ? s.current.next : null,
            current: s.current ? { from: s.current.start, to: s.current.end } : null,
            next: s.next ? { from: s.next.start, to: s.next.end } : null,
            lastFetchAt: s.lastFetchAt,
            lastFetchMs: s.lastFetchLatencyMs,
          }))
        : null,
      notReady: notReady === null ? null : { code: notReady.code, message: notReady.message },
      ...(this.workers ? { workers: this.workers() } : {}),
    };
  }

  private leaseStatus() {
    const reg = this.o.core.registry;
    const lease = this.ownLease();
    if (!reg || !lease) return null;
    const opts = reg.options;
    return {
      registry: redactUrl(reg.url),
      kind: reg.kind,
      cluster: opts?.cluster ?? this.o.config.cluster,
      namespace: lease.namespace,
      slot: lease.slot,
      node: { ...lease.node },
      deadlineMs: Number.isFinite(lease.wallDeadline) ? lease.wallDeadline : null,
      ttlMs: opts?.ttlMs ?? 0,
      renewIntervalMs: opts?.renewIntervalMs ?? 0,
      renewals: lease.stats.renewals,
      renewFailures: lease.stats.renewFailures,
      lastRenewalAt: this.lastRenewalAt,
      lastRenewalLatencyMs: this.lastRenewalLatencyMs,
      fenced: !lease.valid(),
    };
  }

  /** Registry reads made for `/v1/cluster` and the event streams (tests). */
  get registryReads(): number {
    return this.clusterCache.reads;
  }

  cluster() {
    return this.clusterCache.body();
  }
}

const TICK_MS = 250;
const RING = 41; // 10 s of samples plus the newest
const SECOND = 4; // samples back for "the last second"

class RateSampler {
  private readonly nRoutes = ROUTE_NAMES.length;
  private readonly width = LATENCY_BUCKETS.length + 1;
  private readonly times = new Float64Array(RING);
  private readonly issuedAt = new Float64Array(RING);
  private readonly totals = new Float64Array(RING * this.nRoutes);
  private readonly hist = new Float64Array(RING * this.nRoutes * this.width);
  private readonly window = new Float64Array(this.width);
  /** Requests per `protocol command` (the non-HTTP front-ends) at each sample. */
  private readonly protocolAt: Array<Map<string, number>> = [];
  private n = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly core: ConsoleSource,
    private readonly clock: Clock,
  ) {}

  start(): void {
    if (this.timer) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  sample(): void {
    const [i, r, w] = [this.n % RING, this.nRoutes, this.width];
    this.times[i] = this.clock.monotonic();
    this.issuedAt[i] = this.core.issuer.issued();
    this.core.metrics.snapshot(
      this.totals.subarray(i * r, (i + 1) * r),
      this.hist.subarray(i * r * w, (i + 1) * r * w),
    );
    this.protocolAt[i] = new Map(
      this.core.metrics.protocols.rows().map((p) => [p.protocol + ' ' + p.command, p.requests]),
    );
    this.n++;
  }

  /** Ring index of the sample `back` before the newest (clamped to the oldest kept). */
  private idx(back: number): number {
    const b = Math.min(back, this.n - 1, RING - 1);
    return (this.n - 1 - b) % RING;
  }

  /** Per second over the last second, of a running total read at a ring index (0 before two samples). */
  private perSecond(at: (i: number) => number): number {
    const [now, then] = [this.idx(0), this.idx(SECOND)];
    const dt = this.times[now] - this.times[then];
    return dt > 0 ? Math.round(((at(now) - at(then)) * 1000) / dt) : 0;
  }

  idsPerSecond(): number {
    return this.perSecond((i) => this.issuedAt[i]);
  }

  /** One route's requests, requests per second over the last second and p99 over the last 10 s. */
  route(r: number): { requests: number; perSecond: number; p99Ms: number | null } {
    const [nr, w, now, oldest] = [this.nRoutes, this.width, this.idx(0), this.idx(RING - 1)];
    const [a, b] = [(now * nr + r) * w, (oldest * nr + r) * w];
    for (let i = 0; i < w; i++) this.window[i] = this.hist[a + i] - (oldest === now ? 0 : this.hist[b + i]);
    const perSecond = this.perSecond((i) => this.totals[i * nr + r]);
    return { requests: this.totals[now * nr + r], perSecond, p99Ms: p99Ms(this.window) };
  }

  protocols(): Array<ProtocolRow & { perSecond: number }> {
    return this.core.metrics.protocols.rows().map((r) => {
      const key = r.protocol + ' ' + r.command;
      return { ...r, perSecond: this.perSecond((i) => this.protocolAt[i]?.get(key) ?? 0) };
    });
  }
}
