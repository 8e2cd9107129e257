// The client's prefetch buffers (docs/client.md, "Prefetching", "Order and uniqueness"): a FIFO of server answers
// whose read positions only move forward, its sizer, and the one-refill-at-a-time source of UUIDs and sequences.
import type { Clock, FlurryError } from '@flurry/core';
import { clientError, closedError } from './errors.js';
import type { PrefetchOptions } from './options.js';
import type { ServerState } from './server-pool.js';

/** One server answer: its values (IDs increasing), the next to hand out, when its request was sent. */
type Chunk<T> = { readonly ids: ArrayLike<T>; pos: number; readonly fetchedAt: number };

/** A prefetch buffer (IDs, UUIDs, numbers); answers older than `maxAgeMs` (monotonic) are dropped, never handed out. */
export class IdBuffer<T = bigint> {
  private readonly chunks: Chunk<T>[] = [];
  private head: Chunk<T> | undefined;
  /** IDs held, including those of stale chunks not yet noticed (see {@link discardStale}). */
  size = 0;
  discarded = 0;
  taken = 0;

  constructor(
    private readonly clock: Clock,
    readonly maxAgeMs: number,
  ) {}

  /** Appends a chunk (the buffer's from now on); an array head drops its taken part, so arrays hold only what's held. */
  push(ids: ArrayLike<T>, fetchedAt: number): void {
    if (ids.length === 0) return;
    const head = this.head;
    if (head !== undefined && head.pos > 0 && Array.isArray(head.ids)) {
      head.ids.splice(0, head.pos);
      head.pos = 0;
    }
    const chunk: Chunk<T> = { ids, pos: 0, fetchedAt };
    this.chunks.push(chunk);
    this.size += ids.length;
    if (this.head === undefined) this.head = chunk;
  }

  take(): T | undefined {
    const c = this.head;
    if (c !== undefined && c.pos < c.ids.length && this.clock.monotonic() - c.fetchedAt <= this.maxAgeMs) {
      this.size--;
      this.taken++;
      return c.ids[c.pos++];
    }
    return this.takeSlow();
  }

  private takeSlow(): T | undefined {
    this.discardStale();
    return this.head === undefined ? undefined : this.take();
  }

  /** `n` fresh IDs in hand-out order, or `undefined` (taking none) when fewer are held (`oneAnswer`: in the first). */
  takeMany(n: number, oneAnswer = false): T[] | undefined {
    this.discardStale();
    const head = this.head;
    if (oneAnswer ? head === undefined || head.ids.length - head.pos < n : this.size < n) return undefined;
    const out = new Array<T>(n);
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
        dropped += c.ids.length - c.pos;
        c.pos = c.ids.length; // never handed out again, even if something still holds the chunk
        this.chunks.splice(k, 1);
      }
    }
    this.size -= dropped;
    this.discarded += dropped;
    this.head = this.chunks[0];
    return dropped;
  }

  /** Empties the buffer (on close); returns how many IDs were dropped. */
  clear(): number {
    const dropped = this.size;
    for (const c of this.chunks) c.pos = c.ids.length;
    this.chunks.length = 0;
    this.head = undefined;
    this.size = 0;
    return dropped;
  }
}

/** The prefetch settings {@link PrefetchSizer} reads (see {@link PrefetchOptions}). */
export type SizerSettings = Readonly<Pick<Required<PrefetchOptions>, 'size' | 'lowWater' | 'maxAgeMs' | 'adaptive'>>;

/** The refills' target and low-water mark from the observed consumption rate (docs/client.md, "Prefetching"). */
export class PrefetchSizer {
  /** The smallest target (unless `size` is smaller). */
  static readonly MIN_TARGET = 64;
  target: number;
  lowWater: number;
  /** The consumption-rate estimate, IDs per ms. */
  ratePerMs = 0;
  private rateAt: number;
  private rateTaken = 0;

  constructor(
    private readonly clock: Clock,
    private readonly p: SizerSettings,
  ) {
    this.rateAt = clock.monotonic();
    this.target = p.size;
    this.lowWater = p.lowWater;
    this.resize(0);
  }

  /** The span of consumption the target covers, ms. */
  get horizonMs(): number {
    return Math.min(1_000, this.p.maxAgeMs / 2);
  }

