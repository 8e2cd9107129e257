/**
 * One key's numbers from two segments (Leaf's double buffer): docs/segments.md ("Buffers, prefetch and the
 * adaptive step", "Guarantees").
 */
import { FlurryError, type Clock } from '@flurry/core';
import { sequenceError, SequenceErrorCode } from './errors.js';
import type { Allocation, SegmentStore } from './store.js';

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

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** What {@link adaptStep} decides from (`consumed` in `elapsedMs` since the last fetch; `demand`: waiting now). */
export type StepInput = Pick<SequenceTuning, 'maxStep' | 'targetSegmentMs'> &
  Record<'step' | 'minStep' | 'consumed' | 'elapsedMs' | 'demand', number>;

/** The step of the next fetch of a key (docs/segments.md, "Adaptive step"). */
export function adaptStep(i: StepInput): number {
  const desired = Math.ceil((i.consumed / Math.max(i.elapsedMs, 1)) * i.targetSegmentMs);
  let s = i.step;
  if (desired > s) s = Math.min(s * 16, desired);
  else if (desired < s / 2) s = Math.max(Math.ceil(s / 2), desired);
  s = Math.max(s, i.minStep, Math.min(i.demand, i.maxStep));
  return Math.max(Math.min(s, i.maxStep), i.minStep);
}

/** A segment `[start, end)` issued up to `pos` (as numbers while `safe`: below 2^53); `trigger` starts a prefetch. */
class Segment {
  readonly len: number;
  readonly startNum: number;
  readonly safe: boolean;
  readonly trigger: number;
  pos = 0;
  constructor(
    readonly start: bigint,
    readonly end: bigint,
    prefetchAt: number,
  ) {
    this.len = Number(end - start);
    this.safe = end <= MAX_SAFE + 1n;
    this.startNum = this.safe ? Number(start) : 0;
    this.trigger = Math.floor(this.len * prefetchAt);
  }
}

// Before the first fetch and after close.
const EMPTY = new Segment(0n, 0n, 0);

/** A sequence of numbers for one key (docs/segments.md). Created by `Sequences.get(key)`; never construct it directly. */
export class Sequence {
  private cur: Segment = EMPTY;
  private nxt: Segment | null = null;
  private fetching: Promise<void> | null = null;
  private step = 0;
  /** The stored step, 0 until the first fetch. */
  private minStep = 0;
  private retired = 0;
  private issuedAtFetch = 0;
  private fetchStartMono = 0;
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private demand = 0;
  private stats = {
    fetches: 0,
    lastFetchAt: null as number | null,
    lastFetchLatencyMs: null as number | null,
    wasted: 0n,
    handedBack: 0n,
    skipped: 0,
    failures: 0,
    lastError: null as FlurryError | null,
    waiting: 0,
    waits: 0,
  };

  /** @internal */
  constructor(
    readonly key: string,
    private readonly store: SegmentStore,
    private readonly clock: Clock,
    private readonly tuning: SequenceTuning,
    private readonly ensureKey?: (key: string) => Promise<void>,
    private readonly observe?: (e: SequenceEvent) => void,
  ) {}

  /**
   * The next number, synchronously, or undefined when both segments are empty (a fetch is then under way):
   * `seq.tryNext() ?? (await seq.next())`. `FLURRY_E_SEQUENCE_NUMBER_UNSAFE` past 2^53 - 1 (never rounds).
   */
  tryNext(): number | undefined {
    const s = this.cur;
    if (s.pos < s.len) {
      const n = s.pos++;
      if (n === s.trigger) this.prefetch();
      if (s.safe) return s.startNum + n;
      return this.toNumber(s.start + BigInt(n));
    }
    return this.advance() ? this.tryNext() : undefined;
  }

  /** The next number as a `bigint`, synchronously, or undefined when both segments are empty. */
  tryNextBigInt(): bigint | undefined {
    const s = this.cur;
    if (s.pos < s.len) {
      const n = s.pos++;
      if (n === s.trigger) this.prefetch();
      return s.safe ? BigInt(s.startNum + n) : s.start + BigInt(n);
    }
    return this.advance() ? this.tryNextBigInt() : undefined;
  }

