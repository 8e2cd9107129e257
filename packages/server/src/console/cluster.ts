// The `/v1/cluster` body over the registry's `holders()`, behind one shared cache (a read, failed or not, serves
// every caller for `cacheMs`), and the two staleness measures: docs/console.md#get-v1cluster-route-cluster-get-head.
import type { Clock, FlurryError } from '@flurry/core';
import {
  redactUrl,
  type ClusterHolder,
  type HoldersQuery,
  type ManagedLease,
  type Registry,
} from '@flurry/coordination';
import type { ServeConfig } from '../config/index.js';

/** Slack (ms) added to the renewal interval before a holder is stale: a renewal's round trip and a busy loop fit. */
export const STALE_SLACK_MS = 500;

/** The `role` of a node reserved by `flurry sql --generate` (held until released, never renewed): never stale. */
export const SQL_GENERATOR_ROLE = 'sql generator';

/** The lease defaults of @flurry/coordination, for a service that has no registry open yet. */
const DEFAULT_TTL_MS = 10_000;

export interface ClusterCacheOptions {
  readonly core: { readonly registry: Registry | undefined };
  readonly config: Pick<ServeConfig, 'registry' | 'cluster' | 'leaseTtlMs' | 'leaseRenewMs'>;
  readonly clock: Clock;
  readonly cacheMs: number;
  /** Which namespace to list (default: the service's own lease's, or the cluster). */
  readonly query?: HoldersQuery;
  self(): ManagedLease | undefined;
}

const holderKey = (h: ClusterHolder): string => `${h.namespace}/${h.slot}/${h.id ?? ''}`;

interface Read {
  /** Per holder: when this reader first saw its current renewal stamp (its wall clock). */
  readonly seenSince?: ReadonlyMap<string, number>;
  readonly atMono: number;
  readonly readAtMs: number;
  readonly holders?: readonly ClusterHolder[];
  readonly error?: FlurryError | Error;
}

export class ClusterCache {
  private last: Read | undefined;
  /** Holder key → [renewal stamp, first seen at]: the reader's own measure of "not renewed". */
  private stamps = new Map<string, [number | null, number]>();
  private inFlight: Promise<Read> | undefined;
  reads = 0;

  constructor(private readonly o: ClusterCacheOptions) {}

  private async read(): Promise<Read> {
    const reg = this.o.core.registry;
    const atMono = this.o.clock.monotonic();
    const clock = reg?.clock ?? this.o.clock;
    if (!reg) return { atMono, readAtMs: clock.now(), holders: [] };
    this.reads++;
    try {
      const holders = await reg.holders(this.o.query);
      const readAtMs = holders[0]?.readAtMs ?? clock.now();
      const next = new Map<string, [number | null, number]>();
      const seenSince = new Map<string, number>();
      for (const h of holders) {
        const key = holderKey(h);
        const prev = this.stamps.get(key);
        const since = prev && prev[0] === h.renewalStamp ? prev[1] : readAtMs;
        next.set(key, [h.renewalStamp, since]);
        seenSince.set(key, since);
      }
      this.stamps = next;
      return { atMono, readAtMs, holders, seenSince };
    } catch (e) {
      return { atMono, readAtMs: clock.now(), error: e instanceof Error ? e : new Error(String(e)) };
    }
  }

  private fresh(): Promise<Read> {
    const last = this.last;
    if (last && this.o.clock.monotonic() - last.atMono < this.o.cacheMs) return Promise.resolve(last);
    this.inFlight ??= this.read().then((r) => {
      this.last = r;
      this.inFlight = undefined;
      return r;
    });
    return this.inFlight;
  }

  async body() {
    const r = await this.fresh();
    if (r.error) throw r.error;
    const reg = this.o.core.registry;
    const opts = reg?.options;
    const renewIntervalMs = opts?.renewIntervalMs ?? this.o.config.leaseRenewMs ?? 0;
    const now = (reg?.clock ?? this.o.clock).now();
    const own = this.o.self();
    const holders = (r.holders ?? []).map((h) => {
      const ageAtRead = h.renewedAtMs === null ? null : r.readAtMs - h.renewedAtMs;
      const unchangedFor = r.readAtMs - (r.seenSince?.get(holderKey(h)) ?? r.readAtMs);
      const reserved = h.role === SQL_GENERATOR_ROLE;
      const stale =
        (!reserved &&
          ageAtRead !== null &&
          ageAtRead > renewIntervalMs + (h.clockOffsetErrorMs ?? 0) + STALE_SLACK_MS) ||
        (h.renewalStamp !== null && unchangedFor > renewIntervalMs + STALE_SLACK_MS);
      const state: 'live' | 'stale' | 'reserved' = reserved ? 'reserved' : stale ? 'stale' : 'live';
      return {
        slot: h.slot,
        namespace: h.namespace,
        node: h.node,
        id: h.id,
        hostname: h.hostname,
        pid: h.pid,
        version: h.version,
        address: h.address,
        heldSinceMs: h.heldSinceMs,
        renewedAtMs: h.renewedAtMs,
        expiresAtMs: h.expiresAtMs,
        highWaterMs: h.highWaterMs,
        clockOffsetMs: h.clockOffsetMs,
        clockOffsetErrorMs: h.clockOffsetErrorMs,
        ageMs: h.renewedAtMs === null ? null : Math.max(0, now - h.renewedAtMs),
        state,
        role: h.role,
        self: own !== undefined && own.state === 'held' && own.namespace === h.namespace && own.slot === h.slot,
      };
    });
    return {
      now,
      cluster: opts?.cluster ?? this.o.config.cluster,
      registry: reg ? redactUrl(reg.url) : redactUrl(this.o.config.registry),
      kind: reg?.kind ?? this.o.config.registry.split(':')[0],
      ttlMs: opts?.ttlMs ?? this.o.config.leaseTtlMs ?? DEFAULT_TTL_MS,
      renewIntervalMs,
      readAtMs: r.readAtMs,
      staleSlackMs: STALE_SLACK_MS,
      holders,
    };
  }
}
