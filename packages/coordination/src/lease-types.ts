/** The public types of node-ID leases: what {@link Registry.acquire} returns, its state and counters. */
import type { EventEmitter } from 'node:events';
import type { Clock, NodeLease } from '@flurry/core';
import type { ClusterHolder, HoldersQuery } from './holders.js';
import type { AcquireOptions, ResolvedRegistryOptions } from './options.js';
import type { LayoutLike } from './slot-map.js';

/** Counters of one lease (`renewFailures`: failed renewals and re-acquisition attempts). */
export interface LeaseStats {
  renewals: number;
  renewFailures: number;
  lost: number;
  reacquired: number;
}

/** Lease state: `held` (issuing allowed until the deadline), `lost` (re-acquiring), `released`. */
export type LeaseState = 'held' | 'lost' | 'released';

/**
 * A leased node ID: a core {@link NodeLease} that renews itself. Events: `'renewed'` ({ startedAt, deadline,
 * wallStartedAt, wallDeadline, highWaterMs }), `'renew-failed'` (err), `'lost'` (err), `'reacquired'` (lease),
 * `'node-changed'` (node).
 */
export interface ManagedLease extends NodeLease, EventEmitter {
  /** The slot currently held (changes when a lost lease is re-acquired elsewhere). */
  readonly slot: number;
  /** The namespace of the slot: `cluster` or `cluster/datacenter-N`. */
  readonly namespace: string;
  /** Increments at each re-acquisition (a new claim, maybe of another node). */
  readonly epoch: number;
  readonly state: LeaseState;
  /** Wall-clock deadline (last renewal's start + ttl − margin; `-Infinity` once lost, `Infinity` for static IDs). */
  readonly wallDeadline: number;
  /** Both fencing deadlines are ahead. */
  valid(): boolean;
  /** Milliseconds until the nearer of the two fencing deadlines (0 when passed; Infinity for static IDs). */
  msUntilDeadline(): number;
  readonly stats: LeaseStats;
  /** The current claim, its deadlines `-Infinity` for good once it ends; `floorMs` (deprecated) raises its floor. */
  forGenerator(floorMs?: number): NodeLease;
  /** Runs one renewal (or re-acquisition attempt) now; resolves true when the lease is held afterwards. */
  renewNow(): Promise<boolean>;
  /** Fences, reports the final high-water mark, frees the slot, stops renewing. */
  release(): Promise<void>;
}

/** A node-ID registry (see docs/architecture.md). */
export interface Registry {
  /** 'file', 'zookeeper', 'zookeeper+leaf', 'etcd', 'redis', 'static', 'k8s'. */
  readonly kind: string;
  /** The registry URL without a password. */
  readonly url: string;
  /** The clock deadlines are measured on (generators must use the same one). */
  readonly clock?: Clock;
  readonly options?: ResolvedRegistryOptions;
  acquire(layout: LayoutLike, opts?: AcquireOptions): Promise<ManagedLease>;
  /** Lists the live holders of node IDs in the cluster ({@link HoldersQuery}), on this registry's clock. */
  holders(query?: HoldersQuery): Promise<ClusterHolder[]>;
  /** Releases every lease still held and closes the engine connection. */
  close(): Promise<void>;
}

/** Set by drivers whose IDs never expire (static, k8s): infinite deadlines, renewals only persist the mark. */
export interface StaticAssignment {
  readonly staticAssignment?: boolean;
}
