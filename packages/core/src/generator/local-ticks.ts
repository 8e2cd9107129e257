/** {@link LocalTicks}: the `(tick, sequence)` state of a one-thread generator and its rare paths. */
import type { Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import type { NodeLease } from '../lease.js';
import type { NodeClaim } from './memory-claims.js';
import type { GeneratorEvent, GeneratorStats, ResolvedPolicy } from './options.js';
import { STUCK_ROUNDS, TickPlanner, type PlannerLayout } from './tick-planner.js';

/** What a generator that holds a {@link LocalTicks} rather than extending it does at a new tick and a new node. */
export interface TickHooks {
  onTick(tick: number): void;
  /** Takes the claim of `node` and issues under it from the next tick; undefined when `node` is the current one. */
  switchNode(node: Readonly<Record<string, number>>): NodeClaim | undefined;
}

/**
 * The `(tick, seq)` of the last value issued, only ever growing. The common case (one more sequence value, or a
 * new wall tick) is a few comparisons the generators inline; the rest goes through the {@link TickPlanner}.
 */
export class LocalTicks {
  /** @internal The planner (its `claimNow()` and `lease` tell which node the next value takes). */
  readonly planner: TickPlanner;
  protected lastTick = -1;
  protected seq = 0;
  /** The highest wall tick seen and the Unix ms it was seen at (only new ticks and the slow path raise them). */
  protected highWall = Number.NEGATIVE_INFINITY;
  protected highWallMs = Number.NEGATIVE_INFINITY;
  protected issued = 0;
  protected started = false;
  protected closed = false;
  protected finalTick = Number.NEGATIVE_INFINITY;
  protected readonly epochMs: number;
  protected readonly unitMs: number;
  protected readonly maxSeq: number;
  protected readonly maxTick: number;
  protected claim!: NodeClaim;

  constructor(
    plan: PlannerLayout,
    policy: ResolvedPolicy,
    protected readonly clock: Clock,
    protected readonly lease: NodeLease | undefined,
    onEvent: ((e: GeneratorEvent) => void) | undefined,
    private readonly what: 'ID' | 'UUID',
    private readonly hooks?: TickHooks,
  ) {
    this.planner = new TickPlanner(plan, policy, clock, lease, onEvent, (c) => this.follow(c));
    this.epochMs = plan.epochMs;
    this.unitMs = plan.unitMs;
    this.maxSeq = plan.maxSequence;
    this.maxTick = plan.maxTick;
  }

  /** @internal Takes `claim`, starting after the lease floor and a previous holder here; then attaches the lease. */
  start(claim: NodeClaim): void {
    this.claim = claim;
    this.lastTick = Math.max(-1, this.planner.floorTick - 1, claim.previousTick);
    this.seq = this.maxSeq;
    try {
      this.lease?.attach(() => this.lastIssuedUnixMs);
    } catch (e) {
      claim.release(claim.previousTick);
      throw e;
    }
  }

  /** Unix ms of the highest tick issued (borrowed too): the high-water mark; before the first, `notBeforeMs` or 0. */
  get lastIssuedUnixMs(): number {
    const tick = this.closed ? this.finalTick : this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    if (!Number.isFinite(tick)) return this.planner.lease?.notBeforeMs ?? 0;
    return this.epochMs + tick * this.unitMs;
  }

  /** Counters: IDs issued, waits for the next tick, clock steps back seen, borrowed ticks. */
  get stats(): GeneratorStats {
    return this.planner.stats(this.issued);
  }

  /** Stops issuing and frees the node ID (its next holder here starts after the last tick); idempotent. */
  close(): void {
    if (this.closed) return;
    this.finalTick = this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    this.closed = true;
    this.lastTick = Number.POSITIVE_INFINITY;
    this.seq = this.maxSeq;
    this.claim.release(this.finalTick);
  }

  /** @internal Reserves the next `(tick, seq)` for one value, checking the lease's deadlines first; returns `seq`. */
  advance(): number {
    const now = this.clock.now();
    if (this.lease !== undefined) this.planner.checkDeadline(now);
    const unit = this.unitMs;
    const w = unit === 1 ? Math.floor(now - this.epochMs) : Math.floor((now - this.epochMs) / unit);
    if (w <= this.lastTick && this.seq < this.maxSeq && w >= this.highWall) this.seq++;
    else if (w > this.lastTick) this.fresh(w, now);
    else this.slow(now);
    this.issued++;
    return this.seq;
  }

  /** @internal Reserves up to `more` further values of the current tick; returns the last sequence value reserved. */
  take(more: number): number {
    const end = Math.min(this.maxSeq, this.seq + more);
    this.issued += end - this.seq;
    return (this.seq = end);
  }

  /** The wall clock moved to a new tick `w` beyond the last one. */
  protected fresh(w: number, now: number): void {
    if (
      w < this.highWall ||
      w > this.maxTick ||
      (this.lease !== undefined && (this.planner.checkDeadline(now), w < this.planner.refreshFloor()))
    ) {
      this.slow(now);
      return;
    }
    this.highWall = w;
    this.highWallMs = now;
    this.setTick(w, this.planner.startSeq());
  }

  protected setTick(tick: number, seq: number): void {
    this.lastTick = tick;
    this.seq = seq;
    this.started = true;
    this.onTick(tick);
  }

  protected onTick(tick: number): void {
    this.hooks!.onTick(tick);
  }

  protected switchNode(node: Readonly<Record<string, number>>): NodeClaim | undefined {
    return this.hooks!.switchNode(node);
  }

  /** Takes a new claim of the lease (see `TickPlanner.checkDeadline`): its node, and a new tick for the next value. */
  private follow(lease: NodeLease): number | undefined {
    if (this.closed) return undefined;
    const floorMs = this.lastIssuedUnixMs;
    const next = this.switchNode(lease.node);
    if (next !== undefined) {
      this.claim.release(this.started ? this.lastTick : Number.NEGATIVE_INFINITY);
      this.claim = next;
      this.lastTick = Math.max(this.lastTick, next.previousTick);
    }
    this.seq = this.maxSeq;
    return floorMs;
  }

  /** Everything but the common case: clock steps, exhaustion, floors, expiry, closed. */
  protected slow(now: number): void {
    if (this.closed) {
      const gen = this.what === 'ID' ? 'generator' : 'UUID generator';
      throw new FlurryError(
        ErrorCode.GENERATOR_CLOSED,
        `This ${gen} was closed; create a new one (it will continue after the last ${this.what} issued).`,
        {},
      );
    }
    const planner = this.planner;
    const clock = this.clock;
    let waitStart = -1;
    let stuck = 0;
    for (;;) {
      if (this.lease !== undefined) {
        planner.checkDeadline(now);
        planner.refreshFloor();
      }
      const w = Math.floor((now - this.epochMs) / this.unitMs);
      const elapsed = waitStart < 0 ? 0 : clock.monotonic() - waitStart;
      const d = planner.decide(now, w, this.lastTick, this.seq, this.highWall, this.highWallMs, elapsed);
      if (w >= this.highWall) {
        this.highWall = w;
        if (now > this.highWallMs) this.highWallMs = now;
      }
      if (!d.wait) {
        if (d.tick !== this.lastTick) this.setTick(d.tick, d.seq);
        else this.seq = d.seq;
        return;
      }
      if (waitStart < 0) waitStart = clock.monotonic();
      planner.wait(d, this.lastTick + 1);
      const before = now;
      now = clock.now();
      stuck = now === before ? stuck + 1 : 0;
      if (stuck >= STUCK_ROUNDS) throw planner.stuck(d, now, this.lastTick);
    }
  }
}
