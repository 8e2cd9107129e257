/**
 * The shapes a {@link FlurryClient} hands back: a decoded ID and the client's counters.
 */
import type { ServerReport } from './server-pool.js';

/** An ID decoded by a server under its layout (`GET /v1/ids/{id}`). */
export interface DecodedRemoteId {
  id: bigint;
  unixMs: number;
  /** ISO 8601. */
  timestamp: string;
  /** Node fields, e.g. `{ datacenter: 1, worker: 7 }`. */
  fields: Record<string, number>;
  sequence: number;
}

/** Counters of a client. */
export interface ClientStats {
  /** IDs in the buffer now. */
  buffered: number;
  /** IDs handed out from the buffer. */
  taken: number;
  /** IDs dropped because they got older than `maxAgeMs`. */
  discarded: number;
  /** HTTP requests sent (refills, batches, decodes). */
  requests: number;
  /** Refill requests sent. */
  refills: number;
  /** The buffer size the client currently aims at (adapts to the consumption rate). */
  targetSize: number;
  /** The low-water mark in force now. */
  lowWater: number;
  /** Observed consumption, IDs per second. */
  ratePerSecond: number;
  servers: ServerReport[];
}
