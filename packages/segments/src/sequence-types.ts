/** The options of `openSequences`, the tuning its sequences share, and what a sequence reports. */
import type { Clock } from '@flurry/core';

/** The options of `openSequences`. Unknown keys are refused (`FLURRY_E_UNKNOWN_OPTION`). */
export interface SequencesOptions {
  /** Wall and monotonic time (default the system clock). */
  clock?: Clock;
  /** Create a key with `defaultStep` on first use (default false: an unknown key is `FLURRY_E_SEQUENCE_KEY_UNKNOWN`). */
  autoCreate?: boolean;
  /** The step of auto-created keys and serial periods (default 1000). */
  defaultStep?: number;
  /** Fraction of a segment issued before the next is fetched (default 0.1; 0 … 0.9). */
  prefetchAt?: number;
  /** How long a segment should last at the observed rate (default 900,000 ms = 15 min, Leaf's SEGMENT_DURATION; 1 s … 1 day). */
  targetSegmentMs?: number;
  /** The largest step the adaptation asks for (default 1,000,000 like Leaf; 1 … 2^31 - 1). */
  maxStep?: number;
  /** Deadline of each store operation (default 5000 ms; 100 … 120,000). */
  timeoutMs?: number;
  /** Delay before a failed fetch is retried (default 500 ms; 10 … 60,000): the Retry-After of an empty buffer. */
  retryMs?: number;
  /** Longest a `next()` waits in all (default 30,000 ms). */
  waitTimeoutMs?: number;
  /** Largest `batch(n)` (default 100,000). */
  maxBatch?: number;
  /** Accept a Redis without appendonly yes + appendfsync always (default false). */
  allowVolatileStore?: boolean;
  /** Create Leaf's table when it is missing (SQL stores; default true). */
  createTable?: boolean;
  /** Called on each fetch, failed fetch and close of a key (the service's metrics); must not throw. */
  onEvent?: (e: SequenceEvent) => void;
}

/** The tuning of every sequence of one `Sequences`. */
export type SequenceTuning = Required<
  Pick<SequencesOptions, 'prefetchAt' | 'targetSegmentMs' | 'maxStep' | 'retryMs' | 'waitTimeoutMs' | 'maxBatch'>
>;

/** What a sequence reports about itself (like Leaf's `/cache` page); big numbers are decimal strings. */
export interface SequenceStatus {
  key: string;
  /** The segment issuing now: `start` inclusive, `end` exclusive, and the next number. */
  current: { start: string; end: string; next: string; remaining: number } | null;
  /** The prefetched segment. */
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
  /** Numbers nobody will issue: skipped allocations with an unknown outcome, remainders not handed back. */
  wasted: string;
  /** Numbers handed back to the store at close. */
  handedBack: string;
  /** Allocations whose commit outcome was unknown (skipped). */
  skippedAllocations: number;
  /** Fetches that failed, and the last failure (null after a success). */
  failures: number;
  lastError: { code: string; message: string } | null;
  /** Callers waiting on an empty buffer right now, and in all. */
  waiting: number;
  waits: number;
}

/** What a sequence reports as it happens (`onEvent`): fetches, failed fetches, the close. Runs on the fetch path. */
export type SequenceEvent =
  | { type: 'fetched'; key: string; latencyMs: number; size: number; step: number }
  | { type: 'fetch-failed'; key: string; latencyMs: number; code: string }
  | { type: 'closed'; key: string; status: SequenceStatus };
