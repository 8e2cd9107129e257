/**
 * One key's numbers, served from memory out of two segments (Leaf's double buffer): a plain `number`
 * increment on the hot path, one store round trip per segment. Prefetch, waiting instead of "both segments
 * not ready", the adaptive step and unknown outcomes: docs/segments.md ("Buffers, prefetch and the adaptive
 * step", "Guarantees").
 */
import type { Clock } from '@flurry/core';
import { FlurryError } from '@flurry/core';
import { assertCount, emptyBufferError, sequenceError, SequenceErrorCode, unsafeNumberError } from './errors.js';
import { adaptStep } from './adaptive-step.js';
import { EMPTY, MAX_SAFE, Segment, unusedOf } from './segment.js';
import type { SequenceEvent, SequenceStatus, SequenceTuning } from './sequence-types.js';
import type { Allocation, SegmentStore } from './store.js';

export type { SequenceEvent, SequenceStatus, SequenceTuning } from './sequence-types.js';

/**
 * A sequence of numbers for one key. Created by `Sequences.get(key)`; never construct it directly.
 *
 * @example
 * ```ts
 * const seq = sequences.get('ticket');
 * seq.tryNext();            // 1, or undefined when the buffer is empty
 * await seq.next();         // 2 (a promise only when it must wait)
 * await seq.batch(3);       // [3, 4, 5]
 * await seq.nextBigInt();   // 6n: the bigint forms work past 2^53 too
 * ```
 */
