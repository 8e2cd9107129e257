/**
 * The client's prefetch buffer: a FIFO of chunks, each the `BigUint64Array` of one
 * `GET /v1/ids?count=N` answer, stamped with the monotonic time its request was sent.
 *
 * - Each ID is handed out at most once: a chunk's read position only moves forward, and a
 *   chunk leaves the queue for good when it is used up or discarded (it is never re-queued).
 * - A chunk older than `maxAgeMs` (measured from when its request was *sent*, on the
 *   monotonic clock, so wall-clock steps do not matter) is discarded whole, never handed out.
 * - Within a chunk IDs come out strictly increasing (the parser checked that).
 */
import type { Clock } from '@flurry/core';

/** One answer of the batch route in the buffer. */
export interface Chunk {
  /** The IDs, strictly increasing. */
  readonly ids: BigUint64Array;
  /** Index of the next ID to hand out; only moves forward. */
  pos: number;
  /** Monotonic ms at which the request that fetched it was sent. */
  readonly fetchedAt: number;
  /** The server it came from (for diagnostics). */
  readonly server: string;
}

/** The prefetch buffer. */
export class IdBuffer {
  private readonly chunks: Chunk[] = [];
  private head: Chunk | undefined;
  private held = 0;
  /** IDs dropped because their chunk got older than `maxAgeMs`. */
  discarded = 0;
  /** IDs handed out. */
  taken = 0;

  /**
   * @param clock whose `monotonic()` ages chunks
   * @param maxAgeMs chunks older than this are discarded (`Infinity`: never)
   */
  constructor(
    private readonly clock: Clock,
    readonly maxAgeMs: number,
  ) {}

  /** IDs held, including those of stale chunks not yet noticed (see {@link discardStale}). */
  get size(): number {
    return this.held;
  }

  /** Number of chunks queued. */
  get chunkCount(): number {
    return this.chunks.length;
  }

  /** Appends a chunk (an empty one is ignored). The array is owned by the buffer from now on. */
  push(ids: BigUint64Array, fetchedAt: number, server: string): void {
    if (ids.length === 0) return;
    const chunk: Chunk = { ids, pos: 0, fetchedAt, server };
    this.chunks.push(chunk);
    this.held += ids.length;
    if (this.head === undefined) this.head = chunk;
  }

  /** The next fresh ID, or `undefined` when the buffer holds none. */
  take(): bigint | undefined {
    const c = this.head;
    if (c !== undefined && c.pos < c.ids.length && this.clock.monotonic() - c.fetchedAt <= this.maxAgeMs) {
      this.held--;
      this.taken++;
      return c.ids[c.pos++];
    }
    return this.takeSlow();
  }

  private takeSlow(): bigint | undefined {
    const now = this.clock.monotonic();
    for (;;) {
      const c = this.head;
      if (c === undefined) return undefined;
      if (c.pos >= c.ids.length) {
        this.dropHead(0);
      } else if (now - c.fetchedAt > this.maxAgeMs) {
        this.dropHead(c.ids.length - c.pos);
      } else {
        this.held--;
        this.taken++;
        return c.ids[c.pos++];
      }
    }
  }

  /**
   * Takes `n` fresh IDs at once, or nothing (returns `undefined`) when fewer are held.
   * The result is in hand-out order: increasing within each chunk.
   */
  takeMany(n: number): bigint[] | undefined {
    this.discardStale();
    if (this.held < n) return undefined;
    const out = new Array<bigint>(n);
    for (let k = 0; k < n; k++) out[k] = this.take()!;
    return out;
  }

  /** Discards every chunk (anywhere in the queue) older than `maxAgeMs`; returns how many IDs went. */
  discardStale(): number {
    const now = this.clock.monotonic();
    let dropped = 0;
    for (let k = this.chunks.length - 1; k >= 0; k--) {
      const c = this.chunks[k];
      if (now - c.fetchedAt > this.maxAgeMs || c.pos >= c.ids.length) {
        const left = c.ids.length - c.pos;
        dropped += left;
        c.pos = c.ids.length; // never handed out again, even if something still holds the chunk
        this.chunks.splice(k, 1);
      }
    }
    this.held -= dropped;
    this.discarded += dropped;
    this.head = this.chunks[0];
    return dropped;
  }

