import { systemClock, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import type { NodeLease } from '../lease.js';
import type { Layout } from '../layout/layout.js';
import { GENERATOR_DEFAULTS, type GeneratorEvent, type GeneratorStats, type ResolvedPolicy } from './options.js';

/** Most clock reads in one sub-millisecond spin (a few ms at most; a moving clock ends it far sooner). */
const SPIN_LIMIT = 100_000;
/** Consecutive waits without any wall-clock change before a call gives up (a frozen clock ends within about 1 s). */
const STUCK_ROUNDS = 250;

/** The part of a {@link Layout} the planner reads; the UUIDv7 generators pass an object of this shape. */
export type PlannerLayout = Pick<
  Layout,
  'name' | 'epochMs' | 'unitMs' | 'maxSequence' | 'maxTick' | 'sequenceBits' | 'timestampBits' | 'expiresAt'
>;

/** A planner's answer: issue `(tick, seq)`, or wait until the wall clock reaches `untilMs` and ask again. */
export type Decision =
  | { wait: false; tick: number; seq: number }
  | { wait: true; untilMs: number; reason: 'exhausted' | 'backwards' | 'high-water'; byMs: number };

/**
 * The base of `LocalTicks` and `SharedTicks`: the rare-path decisions of one generator (per thread for a shared one):
 * new ticks, exhaustion, clock steps, the lease floor, waits, and their counters. Invariant: the `(tick, sequence)`
 * returned is strictly greater than the one passed in.
 */
export class TickPlanner {
  exhaustedWaits = 0;
  clockBackwards = 0;
  borrowedTicks = 0;
  issued = 0;
  /** Smallest tick allowed by the lease's high-water mark (-Infinity without a lease). */
  floorTick = Number.NEGATIVE_INFINITY;
  /** The claim issued under: the lease itself, or its current `forGenerator()` view. */
  lease: NodeLease | undefined;

  protected readonly epochMs: number;
  protected readonly unitMs: number;
  protected readonly maxSeq: number;
  protected readonly maxTick: number;
  private readonly borrowTicks: number;
  private readonly randomRange: number;
  private readonly spin: boolean;
  /** The clock cannot block ({@link Clock.nonBlocking}): borrow instead of waiting, throw instead of a wait. */
  private readonly nonBlocking: boolean;
  private behind = false;
  private lastSeenW = 0;
  // The waits of one call: since when (reset when another thread takes a later tick), and how many saw no clock move.
  private waitStart = -1;
  private waitTick = 0;
  private stuckWaits = 0;
  private lastNow = Number.NaN;

  constructor(
    readonly layout: PlannerLayout,
    readonly policy: ResolvedPolicy,
    readonly clock: Clock,
    private readonly onEvent: ((e: GeneratorEvent) => void) | undefined,
  ) {
    this.epochMs = layout.epochMs;
    this.unitMs = layout.unitMs;
    this.maxSeq = layout.maxSequence;
    this.maxTick = layout.maxTick;
    this.borrowTicks = Math.floor(policy.maxBorrowMs / layout.unitMs);
    this.randomRange =
      policy.sequenceStart === 'random'
        ? Math.max(1, Math.min(2 ** Math.ceil(layout.sequenceBits / 2), (layout.maxSequence + 1) / 4, 1024))
        : 1;
    this.spin = clock === systemClock;
    this.nonBlocking = clock.nonBlocking === true;
  }

  /** Counters: IDs issued, waits for the next tick, clock steps back seen, borrowed ticks. */
  get stats(): GeneratorStats {
    const { issued, exhaustedWaits, clockBackwards, borrowedTicks } = this;
    return { issued, exhaustedWaits, clockBackwards, borrowedTicks };
  }

  protected startSeq(): number {
    return this.randomRange === 1 ? 0 : Math.floor(Math.random() * this.randomRange);
  }

  /**
   * The next `(tick, seq)` after `(lastTick, seq)`, or a wait; `highWall(Ms)` as seen before. The call's waits count
   * from its first, or from the last time another thread took a tick above the one it waited on.
   */
  protected decide(
    now: number,
    w: number,
    lastTick: number,
    seq: number,
    highWall: number,
    highWallMs: number,
  ): Decision {
    const unitMs = this.unitMs;
    if (this.waitStart >= 0 && lastTick > this.waitTick) this.waitStart = -1;
    const elapsedMs = this.waitStart < 0 ? 0 : this.clock.monotonic() - this.waitStart;
    if (!Number.isFinite(w)) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `The clock returned ${String(now)} instead of a finite number of Unix milliseconds; fix the clock passed to the generator.`,
        { now: String(now) },
      );
    }
    if (w < 0) {
      throw new FlurryError(
        ErrorCode.CLOCK_BEFORE_EPOCH,
        `The clock reads ${iso(now)}, before the ${this.layout.name} layout's epoch ${iso(this.epochMs)}; fix the system clock or choose an earlier epoch.`,
        { nowMs: now, epochMs: this.epochMs },
      );
    }
    if (w < this.floorTick) {
      const floorMs = this.epochMs + this.floorTick * unitMs;
      const behindMs = floorMs - now;
      if (elapsedMs + behindMs > this.policy.highWaterWaitMs) {
        throw new FlurryError(
          ErrorCode.CLOCK_BEHIND_HIGH_WATER,
          `The clock (${iso(now)}) is ${Math.ceil(behindMs)} ms behind this node's high-water mark (IDs must be after ${iso(this.lease!.notBeforeMs)}), more than the ${this.policy.highWaterWaitMs} ms this call may wait; a previous holder of this node ID issued IDs up to then. Fix the clock (NTP) or raise highWaterWaitMs.`,
          { behindMs, notBeforeMs: this.lease!.notBeforeMs, highWaterWaitMs: this.policy.highWaterWaitMs },
        );
      }
      return { wait: true, untilMs: floorMs, reason: 'high-water', byMs: behindMs };
    }
    const behind = w < highWall;
    const newStep = behind && (!this.behind || w < this.lastSeenW);
    this.behind = behind;
    let byMs = 0;
    if (behind) {
      byMs = Math.max(highWallMs - now, 1);
      this.lastSeenW = w;
      if (newStep) this.clockBackwards++;
      const p = this.policy.onClockBackwards;
      if (p === 'throw') throw this.backwardsError(byMs, 'the onClockBackwards policy is throw', true);
      if (p === 'wait') {
        const waitMs = this.epochMs + highWall * unitMs - now;
        if (elapsedMs + waitMs > this.policy.maxBackwardsWaitMs) {
          const why = `waiting for it would take longer than maxBackwardsWaitMs (${this.policy.maxBackwardsWaitMs} ms)`;
          throw this.backwardsError(byMs, why, true);
        }
        return { wait: true, untilMs: this.epochMs + highWall * unitMs, reason: 'backwards', byMs };
      }
      if (newStep) this.emit({ type: 'clock-backwards', byMs, action: 'tolerated' });
    }
    const e = behind ? highWall : w;
    if (e > lastTick) return this.issueNew(e);
    if (seq < this.maxSeq) return { wait: false, tick: lastTick, seq: seq + 1 };
    const next = lastTick + 1;
    const canBorrow = this.policy.onExhausted === 'borrow' || behind || this.nonBlocking;
    if (canBorrow && (next - e) * unitMs <= this.policy.maxBorrowMs) {
      this.borrowedTicks++;
      const d = this.issueNew(next);
      this.emit({ type: 'exhausted', tick: next, waitedMs: 0, borrowed: true });
      return d;
    }
    const targetMs = this.epochMs + (next - (canBorrow ? this.borrowTicks : 0)) * unitMs;
    if (behind) {
      if (elapsedMs + (targetMs - now) > this.policy.maxBackwardsWaitMs) {
        throw this.backwardsError(
          byMs,
          `the ${this.policy.onExhausted === 'borrow' || this.policy.onClockBackwards === 'tolerate' ? `maxBorrowMs (${this.policy.maxBorrowMs} ms) of borrowed ticks is used up and ` : ''}waiting would take longer than maxBackwardsWaitMs (${this.policy.maxBackwardsWaitMs} ms)`,
          true,
        );
      }
    } else if (elapsedMs > unitMs + GENERATOR_DEFAULTS.stallLimitMs) {
      throw new FlurryError(
        ErrorCode.SEQUENCE_EXHAUSTED,
        `The sequence of tick ${lastTick} is used up and the wall clock has not reached the next tick after waiting ${Math.round(elapsedMs)} ms (it reads ${iso(now)}); the clock seems stalled. Check the system clock.`,
        { tick: lastTick, waitedMs: elapsedMs, nowMs: now },
      );
    }
    return { wait: true, untilMs: targetMs, reason: 'exhausted', byMs };
  }

  protected startCall(): void {
    this.waitStart = -1;
    this.lastNow = Number.NaN;
  }

  /**
   * Blocks until the wall clock reaches `d.untilMs` or steps back (whole ms asleep, the rest spinning), then reports
   * it; the STUCK_ROUNDS-th wait in a row that sees the same `now` throws instead.
   */
  protected pause(d: Extract<Decision, { wait: true }>, now: number, lastTick: number): void {
    this.stuckWaits = now === this.lastNow ? this.stuckWaits + 1 : 0;
    this.lastNow = now;
    if (this.stuckWaits >= STUCK_ROUNDS) throw this.stuck(d, now, lastTick);
    const clock = this.clock;
    if (this.waitStart < 0) {
      this.waitStart = clock.monotonic();
      this.waitTick = lastTick;
    }
    if (this.nonBlocking) throw this.stuck(d, clock.now(), lastTick + 1, true);
    const t0 = clock.monotonic();
    if (this.spin) {
      const start = Date.now();
      if (d.untilMs - start >= 2) clock.sleep(Math.floor(d.untilMs - start) - 1);
      // Spin out the sub-millisecond rest, leaving on a step back or after SPIN_LIMIT reads (see STUCK_ROUNDS).
      for (let i = 0, t = Date.now(); t < d.untilMs && t >= start && i < SPIN_LIMIT; i++) t = Date.now();
    } else {
      clock.sleep(Math.max(1, Math.ceil(d.untilMs - clock.now())));
    }
    const waitedMs = clock.monotonic() - t0;
    if (d.reason === 'exhausted') {
      this.exhaustedWaits++;
      this.emit({ type: 'exhausted', tick: lastTick + 1, waitedMs, borrowed: false });
    } else if (d.reason === 'high-water') {
      this.emit({ type: 'high-water-wait', waitedMs });
    } else {
      this.emit({ type: 'clock-backwards', byMs: d.byMs, action: 'waited' });
    }
  }

  /** The coded error of a wait that cannot end: a clock frozen for STUCK_ROUNDS waits, or one that cannot block. */
  private stuck(d: Extract<Decision, { wait: true }>, now: number, lastTick: number, cannotBlock = false): FlurryError {
    const why = cannotBlock
      ? `this clock cannot block (a browser's main thread or a Cloudflare Workers request, where Date.now() does not move until the next I/O), so the generator does not wait (it reads ${iso(now)})`
      : `the wall clock has not moved (it reads ${iso(now)}) across ${STUCK_ROUNDS} waits; the time source seems frozen. Check the system clock.`;
    if (d.reason === 'backwards') {
      const then = cannotBlock ? `${why}; retry after an await, when the clock has caught up` : '';
      return this.backwardsError(d.byMs, then || `waiting for it to catch up failed: ${why}`);
    }
    if (d.reason === 'high-water') {
      const msg = cannotBlock
        ? `The clock is ${Math.ceil(d.byMs)} ms behind this node's high-water mark and ${why}; retry after an await, or fix the clock.`
        : `The clock is behind this node's high-water mark and ${why}`;
      return new FlurryError(ErrorCode.CLOCK_BEHIND_HIGH_WATER, msg, {
        nowMs: now,
        notBeforeMs: this.lease?.notBeforeMs,
      });
    }
    if (!cannotBlock) {
      const msg = `The sequence of tick ${lastTick} is used up and ${why}`;
      return new FlurryError(ErrorCode.SEQUENCE_EXHAUSTED, msg, { tick: lastTick, nowMs: now });
    }
    return new FlurryError(
      ErrorCode.SEQUENCE_EXHAUSTED,
      `The sequence of tick ${lastTick} is used up, and so are the ${this.policy.maxBorrowMs} ms (maxBorrowMs) of ticks this generator may borrow ahead of the clock; ${why}. Issue the rest after an await (in Workers, after I/O: the clock moves then), raise maxBorrowMs, or take IDs from the service (@flurry/client).`,
      { tick: lastTick, nowMs: now, maxBorrowMs: this.policy.maxBorrowMs, nonBlocking: true },
    );
  }

  private issueNew(tick: number): Decision {
    const l = this.layout;
    if (tick > this.maxTick) {
      throw new FlurryError(
        ErrorCode.LAYOUT_EXPIRED,
        `The ${l.name} layout expired at ${l.expiresAt.toISOString()}: its ${l.timestampBits}-bit timestamp field cannot hold ${iso(this.epochMs + tick * this.unitMs)}. Move to a layout with a later epoch or a wider timestamp.`,
        { expiresAt: l.expiresAt.toISOString(), tick },
      );
    }
    return { wait: false, tick, seq: this.startSeq() };
  }

  /** The `FLURRY_E_CLOCK_BACKWARDS` error, after a `clock-backwards` `threw` event if `emit`. */
  private backwardsError(byMs: number, why: string, emit = false): FlurryError {
    if (emit) this.emit({ type: 'clock-backwards', byMs, action: 'threw' });
    return new FlurryError(
      ErrorCode.CLOCK_BACKWARDS,
      `The wall clock went back by ${Math.ceil(byMs)} ms and ${why}; no ID was issued (issuing could repeat IDs). Retry after the clock catches up, or fix the time source.`,
      { byMs: Math.ceil(byMs), policy: this.policy.onClockBackwards },
    );
  }

  protected emit(e: GeneratorEvent): void {
    if (this.onEvent !== undefined) this.onEvent(e);
  }
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
