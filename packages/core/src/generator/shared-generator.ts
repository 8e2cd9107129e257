/**
 * {@link SharedGenerator}: one node ID shared by several `worker_threads`, its state in a
 * `SharedArrayBuffer` and advanced lock-free with `Atomics.compareExchange`. Each thread
 * reserves a run of one tick's sequence values with one swap and hands them out locally
 * (see the class's documentation and docs/clocks.md).
 */
import { endianness } from 'node:os';
import { sleepSync, systemClock, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { Layout } from '../layout/layout.js';
import type { LayoutSpec } from '../layout/types.js';
import { claimNode, type NodeClaim } from '#claims';
import { assertKnownOptions, optionNames } from '../known-options.js';
import {
  GENERATOR_OPTION_NAMES,
  badOption,
  resolvePolicy,
  type GeneratorEvent,
  type GeneratorOptions,
  type GeneratorStats,
  type ResolvedPolicy,
} from './options.js';
import { STUCK_ROUNDS, TickPlanner } from './tick-planner.js';

/** The keys `SharedGenerator.fromState` takes besides the state. */
const FROM_STATE_OPTION_NAMES = optionNames<{ clock?: Clock; onEvent?: (e: GeneratorEvent) => void }>({
  clock: true,
  onEvent: true,
});

const STATE_CELL = 0;
const WALL_CELL = 1;
// Int32 indexes of the closed flag and the in-flight count, each on its own 64-byte cache
// line: every next() reads CLOSED, so the lines the swaps write must not be its line.
const CLOSED = 16;
const INFLIGHT = 32;
const BUFFER_BYTES = 192;
/** Bound on compare-and-swap retries in one call (contention between a handful of threads needs a few). */
const MAX_ATTEMPTS = 1_000_000;
const MAX_BATCH = 10_000_000;
/**
 * Bounds of a thread's run (sequence values reserved by one swap beyond what the call
 * needs): it doubles after each swap, halves when the tick ended with a wasteful share of the
 * last run unused, and never takes more than a quarter of what is left in the tick. A lost
 * swap does not shrink it: under contention smaller runs mean more swaps on one cache line,
 * which collapsed 16 threads to 1M IDs/s (docs/benchmarks.md, "Threads").
 */
const [MIN_RUN, FIRST_RUN, MAX_RUN] = [1, 16, 4096];
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * What a {@link SharedGenerator} posts to worker threads (structured-cloneable: plain data
 * and the `SharedArrayBuffer`).
 */
export interface SharedGeneratorState {
  readonly kind: 'flurry-shared-generator';
  readonly layout: LayoutSpec;
  readonly node: Readonly<Record<string, number>>;
  readonly policy: ResolvedPolicy;
  readonly buffer: SharedArrayBuffer;
}

/**
 * Options of {@link SharedGenerator}: those of {@link Generator} without `lease` (a lease's
 * deadline lives on one thread's monotonic clock and cannot be shared; give each thread
 * pool its own leased node instead).
 */
export type SharedGeneratorOptions = Omit<GeneratorOptions, 'lease'>;

/**
 * A generator whose `(tick, sequence)` state lives in shared memory, so any number of
 * worker threads issue IDs for one node ID without ever repeating one. A thread reads the
 * packed state cell, decides the next `(tick, sequence)` with the same policies as
 * {@link Generator}, and publishes the end of a run of that tick's sequence values with
 * one compare-and-swap: the state only ever increases, and each run is won by exactly one
 * thread, which then hands its values out without touching shared memory. The run adapts:
 * it doubles while the thread wins its swaps at the first try (one thread issuing alone),
 * halves when it loses one (threads contending), never exceeds a quarter of the tick's
 * remaining values (beyond what a batch asks for) and never crosses a tick: once the wall
 * clock reaches a later tick, or steps back below the tick it read when the run was won,
 * the rest of the run is dropped and the shared state decides again. Batches reserve what
 * they need in one swap.
 *
 * The creating thread holds the process-wide node claim (as a `Generator` would); handles
 * built with {@link SharedGenerator.fromState} share it. `close()` on the creating handle
 * stops every handle (waiting for calls in flight) and frees the node ID; on other
 * handles it only detaches that handle. Stats are per handle.
 *
 * Layouts whose timestamp and sequence together exceed 63 bits (64-bit layouts without
 * node fields) are refused: the state cell is a signed 64-bit integer.
 *
 * @example
 * ```ts
 * const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 0, worker: 9 } });
 * const here = shared.next();
 * const inWorker = SharedGenerator.fromState(structuredClone(shared.state)); // as a worker would
 * inWorker.next() > here; // true
 * ```
 */
export class SharedGenerator {
  readonly layout: Layout;
  readonly node: Readonly<Record<string, number>>;
  /** The structured-cloneable state to post to worker threads. */
  readonly state: SharedGeneratorState;

  private readonly cells: BigInt64Array;
  private readonly ctl: Int32Array;
  private readonly clock: Clock;
  private readonly planner: TickPlanner;
  private readonly epochMs: number;
  private readonly unitMs: number;
  private readonly maxSeq: number;
  private readonly maxTick: number;
  private readonly seqBits: bigint;
  private readonly seqMask: bigint;
  private readonly tsShift: bigint;
  private readonly seqShift: bigint;
  private readonly nodeBits: bigint;
  /** One sequence step in ID units (`2^sequenceShift`); seqMul the same as a number when `sequence × seqMul` stays inside the low 32 bits on a little-endian host, else 0. */
  private readonly seqStep: bigint;
  private readonly seqMul: number;
  private readonly claim: NodeClaim | undefined;
  private detached = false;
  private issued = 0;
  // This thread's run: sequence runNext..runEnd of runTick, won at wall tick runWall; runBase: the tick's ID.
  private runTick = -1;
  private runNext = 1;
  private runEnd = 0;
  private runWall = Number.POSITIVE_INFINITY;
  private runBase = 0n;
  private runLo = 0;
  private runHi = 0;
  private runSize = FIRST_RUN;
  /** The last ID next() returned and its sequence (-2 after a new run), so the next is one addition. */
  private lastId = 0n;
  private lastSeq = -2;

  constructor(opts: SharedGeneratorOptions);
  /** @internal used by {@link SharedGenerator.fromState}. */
  constructor(opts: SharedGeneratorOptions, attach: { buffer: SharedArrayBuffer; policy: ResolvedPolicy });
  constructor(opts: SharedGeneratorOptions, attach?: { buffer: SharedArrayBuffer; policy: ResolvedPolicy }) {
    if (opts === null || typeof opts !== 'object')
      throw badOption('options', opts, 'an object such as { layout, node }');
    if ((opts as GeneratorOptions).lease !== undefined) {
      throw badOption(
        'lease',
        'a lease',
        'no lease: a SharedGenerator cannot share a lease across threads; give the Generator of each process its own leased node',
      );
    }
    assertKnownOptions(opts, GENERATOR_OPTION_NAMES, 'SharedGenerator options');
    const layout = Layout.from(opts.layout);
    if (layout.timestampBits + layout.sequenceBits > 63) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `A SharedGenerator needs timestamp + sequence ≤ 63 bits; the ${layout.name} layout has ${layout.timestampBits} + ${layout.sequenceBits}. Narrow one of them by ${layout.timestampBits + layout.sequenceBits - 63} bit(s) or use a Generator per thread with distinct node IDs.`,
        { timestampBits: layout.timestampBits, sequenceBits: layout.sequenceBits },
      );
    }
    if (opts.node === undefined)
      throw new FlurryError(ErrorCode.NODE_OUT_OF_RANGE, 'A SharedGenerator needs its node ID: pass node.', {});
    const nodeBits = layout.nodeBits(opts.node);
    const policy = attach ? attach.policy : resolvePolicy(opts);
    this.layout = layout;
    this.node = Object.freeze({ ...opts.node });
    this.clock = opts.clock ?? systemClock;
    this.planner = new TickPlanner(layout, policy, this.clock, undefined, opts.onEvent);
    this.epochMs = layout.epochMs;
    this.unitMs = layout.unitMs;
    this.maxSeq = layout.maxSequence;
    this.maxTick = layout.maxTick;
    this.seqBits = BigInt(layout.sequenceBits);
    this.seqMask = (1n << this.seqBits) - 1n;
    this.tsShift = BigInt(layout.timestampField.shift);
    this.seqShift = BigInt(layout.sequenceField.shift);
    this.nodeBits = nodeBits;
    this.seqStep = 1n << this.seqShift;
    const seqField = layout.sequenceField;
    this.seqMul = LITTLE_ENDIAN && seqField.shift + seqField.bits <= 32 ? 2 ** seqField.shift : 0;
    let buffer: SharedArrayBuffer;
    if (attach) {
      buffer = attach.buffer;
      this.cells = new BigInt64Array(buffer, 0, 2);
      this.ctl = new Int32Array(buffer);
      this.claim = undefined;
    } else {
      buffer = new SharedArrayBuffer(BUFFER_BYTES);
      this.cells = new BigInt64Array(buffer, 0, 2);
      this.ctl = new Int32Array(buffer);
      this.claim = claimNode(layout.idSpaceKey(nodeBits), `${layout.name} node ${JSON.stringify(this.node)}`, () =>
        this.lastTick(),
      );
      // (previousTick, maxSeq): the first ID comes after any previous holder in this process.
      const start = Math.max(-1, this.claim.previousTick);
      this.cells[STATE_CELL] = (BigInt(start) << this.seqBits) | this.seqMask;
      this.cells[WALL_CELL] = -1n;
    }
    this.state = Object.freeze({
      kind: 'flurry-shared-generator',
      layout: layout.toSpec(),
      node: this.node,
      policy,
      buffer,
    });
  }

  /**
   * Attaches to a shared generator from its posted {@link SharedGeneratorState} (in a
   * worker thread). `clock` and `onEvent` are per thread.
   *
   * @example
   * ```ts
   * import { workerData } from 'node:worker_threads';
   * const gen = SharedGenerator.fromState(workerData);
   * ```
   */
  static fromState(
    state: SharedGeneratorState,
    opts: { clock?: Clock; onEvent?: (e: GeneratorEvent) => void } = {},
  ): SharedGenerator {
    assertKnownOptions(opts, FROM_STATE_OPTION_NAMES, 'SharedGenerator.fromState options');
    if (
      state === null ||
      typeof state !== 'object' ||
      state.kind !== 'flurry-shared-generator' ||
      !(state.buffer instanceof SharedArrayBuffer) ||
      state.buffer.byteLength !== BUFFER_BYTES
    ) {
      throw badOption('state', typeof state, 'the `state` of a SharedGenerator (posted to the worker unchanged)');
    }
    return new SharedGenerator(
      { layout: state.layout, node: { ...state.node }, clock: opts.clock, onEvent: opts.onEvent },
      { buffer: state.buffer, policy: state.policy },
    );
  }

  /**
   * Counters of this handle (thread).
   *
   * @example `gen.stats.issued`
   */
  get stats(): GeneratorStats {
    const p = this.planner;
    return {
      issued: this.issued,
      exhaustedWaits: p.exhaustedWaits,
      clockBackwards: p.clockBackwards,
      borrowedTicks: p.borrowedTicks,
    };
  }

  /**
   * Unix ms of the highest tick issued by any thread (0 before the first ID).
   *
   * @example `shared.lastIssuedUnixMs`
   */
  get lastIssuedUnixMs(): number {
    const t = this.lastTick();
    return t < 0 ? 0 : this.epochMs + t * this.unitMs;
  }

  /**
   * The next ID: from this thread's run while the wall clock stays in its tick, else from
   * a new run won on the shared state.
   *
   * @example `const id = shared.next();`
   */
  next(): bigint {
    const now = this.clock.now();
    const unit = this.unitMs;
    const w = unit === 1 ? Math.floor(now - this.epochMs) : Math.floor((now - this.epochMs) / unit);
    const s = this.runNext;
    if (s <= this.runEnd && w <= this.runTick && w >= this.runWall && Atomics.load(this.ctl, CLOSED) === 0) {
      this.runNext = s + 1;
      this.issued++;
      if (s === this.lastSeq + 1) {
        this.lastSeq = s;
        return (this.lastId += this.seqStep);
      }
      this.lastSeq = s;
      return (this.lastId = this.runBase | (BigInt(s) << this.seqShift));
    }
    this.reserve(1);
    const f = this.runNext++;
    this.issued++;
    this.lastSeq = f;
    return (this.lastId = this.runBase | (BigInt(f) << this.seqShift));
  }

  /**
   * The next ID as a decimal string.
   *
   * @example `shared.nextString()`
   */
  nextString(): string {
    return this.next().toString();
  }

  /**
   * `count` increasing IDs.
   *
   * @example `shared.batch(100)`
   */
  batch(count: number): bigint[] {
    if (!Number.isInteger(count) || count < 0 || count > MAX_BATCH)
      throw badOption('count', count, `a whole number from 0 to ${MAX_BATCH}`);
    const target = new BigUint64Array(count);
    this.fill(target);
    return Array.from(target);
  }

  /**
   * `count` increasing IDs as decimal strings.
   *
   * @example `shared.batchStrings(100)`
   */
  batchStrings(count: number): string[] {
    return this.batch(count).map(String);
  }

  /**
   * Writes `count` increasing IDs into `target` from `offset`; one compare-and-swap per
   * run of sequence values.
   *
   * @example `shared.fill(new BigUint64Array(1024))`
   */
  fill(target: BigUint64Array, offset = 0, count: number = target.length - offset): number {
    if (!(target instanceof BigUint64Array))
      throw badOption('target', Object.prototype.toString.call(target), 'a BigUint64Array');
    if (!Number.isInteger(offset) || offset < 0 || offset > target.length)
      throw badOption('offset', offset, `a whole number from 0 to ${target.length}`);
    if (!Number.isInteger(count) || count < 0 || offset + count > target.length) {
      throw badOption(
        'count',
        count,
        `a whole number from 0 to ${target.length - offset} (the room after offset ${offset})`,
      );
    }
    const mul = this.seqMul;
    const words = mul !== 0 ? new Uint32Array(target.buffer, target.byteOffset + offset * 8, count * 2) : undefined;
    let i = 0;
    try {
      while (i < count) {
        const w = Math.floor((this.clock.now() - this.epochMs) / this.unitMs);
        if (!this.holds(w)) this.reserve(count - i);
        const first = this.runNext;
        const last = Math.min(this.runEnd, first + (count - i - 1));
        if (words !== undefined) {
          const lo = this.runLo;
          const hi = this.runHi;
          let j = i * 2;
          for (let s = first; s <= last; s++) {
            words[j++] = lo + s * mul;
            words[j++] = hi;
          }
        } else {
          for (let s = first, k = offset + i; s <= last; s++) target[k++] = this.runBase | (BigInt(s) << this.seqShift);
        }
        i += last - first + 1;
        this.runNext = last + 1;
      }
    } finally {
      this.issued += i;
      this.lastSeq = -2;
    }
    return count;
  }

  /**
   * On the creating handle: stops every handle (after calls in flight finish, up to 2 s)
   * and frees the node ID. On an attached handle: detaches this handle only.
   *
   * @example `shared.close()`
   */
  close(): void {
    if (this.detached) return;
    this.detached = true;
    this.dropRun();
    if (!this.claim) return;
    Atomics.store(this.ctl, CLOSED, 1);
    for (let i = 0; i < 2000 && Atomics.load(this.ctl, INFLIGHT) !== 0; i++) sleepSync(1);
    this.claim.release(this.lastTick());
  }

  private lastTick(): number {
    return Number(Atomics.load(this.cells, STATE_CELL) >> this.seqBits);
  }

  /** Whether this thread's run has values left for wall tick `w` (next() inlines the same test). */
  private holds(w: number): boolean {
    return (
      this.runNext <= this.runEnd && w <= this.runTick && w >= this.runWall && Atomics.load(this.ctl, CLOSED) === 0
    );
  }

  /** Empties this thread's run, so the next call goes to the shared state. */
  private dropRun(): void {
    this.runNext = 1;
    this.runEnd = 0;
  }

  /**
   * Wins a new run for this thread (dropping what is left of the old one): at least one
   * and at most `want` values plus the adaptive run size of one tick's sequence, after
   * every value any thread has won so far.
   */
  private reserve(want: number): void {
    const ctl = this.ctl;
    // What is left of the run is lost (its tick ended or the clock stepped back): a share
    // that matters to the tick's capacity halves the next runs.
    if (this.runEnd - this.runNext + 1 > (this.maxSeq + 1) / 64) this.runSize = Math.max(MIN_RUN, this.runSize >> 1);
    this.dropRun();
    Atomics.add(ctl, INFLIGHT, 1);
    try {
      if (this.detached || Atomics.load(ctl, CLOSED) !== 0) {
        throw new FlurryError(ErrorCode.GENERATOR_CLOSED, 'This shared generator was closed; create a new one.', {});
      }
      const cells = this.cells;
      const planner = this.planner;
      const clock = this.clock;
      let waitStart = -1;
      let stuck = 0;
      let lastNow = Number.NaN;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const old = Atomics.load(cells, STATE_CELL);
        const lastTick = Number(old >> this.seqBits);
        const seq = Number(old & this.seqMask);
        const hw = Number(Atomics.load(cells, WALL_CELL));
        const now = clock.now();
        const w = Math.floor((now - this.epochMs) / this.unitMs);
        let tick: number;
        let first: number;
        if (w > lastTick && w >= hw && w <= this.maxTick) {
          tick = w;
          first = planner.startSeq();
        } else if (w <= lastTick && w >= hw && seq < this.maxSeq) {
          tick = lastTick;
          first = seq + 1;
        } else {
          const elapsed = waitStart < 0 ? 0 : clock.monotonic() - waitStart;
          const d = planner.decide(now, w, lastTick, seq, hw, this.epochMs + hw * this.unitMs, elapsed);
          if (d.wait) {
            stuck = now === lastNow ? stuck + 1 : 0;
            lastNow = now;
            if (stuck >= STUCK_ROUNDS) throw planner.stuck(d, now, lastTick);
            if (waitStart < 0) waitStart = clock.monotonic();
            planner.wait(d, lastTick + 1);
            continue;
          }
          tick = d.tick;
          first = d.seq;
        }
        const room = this.maxSeq - first + 1;
        const extra = Math.min(this.runSize, Math.ceil(room / 4));
        const last = first + Math.min(room, Math.max(want, extra)) - 1;
        const next = (BigInt(tick) << this.seqBits) | BigInt(last);
        if (Atomics.compareExchange(cells, STATE_CELL, old, next) !== old) continue;
        this.raiseWall(w);
        this.runSize = Math.min(MAX_RUN, this.runSize * 2);
        if (tick !== this.runTick) {
          const base = (BigInt(tick) << this.tsShift) | this.nodeBits;
          this.runTick = tick;
          this.runBase = base;
          if (this.seqMul !== 0) {
            this.runLo = Number(base & 0xffffffffn);
            this.runHi = Number(base >> 32n);
          }
        }
        // A run won while the wall clock was behind (tolerated) is used while it stays there.
        this.runWall = w;
        this.runNext = first;
        this.runEnd = last;
        this.lastSeq = -2;
        return;
      }
      throw new FlurryError(
        ErrorCode.SEQUENCE_EXHAUSTED,
        `Could not win the shared state after ${MAX_ATTEMPTS} attempts; too many threads contend for one node ID.`,
        {},
      );
    } finally {
      Atomics.sub(ctl, INFLIGHT, 1);
    }
  }

  private raiseWall(w: number): void {
    const cells = this.cells;
    const nw = BigInt(w);
    for (let i = 0; i < 1000; i++) {
      const cur = Atomics.load(cells, WALL_CELL);
      if (cur >= nw || Atomics.compareExchange(cells, WALL_CELL, cur, nw) === cur) return;
    }
  }
}
