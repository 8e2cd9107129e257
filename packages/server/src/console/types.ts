/**
 * The JSON bodies of the console's data routes (`GET /v1/status`, `GET /v1/cluster`, and the
 * events of `GET /v1/events`), as fixed by the console contract shared with the page. All
 * times are Unix ms; IDs and other 64-bit numbers are decimal strings. docs/console.md
 * ("Data routes") describes every field.
 */
import type { ClusterHolder } from '@flurry/coordination';
import type { ProtocolRow } from '../protocol-metrics.js';
import type { WorkerEntry } from '../workers/types.js';

/** The lease part of {@link StatusBody} (null without a lease). */
export interface StatusLease {
  registry: string;
  kind: string;
  cluster: string;
  namespace: string;
  slot: number;
  node: Record<string, number>;
  /** Null for static node IDs (they never expire). */
  deadlineMs: number | null;
  ttlMs: number;
  renewIntervalMs: number;
  renewals: number;
  renewFailures: number;
  lastRenewalAt: number | null;
  lastRenewalLatencyMs: number | null;
  fenced: boolean;
}

/** The body of `GET /v1/status` (and of the `status` event). */
export interface StatusBody {
  now: number;
  version: string;
  host: string;
  pid: number;
  startedAt: number;
  uptimeMs: number;
  layout: {
    name: string;
    totalBits: number;
    /** Most significant first. */
    fields: Array<{ name: string; bits: number; shift: number; kind: 'timestamp' | 'sequence' | 'node' }>;
    epochMs: number;
    unitMs: number;
    endOfLifeMs: number;
    /** True within a year of the end of life (or past it): the console shows the time left in its warning colour. */
    endOfLifeWarning: boolean;
  };
  lease: StatusLease | null;
  generator: {
    issued: string;
    idsPerSecond: number;
    exhaustions: number;
    borrowMs: number;
    clockBackwards: number;
    highWaterWaits: number;
    fenced: number;
  };
  refusals: Record<string, number>;
  /** Public IDs: `issue` with a public-ID key, `decode` when the key and a token allow decoding. */
  publicIds: { issue: boolean; decode: boolean };
  routes: Array<{ name: string; requests: number; perSecond: number; p99Ms: number | null }>;
  /** The non-HTTP front-ends (protocol `grpc`, `grpc-web`, `connect`, `memcached`), one row per command with requests: totals, failed ones, requests per second over the last second, p99 since the start. */
  protocols: Array<ProtocolRow & { perSecond: number }>;
  sequences: Array<{
    key: string;
    step: number;
    position: string | null;
    current: { from: string; to: string } | null;
    next: { from: string; to: string } | null;
    lastFetchAt: number | null;
    lastFetchMs: number | null;
  }> | null;
  /** Why the service is not ready (`/readyz`'s code and message: starting, waiting for a store or registry that does not answer, fenced…), or null while ready. */
  notReady?: { code: string; message: string } | null;
  /** With `--workers N`: every worker process (slot, pid, node, lease, rate; see workers/types.ts). */
  workers?: readonly WorkerEntry[];
}

/** One holder in {@link ClusterBody}: the registry's holder as read, with its age, state and whether it is this service. */
export interface ClusterEntry extends Omit<ClusterHolder, 'renewalStamp' | 'ttlMs' | 'readAtMs'> {
  /**
   * `live`, `stale` (not renewed for longer than the renewal interval plus a slack), or
   * `reserved`: a node reserved for in-database generation (`flurry sql --generate`), held
   * until released and never renewed, so never stale.
   */
  readonly state: 'live' | 'stale' | 'reserved';
  readonly self: boolean;
}

/** The body of `GET /v1/cluster` (and of the `cluster` event). */
export interface ClusterBody {
  now: number;
  cluster: string;
  registry: string;
  kind: string;
  ttlMs: number;
  renewIntervalMs: number;
  /** When the registry was read (reads are shared and cached for about 1 s). */
  readAtMs: number;
  /** The staleness slack (ms): stale when not renewed for renewIntervalMs + the estimate's error + this. */
  staleSlackMs: number;
  holders: ClusterEntry[];
}