  /** The next number as a decimal string, or undefined (no bigint is made while the segment is below 2^53). */
  tryNextString(): string | undefined {
    const s = this.cur;
    if (s.pos < s.len) {
      const n = s.pos++;
      if (n === s.trigger) this.prefetch();
      return s.safe ? String(s.startNum + n) : (s.start + BigInt(n)).toString();
    }
    return this.advance() ? this.tryNextString() : undefined;
  }

  /**
   * The next number: a plain value while buffered, a promise only when it must wait for the store. Rejects with
   * `FLURRY_E_SEQUENCE_STORE_UNAVAILABLE` (the store fails, nothing buffered), `…_KEY_UNKNOWN`, `…_CLOSED`.
   */
  nextBigInt(): bigint | Promise<bigint> {
    const v = this.tryNextBigInt();
    return v !== undefined ? v : this.waitFor(() => this.tryNextBigInt());
  }

  /** {@link Sequence.nextBigInt} as a `number`; `FLURRY_E_SEQUENCE_NUMBER_UNSAFE` past 2^53 - 1. */
  next(): number | Promise<number> {
    const v = this.tryNext();
    return v !== undefined ? v : this.waitFor(() => this.tryNext());
  }

  /** `count` increasing numbers (1 … `maxBatch`) as bigints, fetching as many segments as needed. */
  async batchBigInt(count: number): Promise<bigint[]> {
    const out: bigint[] = [];
    await this.fill(count, (s, from, to) => {
      for (let i = from; i < to; i++) out.push(s.safe ? BigInt(s.startNum + i) : s.start + BigInt(i));
    });
    return out;
  }

  /** `count` increasing numbers; `FLURRY_E_SEQUENCE_NUMBER_UNSAFE` past 2^53 - 1 (nothing is taken then). */
  async batch(count: number): Promise<number[]> {
    const out: number[] = [];
    await this.fill(count, (s, from, to) => {
      if (s.safe) for (let i = from; i < to; i++) out.push(s.startNum + i);
      else for (let i = from; i < to; i++) out.push(this.toNumber(s.start + BigInt(i)));
    });
    return out;
  }

  /** A snapshot of the buffers and counters. */
  status(): SequenceStatus {
    const { cur: c, stats: st } = this;
    return {
      key: this.key,
      current:
        c === EMPTY
          ? null
          : {
              start: c.start.toString(),
              end: c.end.toString(),
              next: (c.start + BigInt(c.pos)).toString(),
              remaining: c.len - Math.min(c.pos, c.len),
            },
      next: this.nxt ? { start: this.nxt.start.toString(), end: this.nxt.end.toString() } : null,
      step: this.step,
      minStep: this.minStep,
      fetching: this.fetching !== null,
      fetches: st.fetches,
      lastFetchAt: st.lastFetchAt,
      lastFetchLatencyMs: st.lastFetchLatencyMs,
      issued: this.issued(),
      wasted: st.wasted.toString(),
      handedBack: st.handedBack.toString(),
      skippedAllocations: st.skipped,
      failures: st.failures,
      lastError: st.lastError ? { code: st.lastError.code, message: st.lastError.message } : null,
      waiting: st.waiting,
      waits: st.waits,
    };
  }