export class Sequence {
  readonly key: string;
  private cur: Segment = EMPTY;
  private nxt: Segment | null = null;
  private fetching: Promise<void> | null = null;
  private initialised = false;
  private step = 0;
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
    key: string,
    private readonly store: SegmentStore,
    private readonly clock: Clock,
    private readonly tuning: SequenceTuning,
    private readonly ensureKey: ((key: string) => Promise<boolean>) | undefined,
    private readonly observe: ((e: SequenceEvent) => void) | undefined = undefined,
  ) {
    this.key = key;
  }

  /**
   * The next number as a `number`, synchronously, or undefined when both segments are empty (a fetch is then
   * under way). The hot path: a plain number increment. Throws `FLURRY_E_SEQUENCE_NUMBER_UNSAFE` past 2^53 - 1
   * (never rounds; use {@link Sequence.tryNextBigInt} there).
   *
   * @example
   * ```ts
   * const n = seq.tryNext() ?? (await seq.next());
   * ```
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

  /**
   * The next number as a decimal string, synchronously, or undefined when both segments are empty (what an
   * HTTP answer needs: no bigint is made while the segment is below 2^53).
   */
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
   * The next number as a `bigint`: a plain value while buffered, a promise only when it must wait for the
   * store. Rejects with `FLURRY_E_SEQUENCE_STORE_UNAVAILABLE` when the store fails and nothing is buffered,
   * `FLURRY_E_SEQUENCE_KEY_UNKNOWN`, `FLURRY_E_SEQUENCE_CLOSED`.
   */
  nextBigInt(): bigint | Promise<bigint> {
    const v = this.tryNextBigInt();
    return v !== undefined ? v : this.waitFor(() => this.tryNextBigInt());
  }

  /**
   * The next number as a `number`: a plain value while buffered, a promise only when it must wait (see
   * {@link Sequence.nextBigInt} for the errors); `FLURRY_E_SEQUENCE_NUMBER_UNSAFE` past 2^53 - 1.
   */
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

  /**
   * `count` increasing numbers as `number`s; `FLURRY_E_SEQUENCE_NUMBER_UNSAFE` past 2^53 - 1 (nothing is
   * taken then).
   */
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
    const c = this.cur;
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
      fetches: this.stats.fetches,
      lastFetchAt: this.stats.lastFetchAt,
      lastFetchLatencyMs: this.stats.lastFetchLatencyMs,
      issued: this.issued(),
      wasted: this.stats.wasted.toString(),
      handedBack: this.stats.handedBack.toString(),
      skippedAllocations: this.stats.skipped,
      failures: this.stats.failures,
      lastError: this.stats.lastError
        ? { code: this.stats.lastError.code, message: this.stats.lastError.message }
        : null,
      waiting: this.stats.waiting,
      waits: this.stats.waits,
    };
  }

  /**
   * Stops issuing, waits for a fetch in flight, and hands the unused numbers back to the store when that is
   * safe (nobody allocated after our last segment); otherwise counts them as wasted. Returns how many were
   * handed back.
   */
  async close(): Promise<bigint> {
    if (this.closed) return 0n;
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.fetching) await this.fetching;
    const back = await this.release();
    this.observe?.({ type: 'closed', key: this.key, status: this.status() });
    return back;
  }

  /** Hands the unused remainder back when safe, else counts it as wasted. */
  private async release(): Promise<bigint> {
    const cur = this.cur;
    const nxt = this.nxt;
    this.cur = EMPTY;
    this.nxt = null;
    this.retired += Math.min(cur.pos, cur.len);
    const { lastEnd, firstUnused } = unusedOf(cur, nxt);
    let { unused } = unusedOf(cur, nxt);
    if (unused === 0n || cur === EMPTY) return 0n;
    let back = 0n;
    try {
      if (await this.store.handBack(this.key, lastEnd, firstUnused)) back = lastEnd - firstUnused;
    } catch {
      back = 0n;
    }
    unused -= back;
    this.stats.handedBack += back;
    this.stats.wasted += unused;
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
    throw unsafeNumberError(this.key, value);
  }

  /** Switches to the next segment when the current is used up; else makes sure a fetch is under way. */
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

  /** The step of the next fetch (see the class comment); undefined for the first (the stored step). */
  private nextStep(): number | undefined {
    if (!this.initialised) return undefined;
    const now = this.clock.monotonic();
    return adaptStep({
      step: this.step,
      minStep: this.minStep,
      maxStep: this.tuning.maxStep,
      targetSegmentMs: this.tuning.targetSegmentMs,
      consumed: this.issued() - this.issuedAtFetch,
      elapsedMs: now - this.fetchStartMono,
      demand: this.demand,
    });
  }

  private async fetchOnce(): Promise<void> {
    const step = this.nextStep();
    const t0 = this.clock.monotonic();
    try {
      let a: Allocation;
      try {
        a = await this.store.allocate(this.key, step);
      } catch (err) {
        if (!(err instanceof FlurryError && err.code === SequenceErrorCode.KEY_UNKNOWN && this.ensureKey)) throw err;
        if (!(await this.ensureKey(this.key))) throw err;
        a = await this.store.allocate(this.key, step);
      }
      const t1 = this.clock.monotonic();
      this.stats.fetches++;
      this.stats.lastFetchAt = this.clock.now();
      this.stats.lastFetchLatencyMs = t1 - t0;
      this.stats.lastError = null;
      this.observe?.({
        type: 'fetched',
        key: this.key,
        latencyMs: t1 - t0,
        size: Number(a.end - a.start),
        step: a.step,
      });
      this.issuedAtFetch = this.issued();
      this.fetchStartMono = t0;
      if (!this.initialised) {
        this.initialised = true;
        this.minStep = a.step;
      }
      this.step = a.step;
      const seg = new Segment(a.start, a.end, this.tuning.prefetchAt);
      if (this.closed) {
        this.nxt = this.nxt ?? seg; // close() hands it back
        return;
      }
      if (this.cur.pos >= this.cur.len && !this.nxt) {
        this.retired += this.cur.len;
        this.cur = seg;
      } else {
        this.nxt = seg;
      }
    } catch (err) {
      const e =
        err instanceof FlurryError
          ? err
          : sequenceError('STORE_UNAVAILABLE', `fetching a segment for "${this.key}" failed: ${String(err)}`, {
              key: this.key,
              retryAfterMs: this.tuning.retryMs,
            });
      this.stats.failures++;
      this.stats.lastError = e;
      this.observe?.({ type: 'fetch-failed', key: this.key, latencyMs: this.clock.monotonic() - t0, code: e.code });
      if (e.details.outcomeUnknown === true) {
        this.stats.skipped++;
        const sk = e.details.skipped as { start?: unknown; end?: unknown } | undefined;
        this.stats.wasted +=
          typeof sk?.start === 'string' && typeof sk.end === 'string'
            ? BigInt(sk.end) - BigInt(sk.start)
            : BigInt(step ?? this.minStep);
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

  private storeError(): FlurryError {
    const retryAfterMs = Math.max(Math.ceil(this.retryAt - this.clock.monotonic()), 1);
    return emptyBufferError(this.key, this.store.description, this.stats.lastError, retryAfterMs);
  }

  /** Waits for the fetch in flight (starting one if none), then takes; bounded in rounds and time. */
  private async waitFor<T>(take: () => T | undefined): Promise<T> {
    this.stats.waiting++;
    this.stats.waits++;
    this.demand++;
    const until = this.clock.monotonic() + this.tuning.waitTimeoutMs;
    try {
      for (let round = 0; round < 100_000; round++) {
        const v = take();
        if (v !== undefined) return v;
        if (!this.fetching) {
          // advance() started no fetch: the last one failed and its retry delay has not passed.
          throw this.storeError();
        }
        const failuresBefore = this.stats.failures;
        await this.fetching;
        if (this.stats.failures !== failuresBefore && this.cur.pos >= this.cur.len && !this.nxt) {
          const v2 = take();
          if (v2 !== undefined) return v2;
          throw this.storeError();
        }
        if (this.clock.monotonic() > until) break;
      }
    } finally {
      this.stats.waiting--;
      this.demand--;
    }
    throw sequenceError(
      'STORE_UNAVAILABLE',
      `waited ${this.tuning.waitTimeoutMs} ms for numbers of "${this.key}" without getting any; retry later`,
      { key: this.key, retryAfterMs: this.tuning.retryMs },
    );
  }

  private async fill(count: number, take: (s: Segment, from: number, to: number) => void): Promise<void> {
    assertCount(count, this.tuning.maxBatch);
    let left = count;
    const until = this.clock.monotonic() + this.tuning.waitTimeoutMs;
    this.demand += count;
    try {
      for (let round = 0; left > 0 && round < 100_000; round++) {
        if (this.advance()) {
          const s = this.cur;
          const from = s.pos;
          const to = Math.min(s.len, from + left);
          take(s, from, to);
          s.pos = to;
          left -= to - from;
          this.demand -= to - from;
          if (from <= s.trigger && s.trigger < to) this.prefetch();
          continue;
        }
        if (!this.fetching) throw this.storeError();
        const failuresBefore = this.stats.failures;
        await this.fetching;
        if (this.stats.failures !== failuresBefore && this.cur.pos >= this.cur.len && !this.nxt)
          throw this.storeError();
        if (this.clock.monotonic() > until) break;
      }
    } finally {
      this.demand -= left;
    }
    if (left > 0) {
      throw sequenceError(
        'STORE_UNAVAILABLE',
        `waited ${this.tuning.waitTimeoutMs} ms for ${count} numbers of "${this.key}"; retry later`,
        {
          key: this.key,
          retryAfterMs: this.tuning.retryMs,
        },
      );
    }
  }
}
