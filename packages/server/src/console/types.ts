// The JSON bodies of the console's data routes and events; docs/console.md#data-routes describes every field.
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
    fields: Array<{ name: string; bits: number; shift: number; kind: 'timestamp' | 'sequence' | 'node' }>;
    epochMs: number;
    unitMs: number;
    endOfLifeMs: number;
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
  publicIds: { issue: boolean; decode: boolean };
  routes: Array<{ name: string; requests: number; perSecond: number; p99Ms: number | null }>;
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
  notReady?: { code: string; message: string } | null;
  workers?: readonly WorkerEntry[];
}

/** One holder in {@link ClusterBody}: the registry's holder as read, with its age, state and whether it is this service. */
export interface ClusterEntry extends Omit<ClusterHolder, 'renewalStamp' | 'ttlMs' | 'readAtMs'> {
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
  readAtMs: number;
  staleSlackMs: number;
  holders: ClusterEntry[];
}
