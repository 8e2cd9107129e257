/**
 * The client's prefetch buffer: a FIFO of chunks, each the `BigUint64Array` of one
 * `GET /v1/ids?count=N` answer, stamped with the monotonic time its request was sent.
 *
 * - Each ID is handed out at most once: a chunk's read position only moves forward, and a
 *   chunk leaves the queue for good when it is used up or discarded (it is never re-queued).
 * - A chunk older than `maxAgeMs` (measured from when its request was *sent*, on the
 *   monotonic clock, so wall-clock steps do not matter) is discarded whole, never handed out.
 * - Within a chunk IDs come out strictly increasing (the parser checked that).
 *
 * @example
 * ```ts
 * const buf = new IdBuffer(systemClock, 5_000);
 * buf.push(new BigUint64Array([1n, 2n]), systemClock.monotonic(), 'http://127.0.0.1:8080');
 * buf.take(); // 1n
 * ```
 */
import type { Clock } from '@flurry/core';

/**
 * One answer of the batch route in the buffer.
 *
 * @example
 * ```ts
 * const chunk: Chunk = { ids, pos: 0, fetchedAt: clock.monotonic(), server: 'http://127.0.0.1:8080' };
 * ```
 */
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

/**
 * The prefetch buffer.
 *
 * @example
 * ```ts
 * const buf = new IdBuffer(clock, 1_000);
 * buf.push(ids, clock.monotonic(), url);
 * const id = buf.take(); // undefined when empty or everything left is stale
 * ```
 */
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
    const out: bigint[] = new Array(n);
    for (let k = 0; k < n; k++) out[k] = this.take()!;
    return out;
  }

  /** Discards every chunk (anywhere in the queue) older than `maxAgeMs`; returns how many IDs went. */
  discardStale(): number {
    const now = this.clock.monotonic();
    let dropped = 0;
    for (let k = this.chunks.length - 1; k >= 0; k--) {
      const c = this.chunks[k]!;
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