  /** Updates the rate from `taken` (a running total) and, when adaptive, the target and low-water mark. */
  update(taken: number, latencyMs: number): void {
    const now = this.clock.monotonic();
    const dt = now - this.rateAt;
    if (dt >= 5) {
      const inst = (taken - this.rateTaken) / dt;
      // A window as long as the horizon replaces the estimate; a shorter one counts for its share of it, at least ½.
      const w = this.ratePerMs === 0 ? 1 : Math.min(1, Math.max(0.5, dt / this.horizonMs));
      this.ratePerMs = this.ratePerMs * (1 - w) + inst * w;
      this.rateAt = now;
      this.rateTaken = taken;
    }
    this.resize(latencyMs);
  }

  /** When adaptive: the target for the rate, and the low-water mark scaled to it and covering the refill time. */
  private resize(latencyMs: number): void {
    const p = this.p;
    if (!p.adaptive) return;
    this.target = Math.max(
      Math.min(p.size, PrefetchSizer.MIN_TARGET),
      Math.min(p.size, Math.ceil(this.ratePerMs * this.horizonMs)),
    );
    const scaled = Math.floor((this.target * p.lowWater) / p.size);
    const cover = Math.ceil(this.ratePerMs * latencyMs * 2);
    this.lowWater = Math.max(0, Math.min(this.target - 1, Math.max(scaled, cover)));
  }
}

/** @internal What a prefetching source needs of the client: one request with failover (`classify`: the caller's error, or skip without backoff). */
export interface RemoteHost {
  request<T>(
    what: string,
    pathFor: (s: ServerState) => string,
    parse: (body: Buffer, path: string) => T,
    classify: (e: FlurryError) => 'caller' | 'skip' | undefined,
  ): Promise<T>;
  closed(): boolean;
}

/** @internal `n` values from `fetch(want)` calls, each asking for what is still missing. */
export async function collect<T>(n: number, fetch: (want: number) => Promise<ArrayLike<T>>): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) {
    const got = await fetch(n - out.length);
    for (let k = 0; k < got.length; k++) out.push(got[k]);
  }
  return out;
}

/** @internal Values (UUIDs, a key's numbers) in a buffer refilled one request at a time. */
export abstract class Refilled<T> {
  readonly buf: IdBuffer<T>;
  /** Moving average of refill request times, ms. */
  protected latency = 0;
  private refilling: Promise<Error | undefined> | undefined;

  constructor(
    protected readonly host: RemoteHost,
    protected readonly clock: Clock,
    private readonly refillWhat: string,
    maxAgeMs = Infinity,
  ) {
    this.buf = new IdBuffer<T>(clock, maxAgeMs);
  }

  abstract tryNext(): T | undefined;
  /** How many a refill asks for now (none when 0 or less). */
  protected abstract wanted(): number;
  /** Up to `want` values in one request (fewer when the server's maxBatch is smaller). */
  protected abstract fetch(want: number, what: string): Promise<T[]>;

  /** The next value: from the buffer, else after a refill (with failover); `none` when the refills bring none. */
  protected async nextBuffered(none: string): Promise<T> {
    for (let round = 0; round < 100; round++) {
      this.assertOpen();
      const v = this.tryNext();
      if (v !== undefined) return v;
      const err = await this.refill();
      this.assertOpen();
      if (err !== undefined && this.buf.size === 0) throw err;
    }
    throw clientError('UNAVAILABLE', none);
  }

  /** `n` values fetched directly (never through the buffer), one request per server maxBatch. */
  protected async fetchAll(n: number, what: string): Promise<T[]> {
    const out = await collect(n, (want) => this.fetch(want, what));
    this.buf.taken += n;
    return out;
  }

  protected assertOpen(): void {
    if (this.host.closed()) throw closedError();
  }

  /** Starts a refill unless one is in flight; the promise resolves with the refill's error, if any. */
  protected refill(): Promise<Error | undefined> {
    if (this.refilling) return this.refilling;
    const want = this.host.closed() ? 0 : this.wanted();
    if (want <= 0) return Promise.resolve(undefined);
    const sentAt = this.clock.monotonic();
    const p: Promise<Error | undefined> = this.fetch(want, this.refillWhat)
      .then((values) => {
        if (this.host.closed() || values.length === 0) return undefined;
        const elapsed = this.clock.monotonic() - sentAt;
        this.latency = this.latency === 0 ? elapsed : this.latency * 0.7 + elapsed * 0.3;
        this.buf.push(values, sentAt);
        return undefined;
      })
      .catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
      .finally(() => {
        this.refilling = undefined;
      });
    this.refilling = p;
    return p;
  }
}