  /** Stops issuing and hands the unused numbers back when nobody allocated since (else they are wasted); how many. */
  async close(): Promise<bigint> {
    if (this.closed) return 0n;
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.fetching) await this.fetching;
    const back = await this.release();
    this.observe?.({ type: 'closed', key: this.key, status: this.status() });
    return back;
  }

  // `[firstUnused, lastEnd)` is the tail of the last allocation (a remainder before a gap is wasted).
  private async release(): Promise<bigint> {
    const { cur, nxt } = this;
    this.cur = EMPTY;
    this.nxt = null;
    const curFree = cur.start + BigInt(Math.min(cur.pos, cur.len));
    this.retired += Math.min(cur.pos, cur.len);
    const unused = cur.end - curFree + (nxt ? nxt.end - nxt.start : 0n);
    const lastEnd = nxt ? nxt.end : cur.end;
    const firstUnused = nxt && nxt.start !== cur.end ? nxt.start : curFree;
    if (unused === 0n || cur === EMPTY) return 0n;
    let back = 0n;
    try {
      if (await this.store.handBack(this.key, lastEnd, firstUnused)) back = lastEnd - firstUnused;
    } catch {
      // not handed back: wasted
    }
    this.stats.handedBack += back;
    this.stats.wasted += unused - back;
    return back;
  }

  /** @internal After a key is created: the next call fetches at once instead of waiting out the failure delay. */
  resetBackoff(): void {
    this.retryAt = 0;
  }

  private issued(): number {
    return this.retired + Math.min(this.cur.pos, this.cur.len);
  }

  private toNumber(value: bigint): number {
    if (value <= MAX_SAFE) return Number(value);
    throw sequenceError(
      'NUMBER_UNSAFE',
      `the next number of "${this.key}" is ${value}, past Number.MAX_SAFE_INTEGER (2^53 - 1): a JS number would ` +
        `round it; use nextBigInt()/tryNextBigInt()/batchBigInt() for bigints`,
      { key: this.key, value: value.toString(), max: Number.MAX_SAFE_INTEGER },
    );
  }

  private advance(): boolean {
    if (this.closed) throw sequenceError('CLOSED', `the sequence "${this.key}" was closed`, { key: this.key });
    const c = this.cur;
    if (c.pos < c.len) return true;
    if (this.nxt) {
      this.retired += c.len;
      this.cur = this.nxt;
      this.nxt = null;
      if (this.cur.trigger === 0 && this.cur.len > 0) this.prefetch();
      return true;
    }
    this.prefetch();
    return false;
  }

  private prefetch(): void {
    if (this.nxt || this.fetching || this.closed || this.clock.monotonic() < this.retryAt) return;
    this.fetching = this.fetchOnce();
  }

  private async fetchOnce(): Promise<void> {
    const t0 = this.clock.monotonic();
    const { step, minStep, demand } = this;
    const consumed = this.issued() - this.issuedAtFetch;
    const elapsedMs = t0 - this.fetchStartMono;
    // The first fetch takes the stored step.
    const next = minStep === 0 ? undefined : adaptStep({ ...this.tuning, step, minStep, consumed, elapsedMs, demand });
    try {
      let a: Allocation;
      try {
        a = await this.store.allocate(this.key, next);
      } catch (err) {
        if (!(err instanceof FlurryError && err.code === SequenceErrorCode.KEY_UNKNOWN && this.ensureKey)) throw err;
        await this.ensureKey(this.key);
        a = await this.store.allocate(this.key, next);
      }
      const latencyMs = this.clock.monotonic() - t0;
      this.stats.fetches++;
      this.stats.lastFetchAt = this.clock.now();
      this.stats.lastFetchLatencyMs = latencyMs;
      this.stats.lastError = null;
      this.observe?.({ type: 'fetched', key: this.key, latencyMs, size: Number(a.end - a.start), step: a.step });
      this.issuedAtFetch = this.issued();
      this.fetchStartMono = t0;
      if (this.minStep === 0) this.minStep = a.step;
      this.step = a.step;
      const seg = new Segment(a.start, a.end, this.tuning.prefetchAt);
      if (this.closed)
        this.nxt ??= seg; // close() hands it back
      else if (this.cur.pos >= this.cur.len && !this.nxt) {
        this.retired += this.cur.len;
        this.cur = seg;
      } else this.nxt = seg;
    } catch (err) {
      const details = { key: this.key, retryAfterMs: this.tuning.retryMs };
      const why = `fetching a segment for "${this.key}" failed: ${String(err)}`;
      const e = err instanceof FlurryError ? err : sequenceError('STORE_UNAVAILABLE', why, details);
      this.stats.failures++;
      this.stats.lastError = e;
      this.observe?.({ type: 'fetch-failed', key: this.key, latencyMs: this.clock.monotonic() - t0, code: e.code });
      if (e.details.outcomeUnknown === true) {
        this.stats.skipped++;
        const sk = e.details.skipped as { start?: unknown; end?: unknown } | undefined;
        this.stats.wasted +=
          typeof sk?.start === 'string' && typeof sk.end === 'string'
            ? BigInt(sk.end) - BigInt(sk.start)
            : BigInt(next ?? this.minStep);
      }
      this.retryAt = this.clock.monotonic() + this.tuning.retryMs;
      if (e.code === SequenceErrorCode.STORE_UNAVAILABLE && !this.closed) {
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => {
          if (!this.closed && !this.nxt) this.prefetch();
        }, this.tuning.retryMs + 1);
        this.retryTimer.unref();
      }
    } finally {
      this.fetching = null;
    }
  }

  /** The store's own coded error unless a plain outage, else `STORE_UNAVAILABLE` with `details.retryAfterMs`. */
  private storeError(): FlurryError {
    const last = this.stats.lastError;
    if (last && last.code !== SequenceErrorCode.STORE_UNAVAILABLE) return last;
    const retryAfterMs = Math.max(Math.ceil(this.retryAt - this.clock.monotonic()), 1);
    const store = this.store.description;
    return sequenceError(
      'STORE_UNAVAILABLE',
      `no numbers are buffered for "${this.key}" and the store ${store} is not answering` +
        (last ? ` (${last.message})` : '') +
        `; retry in ${retryAfterMs} ms (recovery is automatic once the store answers)`,
      { key: this.key, retryAfterMs, store },
      last ?? undefined,
    );
  }

  private async waitFor<T>(take: () => T | undefined): Promise<T> {
    this.stats.waiting++;
    this.stats.waits++;
    this.demand++;
    try {
      return await this.wait(take, true, `numbers of "${this.key}" without getting any`);
    } finally {
      this.stats.waiting--;
      this.demand--;
    }
  }

  /** Waits for fetches until `take` gives a value; a failed fetch leaving both empty: the store's error. */
  private async wait<T>(take: () => T | undefined, takeAgain: boolean, what: string): Promise<T> {
    const until = this.clock.monotonic() + this.tuning.waitTimeoutMs;
    for (let round = 0; round < 100_000; round++) {
      const v = take();
      if (v !== undefined) return v;
      // advance() started no fetch: the last one failed and its retry delay has not passed.
      if (!this.fetching) throw this.storeError();
      const failuresBefore = this.stats.failures;
      await this.fetching;
      if (this.stats.failures !== failuresBefore && this.cur.pos >= this.cur.len && !this.nxt) {
        const v2 = takeAgain ? take() : undefined;
        if (v2 !== undefined) return v2;
        throw this.storeError();
      }
      if (this.clock.monotonic() > until) break;
    }
    throw sequenceError('STORE_UNAVAILABLE', `waited ${this.tuning.waitTimeoutMs} ms for ${what}; retry later`, {
      key: this.key,
      retryAfterMs: this.tuning.retryMs,
    });
  }

  private async fill(count: number, take: (s: Segment, from: number, to: number) => void): Promise<void> {
    const max = this.tuning.maxBatch;
    if (!Number.isInteger(count) || count < 1 || count > max) {
      throw sequenceError('COUNT', `count must be an integer from 1 to ${max} (maxBatch), got ${String(count)}`, {
        count: String(count),
        min: 1,
        max,
      });
    }
    let left = count;
    this.demand += count;
    try {
      await this.wait(
        () => {
          while (left > 0 && this.advance()) {
            const s = this.cur;
            const from = s.pos;
            const to = Math.min(s.len, from + left);
            take(s, from, to);
            s.pos = to;
            left -= to - from;
            this.demand -= to - from;
            if (from <= s.trigger && s.trigger < to) this.prefetch();
          }
          return left === 0 || undefined;
        },
        false,
        `${count} numbers of "${this.key}"`,
      );
    } finally {
      this.demand -= left;
    }
  }
}