  /** Empties the buffer (on close); returns how many IDs were dropped. */
  clear(): number {
    const dropped = this.held;
    for (const c of this.chunks) c.pos = c.ids.length;
    this.chunks.length = 0;
    this.head = undefined;
    this.held = 0;
    return dropped;
  }

  private dropHead(left: number): void {
    const c = this.chunks.shift()!;
    c.pos = c.ids.length;
    this.held -= left;
    this.discarded += left;
    this.head = this.chunks[0];
  }
}

/**
 * The prefetch settings {@link PrefetchSizer} reads (a subset of the client's resolved
 * `prefetch` options).
 */
export interface SizerSettings {
  /** Most IDs to hold (the target's ceiling). */
  readonly size: number;
  /** The low-water mark at `size`; scaled with the target when adaptive. */
  readonly lowWater: number;
  /** Chunk age limit, ms: the target covers at most half of it. */
  readonly maxAgeMs: number;
  /** False: the target is always `size` and the low-water mark `lowWater`. */
  readonly adaptive: boolean;
}

/**
 * Sizes the prefetch buffer from the observed consumption rate: the refill target is about
 * one second of consumption (at most `maxAgeMs / 2`), clamped to `[min(size, 64), size]`;
 * the low-water mark scales with it and covers twice the refill time at the current rate,
 * below the target.
 *
 * The rate is a moving average of the rate over each window between two `update()` calls,
 * weighted by the window's length: a window at least as long as the horizon (the span the
 * target covers) replaces the estimate, so once the consumer slows down the target shrinks
 * at the first refill whose window is mostly slow, however high it was; a shorter window
 * counts for its share of the horizon but at least half, so the target also grows within a
 * few refills.
 */
export class PrefetchSizer {
  /** The smallest target (unless `size` is smaller). */
  static readonly MIN_TARGET = 64;
  /** IDs the refills aim to hold. */
  target: number;
  /** Refill when fewer than this many are held (plus requested). */
  lowWater: number;
  private rate = 0;
  private rateAt: number;
  private rateTaken = 0;

  constructor(
    private readonly clock: Clock,
    private readonly p: SizerSettings,
  ) {
    this.rateAt = clock.monotonic();
    if (p.adaptive) {
      this.target = Math.min(p.size, PrefetchSizer.MIN_TARGET);
      this.lowWater = Math.floor((this.target * p.lowWater) / p.size);
    } else {
      this.target = p.size;
      this.lowWater = p.lowWater;
    }
  }

  /** The consumption-rate estimate, IDs per ms. */
  get ratePerMs(): number {
    return this.rate;
  }

  /** The span of consumption the target covers, ms. */
  get horizonMs(): number {
    return Math.min(1_000, this.p.maxAgeMs / 2);
  }

  /**
   * Updates the rate estimate from `taken` (IDs handed out so far, a running total) and,
   * when adaptive, the target and low-water mark; `latencyMs` is the refill round-trip time.
   */
  update(taken: number, latencyMs: number): void {
    const now = this.clock.monotonic();
    const dt = now - this.rateAt;
    if (dt >= 5) {
      const inst = (taken - this.rateTaken) / dt;
      // A window as long as the horizon replaces the estimate; a shorter one counts for its share of it, at least ½.
      const w = this.rate === 0 ? 1 : Math.min(1, Math.max(0.5, dt / this.horizonMs));
      this.rate = this.rate * (1 - w) + inst * w;
      this.rateAt = now;
      this.rateTaken = taken;
    }
    const p = this.p;
    if (!p.adaptive) return;
    this.target = Math.max(
      Math.min(p.size, PrefetchSizer.MIN_TARGET),
      Math.min(p.size, Math.ceil(this.rate * this.horizonMs)),
    );
    const scaled = Math.floor((this.target * p.lowWater) / p.size);
    const cover = Math.ceil(this.rate * latencyMs * 2);
    this.lowWater = Math.max(0, Math.min(this.target - 1, Math.max(scaled, cover)));
  }
}
