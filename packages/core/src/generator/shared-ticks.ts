/**
 * {@link SharedTicks}: the `(tick, sequence)` state of one node ID in a `SharedArrayBuffer`
 * and the adaptive compare-and-swap run reservation that {@link SharedGenerator} and
 * `SharedUuidGenerator` share (docs/clocks.md). Internal: each generator composes its own
 * IDs from the runs this reserves.
 */
import { sleepSync, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { claimNode, type NodeClaim } from '#claims';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { badOption, type GeneratorEvent, type GeneratorStats, type ResolvedPolicy } from './options.js';
import { STUCK_ROUNDS, TickPlanner, type PlannerLayout } from './tick-planner.js';

/** The per-thread options `fromState` takes besides the state. */
export interface FromStateOptions {
  clock?: Clock;
  onEvent?: (e: GeneratorEvent) => void;
}
const FROM_STATE_OPTION_NAMES = optionNames<FromStateOptions>({ clock: true, onEvent: true });

const STATE_CELL = 0;
const WALL_CELL = 1;
/**
 * Int32 indexes of the closed flag and the in-flight count, each on its own 64-byte cache
 * line: every next() reads CLOSED, so the line the swaps write must not be its line.
 */
export const CLOSED = 16;
const INFLIGHT = 32;
const BUFFER_BYTES = 192;
/** Bound on compare-and-swap retries in one call (contention between a handful of threads needs a few). */
const MAX_ATTEMPTS = 1_000_000;
/**
 * Bounds of a thread's run (sequence values reserved by one swap beyond what the call
 * needs): it doubles after each swap, halves when the tick ended with a wasteful share of the
 * last run unused, and never takes more than a quarter of what is left in the tick. A lost
 * swap does not shrink it: under contention smaller runs mean more swaps on one cache line,
 * which collapsed 16 threads to 1.1M IDs/s (docs/benchmarks.md, "Threads on 16 cores").
 */
const [MIN_RUN, FIRST_RUN, MAX_RUN] = [1, 16, 4096];

/**
 * The shared buffer of a posted state, or `FLURRY_E_INVALID_OPTION` naming `what` when
 * `state` is not one of kind `kind` (after checking the keys of `opts`).
 */
export function sharedBuffer(state: unknown, kind: string, what: string, opts: FromStateOptions): SharedArrayBuffer {
  assertKnownOptions(opts, FROM_STATE_OPTION_NAMES, `${what}.fromState options`);
  const s = state as { kind?: unknown; buffer?: unknown } | null;
  if (
    s === null ||
    typeof s !== 'object' ||
    s.kind !== kind ||
    !(s.buffer instanceof SharedArrayBuffer) ||
    s.buffer.byteLength !== BUFFER_BYTES
  ) {
    throw badOption('state', typeof state, `the \`state\` of a ${what} (posted to the worker unchanged)`);
  }
  return s.buffer;
}

/**
 * One thread's handle on a shared `(tick, sequence)` state. A thread reads the packed state
 * cell, decides the next `(tick, sequence)` with the planner's policies, and publishes the
 * end of a run of that tick's sequence values with one compare-and-swap: the state only
 * ever increases, and each run is won by exactly one thread, which then hands out
 * `runNext..runEnd` of `runTick` without touching shared memory while the wall tick stays
 * in `runWall..runTick` (see {@link advance}). The creating handle (given a claim key) holds
 * the process-wide node claim.
 */
export class SharedTicks {
  readonly buffer: SharedArrayBuffer;
  readonly planner: TickPlanner;
  /** The closed flag lives at index 0; callers' fast paths read it with `Atomics.load`. */
  readonly ctl: Int32Array;
  // This thread's run: sequence runNext..runEnd of runTick, won at wall tick runWall.
  runTick = -1;
  runNext = 1;
  runEnd = 0;
  runWall = Number.POSITIVE_INFINITY;
  /** Values this handle issued. */
  issued = 0;

  private readonly cells: BigInt64Array;
  private readonly clock: Clock;
  private readonly epochMs: number;
  private readonly unitMs: number;
  private readonly maxSeq: number;
  private readonly maxTick: number;
  private readonly seqBits: bigint;
  private readonly seqMask: bigint;
  private readonly claim: NodeClaim | undefined;
  private detached = false;
  private runSize = FIRST_RUN;

  /**
   * `attach`: the buffer of a posted state, or the claim to take for a new state (`key` and
   * `describe` as `claimNode` takes them). `plan.sequenceBits` + 1 + the tick's bits must
   * fit the signed 64-bit state cell (the callers check).
   */
  constructor(
    plan: PlannerLayout,
    policy: ResolvedPolicy,
    clock: Clock,
    onEvent: ((e: GeneratorEvent) => void) | undefined,
    attach: SharedArrayBuffer | { key: string; describe: string },
    private readonly onTick: (tick: number) => void,
  ) {
    this.clock = clock;
    this.planner = new TickPlanner(plan, policy, clock, undefined, onEvent);
    this.epochMs = plan.epochMs;
    this.unitMs = plan.unitMs;
    this.maxSeq = plan.maxSequence;
    this.maxTick = plan.maxTick;
    this.seqBits = BigInt(plan.sequenceBits);
    this.seqMask = (1n << this.seqBits) - 1n;
    this.buffer = attach instanceof SharedArrayBuffer ? attach : new SharedArrayBuffer(BUFFER_BYTES);
    this.cells = new BigInt64Array(this.buffer, 0, 2);
    this.ctl = new Int32Array(this.buffer);
    if (attach instanceof SharedArrayBuffer) {
      this.claim = undefined;
    } else {
      this.claim = claimNode(attach.key, attach.describe, () => this.lastTick());
      // (previousTick, maxSeq): the first ID comes after any previous holder in this process.
      const start = Math.max(-1, this.claim.previousTick);
      this.cells[STATE_CELL] = (BigInt(start) << this.seqBits) | this.seqMask;
      this.cells[WALL_CELL] = -1n;
    }
  }

  /** The highest tick any thread has won (-1 before the first). */
  lastTick(): number {
    return Number(Atomics.load(this.cells, STATE_CELL) >> this.seqBits);
  }

  /** Unix ms of {@link lastTick} (0 before the first ID). */
  get lastIssuedUnixMs(): number {
    const t = this.lastTick();
    return t < 0 ? 0 : this.epochMs + t * this.unitMs;
  }

  /** This handle's counters. */
  get stats(): GeneratorStats {
    return this.planner.stats(this.issued);
  }

  /**
   * The next sequence value of this thread's run, first winning a new run (for up to `want` values) if it has none
   * left for the wall tick (`SharedGenerator.next()` inlines the same test).
   */
  advance(want = 1): number {
    const w = Math.floor((this.clock.now() - this.epochMs) / this.unitMs);
    const run = this.runNext <= this.runEnd && w <= this.runTick && w >= this.runWall;
    if (!run || Atomics.load(this.ctl, CLOSED) !== 0) this.reserve(want);
    this.issued++;
    return this.runNext++;
  }

  /** Takes up to `more` further values of this thread's run; returns the last one taken. */
  take(more: number): number {
    const end = Math.min(this.runEnd, this.runNext - 1 + more);
    this.issued += end - this.runNext + 1;
    this.runNext = end + 1;
    return end;
  }

  /**
   * On the creating handle: stops every handle (after calls in flight finish, up to 2 s)
   * and frees the node ID. On an attached handle: detaches this handle only.
   */
  close(): void {
    if (this.detached) return;
    this.detached = true;
    this.runNext = 1;
    this.runEnd = 0;
    if (!this.claim) return;
    Atomics.store(this.ctl, CLOSED, 1);
    for (let i = 0; i < 2000 && Atomics.load(this.ctl, INFLIGHT) !== 0; i++) sleepSync(1);
    this.claim.release(this.lastTick());
  }

  /**
   * Wins a new run for this thread (dropping what is left of the old one): at least one
   * and at most `want` values plus the adaptive run size of one tick's sequence, after
   * every value any thread has won so far, calling `onTick` when `runTick` changes.
   */
  reserve(want: number): void {
    const ctl = this.ctl;
    // What is left of the run is lost (its tick ended or the clock stepped back): a share
    // that matters to the tick's capacity halves the next runs.
    if (this.runEnd - this.runNext + 1 > (this.maxSeq + 1) / 64) this.runSize = Math.max(MIN_RUN, this.runSize >> 1);
    this.runNext = 1;
    this.runEnd = 0;
    Atomics.add(ctl, INFLIGHT, 1);
    try {
      if (this.detached || Atomics.load(ctl, CLOSED) !== 0) {
        throw new FlurryError(ErrorCode.GENERATOR_CLOSED, 'This shared generator was closed; create a new one.', {});
      }
      const cells = this.cells;
      const planner = this.planner;
      const clock = this.clock;
      let waitStart = -1;
      let waitTick = 0;
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
          // Other threads issuing in later ticks while this one waits is progress, not a
          // stalled clock or one stepped back past the bounds: the wait (stallLimitMs,
          // maxBackwardsWaitMs) counts from the last tick they took. The shared tick cannot
          // move on while the clock is further behind it than the borrowing allows, so a
          // real step back is still bounded.
          if (waitStart >= 0 && lastTick > waitTick) waitStart = -1;
          const elapsed = waitStart < 0 ? 0 : clock.monotonic() - waitStart;
          const d = planner.decide(now, w, lastTick, seq, hw, this.epochMs + hw * this.unitMs, elapsed);
          if (d.wait) {
            stuck = now === lastNow ? stuck + 1 : 0;
            lastNow = now;
            if (stuck >= STUCK_ROUNDS) throw planner.stuck(d, now, lastTick);
            if (waitStart < 0) {
              waitStart = clock.monotonic();
              waitTick = lastTick;
            }
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
        const changed = tick !== this.runTick;
        this.runTick = tick;
        // A run won while the wall clock was behind (tolerated) is used while it stays there.
        this.runWall = w;
        this.runNext = first;
        this.runEnd = last;
        if (changed) this.onTick(tick);
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
