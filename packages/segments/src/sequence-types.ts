/**
 * The shapes around a {@link Sequence}: the tuning every sequence of one `Sequences` shares, and the status a
 * sequence reports about itself.
 */
/** The tuning of every sequence of one `Sequences`. */
export interface SequenceTuning {
  prefetchAt: number;
  targetSegmentMs: number;
  maxStep: number;
  retryMs: number;
  waitTimeoutMs: number;
  maxBatch: number;
}

/**
 * What a sequence reports about itself (like Leaf's `/cache` page), JSON-safe once passed through
 * `JSON.stringify` with bigint as strings (`toJSON`-free: numbers are decimal strings already).
 */
export interface SequenceStatus {
  key: string;
  /** The segment issuing now: its range (`start` inclusive, `end` exclusive) and the next number. */
  current: { start: string; end: string; next: string; remaining: number } | null;
  /** The prefetched segment, or null. */
  next: { start: string; end: string } | null;
  /** The step the next fetch asks for (the adaptive step), and the stored (minimum) step. */
  step: number;
  minStep: number;
  fetching: boolean;
  fetches: number;
  /** Wall time (ms) of the last successful fetch, and how long it took. */
  lastFetchAt: number | null;
  lastFetchLatencyMs: number | null;
  /** Numbers issued by this instance. */
  issued: number;
  /** Numbers that will never be issued by anyone: skipped allocations with an unknown outcome (their size), remainders not handed back. */
  wasted: string;
  /** Numbers handed back to the store at close. */
  handedBack: string;
  /** Allocations whose commit outcome was unknown (skipped). */
  skippedAllocations: number;
  /** Fetches that failed, and the last failure's code and message (null after a success). */
  failures: number;
  lastError: { code: string; message: string } | null;
  /** Callers waiting on an empty buffer right now, and in all. */
  waiting: number;
  waits: number;
}

/**
 * What a sequence reports as it happens (`onEvent` of `openSequences`): each fetch from the store, each failed
 * fetch, and the close (with the final status: `wasted` and `handedBack` say what happened to the unused
 * numbers). The service turns them into its per-key metrics. A listener must not throw and should be cheap:
 * it runs on the fetch path (never on the per-number path).
 */
export type SequenceEvent =
  | { type: 'fetched'; key: string; latencyMs: number; size: number; step: number }
  | { type: 'fetch-failed'; key: string; latencyMs: number; code: string }
  | { type: 'closed'; key: string; status: SequenceStatus };
