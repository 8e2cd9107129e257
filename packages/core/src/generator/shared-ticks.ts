import { sleepSync, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { claimNode, type NodeClaim } from '#claims';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { badOption, type GeneratorEvent, type ResolvedPolicy } from './options.js';
import { TickPlanner, type PlannerLayout } from './tick-planner.js';

/** The per-thread options `fromState` takes besides the state. */
export interface FromStateOptions {
  clock?: Clock;
  onEvent?: (e: GeneratorEvent) => void;
}
const FROM_STATE_OPTION_NAMES = optionNames<FromStateOptions>({ clock: true, onEvent: true });

const STATE_CELL = 0;
const WALL_CELL = 1;
/** Int32 indexes of the closed flag and the in-flight count, each on its own cache line (every next() reads CLOSED). */
export const CLOSED = 16;
const INFLIGHT = 32;
const BUFFER_BYTES = 192;
const MAX_ATTEMPTS = 1_000_000;
// A thread's run doubles per swap, halves when much of it was lost, takes at most a quarter of the tick's rest; a lost
// swap does not shrink it (smaller runs under contention collapsed 16 threads to 1.1M IDs/s, docs/benchmarks.md).
const [MIN_RUN, FIRST_RUN, MAX_RUN] = [1, 16, 4096];

/** The buffer of a posted state of kind `kind` (`FLURRY_E_INVALID_OPTION` naming `what` otherwise). */
export function sharedBuffer(state: unknown, kind: string, what: string, opts: FromStateOptions): SharedArrayBuffer {
  assertKnownOptions(opts, FROM_STATE_OPTION_NAMES, `${what}.fromState options`);
  const s = state as { kind?: unknown; buffer?: unknown } | null;
  if (s?.kind !== kind || !(s.buffer instanceof SharedArrayBuffer) || s.buffer.byteLength !== BUFFER_BYTES) {
    throw badOption('state', typeof state, `the \`state\` of a ${what} (posted to the worker unchanged)`);
  }
  return s.buffer;
}

/**
 * One thread's handle on one node's `(tick, sequence)` in a `SharedArrayBuffer` (docs/clocks.md): one compare-and-swap
 * publishes the end of a run, so the state only grows and each run has one winner, which hands out `runNext..runEnd` of
 * `runTick` while the wall tick stays in `runWall..runTick`. The creating handle holds the process-wide node claim.
 */
export class SharedTicks extends TickPlanner {
  readonly buffer: SharedArrayBuffer;
  private readonly ctl: Int32Array;
  // This thread's run: sequence runNext..runEnd of runTick, won at wall tick runWall.
  private runTick = -1;
  private runNext = 1;
  private runEnd = 0;
  private runWall = Number.POSITIVE_INFINITY;

  private readonly cells: BigInt64Array;
  private readonly seqBits: bigint;
  private readonly seqMask: bigint;
  private readonly claim: NodeClaim | undefined;
  private detached = false;
  private runSize = FIRST_RUN;

  /** `attach`: a posted state's buffer, or the claim of a new state; the callers check the packed cell fits 63 bits. */
  constructor(
    plan: PlannerLayout,
    policy: ResolvedPolicy,
    clock: Clock,
    onEvent: ((e: GeneratorEvent) => void) | undefined,
    attach: SharedArrayBuffer | { key: string; describe: string },
    private readonly onTick: (tick: number) => void,
  ) {
    super(plan, policy, clock, onEvent);
    this.seqBits = BigInt(plan.sequenceBits);
    this.seqMask = (1n << this.seqBits) - 1n;
    this.buffer = attach instanceof SharedArrayBuffer ? attach : new SharedArrayBuffer(BUFFER_BYTES);
    this.cells = new BigInt64Array(this.buffer, 0, 2);
    this.ctl = new Int32Array(this.buffer);
    if (!(attach instanceof SharedArrayBuffer)) {
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

  /** The next value of this thread's run, first winning a run (for up to `want`) if none is left for the wall tick. */
  advance(want = 1): number {
    const now = this.clock.now();
    const unit = this.unitMs;
    const w = unit === 1 ? Math.floor(now - this.epochMs) : Math.floor((now - this.epochMs) / unit);
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

  /** The creating handle stops every handle (calls in flight get up to 2 s) and frees the node; others detach. */
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

  /** Wins a new run (the old one's rest is dropped) after every value won so far; calls `onTick` at a new `runTick`. */
  private reserve(want: number): void {
    const ctl = this.ctl;
    // The rest of the run is lost: a share that matters to the tick's capacity halves the next runs.
    if (this.runEnd - this.runNext + 1 > (this.maxSeq + 1) / 64) this.runSize = Math.max(MIN_RUN, this.runSize >> 1);
    this.runNext = 1;
    this.runEnd = 0;
    Atomics.add(ctl, INFLIGHT, 1);
    try {
      if (this.detached || Atomics.load(ctl, CLOSED) !== 0) {
        throw new FlurryError(ErrorCode.GENERATOR_CLOSED, 'This shared generator was closed; create a new one.', {});
      }
      const cells = this.cells;
      this.startCall();
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const old = Atomics.load(cells, STATE_CELL);
        const lastTick = Number(old >> this.seqBits);
        const seq = Number(old & this.seqMask);
        const hw = Number(Atomics.load(cells, WALL_CELL));
        const now = this.clock.now();
        const w = Math.floor((now - this.epochMs) / this.unitMs);
        let tick: number;
        let first: number;
        if (w > lastTick && w >= hw && w <= this.maxTick) {
          tick = w;
          first = this.startSeq();
        } else if (w <= lastTick && w >= hw && seq < this.maxSeq) {
          tick = lastTick;
          first = seq + 1;
        } else {
          // Other threads issuing later ticks is progress: the wait bounds count from the last tick they took (the
          // shared tick cannot outrun the borrowing allowance, so a real step back stays bounded).
          const d = this.decide(now, w, lastTick, seq, hw, this.epochMs + hw * this.unitMs);
          if (d.wait) {
            this.pause(d, now, lastTick);
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
        if (tick !== this.runTick) this.onTick(tick);
        this.runTick = tick;
        // A run won while the wall clock was behind (tolerated) is used while it stays there.
        this.runWall = w;
        this.runNext = first;
        this.runEnd = last;
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
