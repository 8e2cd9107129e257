import type { Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import type { NodeLease } from '../lease.js';
import type { NodeClaim } from './memory-claims.js';
import type { GeneratorEvent, ResolvedPolicy } from './options.js';
import { TickPlanner, type PlannerLayout } from './tick-planner.js';

/** A lease's current claim: its `forGenerator()` view when it has one. */
export function currentClaim(lease: NodeLease | undefined): NodeLease | undefined {
  return typeof lease?.forGenerator === 'function' ? lease.forGenerator() : lease;
}

/**
 * The `(tick, seq)` of a one-thread generator's last value, only ever growing, and its lease: {@link advance} takes
 * one more sequence value or a new wall tick in a few comparisons; the rest goes through the {@link TickPlanner}.
 */
export class LocalTicks extends TickPlanner {
  protected lastTick = -1;
  protected seq = 0;
  /** The highest wall tick seen and the Unix ms it was seen at (only new ticks and the slow path raise them). */
  protected highWall = Number.NEGATIVE_INFINITY;
  protected highWallMs = Number.NEGATIVE_INFINITY;
  protected started = false;
  protected closed = false;
  protected finalTick = Number.NEGATIVE_INFINITY;
  protected claim!: NodeClaim;
  private seenNotBefore = Number.NaN;
  /** The generator's last ID (Unix ms) when it followed the lease to the current claim: a floor too. */
  private ownFloorMs = 0;

  constructor(
    plan: PlannerLayout,
    policy: ResolvedPolicy,
    clock: Clock,
    private readonly source: NodeLease | undefined,
    onEvent: ((e: GeneratorEvent) => void) | undefined,
    private readonly what: 'ID' | 'UUID',
    /** The generator's steps at a new tick, and at a new node (its claim; undefined when it is the current node). */
    private readonly hooks: {
      onTick(tick: number): void;
      switchNode(node: Readonly<Record<string, number>>): NodeClaim | undefined;
    },
  ) {
    super(plan, policy, clock, onEvent);
    this.lease = this.claimNow();
    if (this.lease) this.refreshFloor();
  }

  /** The lease's current claim: its `forGenerator()` view when it has one. */
  claimNow(): NodeLease | undefined {
    return currentClaim(this.source);
  }

  /** @internal Takes `claim`, starting after the lease floor and a previous holder here; then attaches the lease. */
  start(claim: NodeClaim): void {
    this.claim = claim;
    this.lastTick = Math.max(-1, this.floorTick - 1, claim.previousTick);
    this.seq = this.maxSeq;
    try {
      this.source?.attach(() => this.lastIssuedUnixMs);
    } catch (e) {
      claim.release(claim.previousTick);
      throw e;
    }
  }

  /** Unix ms of the highest tick issued (borrowed too): the high-water mark; before the first, `notBeforeMs` or 0. */
  get lastIssuedUnixMs(): number {
    const tick = this.closed ? this.finalTick : this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    if (!Number.isFinite(tick)) return this.lease?.notBeforeMs ?? 0;
    return this.epochMs + tick * this.unitMs;
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
    if (this.lease !== undefined) this.checkDeadline(now);
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

  /** Recomputes {@link floorTick} if the lease's `notBeforeMs` changed; returns it. */
  private refreshFloor(): number {
    const lease = this.lease;
    if (lease !== undefined && lease.notBeforeMs !== this.seenNotBefore) {
      this.seenNotBefore = lease.notBeforeMs;
      const nb = Math.max(lease.notBeforeMs, this.ownFloorMs);
      this.floorTick = nb > 0 ? Math.floor((nb - this.epochMs) / this.unitMs) + 1 : Number.NEGATIVE_INFINITY;
    }
    return this.floorTick;
  }

  /**
   * Past either fencing deadline (monotonic `deadline`, or `wallDeadline` at the reading `now` the caller issues with),
   * follows a newer claim of the lease at a new tick, else throws `FLURRY_E_LEASE_EXPIRED` after a `fenced` event.
   * See docs/node-ids.md#fencing-two-deadlines.
   */
  private checkDeadline(now: number): void {
    const lease = this.lease;
    if (lease !== undefined) {
      const wd = lease.wallDeadline;
      if (!(this.clock.monotonic() < lease.deadline) || (wd !== undefined && now >= wd)) this.followOrFence(now, lease);
    }
  }

  protected fresh(w: number, now: number): void {
    if (
      w < this.highWall ||
      w > this.maxTick ||
      (this.lease !== undefined && (this.checkDeadline(now), w < this.refreshFloor()))
    ) {
      this.slow(now);
      return;
    }
    this.highWall = w;
    this.highWallMs = now;
    this.setTick(w, this.startSeq());
  }

  protected setTick(tick: number, seq: number): void {
    this.lastTick = tick;
    this.seq = seq;
    this.started = true;
    this.hooks.onTick(tick);
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
    this.startCall();
    for (;;) {
      if (this.lease !== undefined) {
        this.checkDeadline(now);
        this.refreshFloor();
      }
      const w = Math.floor((now - this.epochMs) / this.unitMs);
      const d = this.decide(now, w, this.lastTick, this.seq, this.highWall, this.highWallMs);
      if (w >= this.highWall) {
        this.highWall = w;
        if (now > this.highWallMs) this.highWallMs = now;
      }
      if (!d.wait) {
        if (d.tick !== this.lastTick) this.setTick(d.tick, d.seq);
        else this.seq = d.seq;
        return;
      }
      this.pause(d, now, this.lastTick);
      now = this.clock.now();
    }
  }

  /** Follows the lease to its newer claim (its node, a new tick above every value issued), or fences. */
  private followOrFence(now: number, lease: NodeLease): void {
    const claim = this.claimNow()!;
    if (this.closed || claim === lease) return this.fence(now, lease);
    const floorMs = this.lastIssuedUnixMs;
    const next = this.hooks.switchNode(claim.node);
    if (next !== undefined) {
      this.claim.release(this.started ? this.lastTick : Number.NEGATIVE_INFINITY);
      this.claim = next;
      this.lastTick = Math.max(this.lastTick, next.previousTick);
    }
    this.seq = this.maxSeq;
    this.lease = claim;
    this.ownFloorMs = floorMs;
    this.seenNotBefore = Number.NaN;
    this.refreshFloor();
    const wd = claim.wallDeadline;
    if (!(this.clock.monotonic() < claim.deadline) || (wd !== undefined && now >= wd)) this.fence(now, claim);
  }

  /** The cold half of {@link checkDeadline}: the event and the error naming the clock that passed its deadline. */
  private fence(now: number, lease: NodeLease): never {
    this.emit({ type: 'fenced', code: ErrorCode.LEASE_EXPIRED });
    const over = this.clock.monotonic() - lease.deadline;
    const monotonicPassed = !(over < 0);
    const wallOver = now - (lease.wallDeadline ?? Number.POSITIVE_INFINITY);
    if (!Number.isFinite(monotonicPassed ? over : wallOver)) {
      throw new FlurryError(
        ErrorCode.LEASE_EXPIRED,
        'The node lease was lost or released; no IDs are issued under it. Acquire a new lease.',
        { overByMs: null },
      );
    }
    if (monotonicPassed) {
      throw new FlurryError(
        ErrorCode.LEASE_EXPIRED,
        `The node lease expired ${Math.round(over)} ms ago (renewal did not arrive in time, or the process was paused); no IDs are issued until it is renewed or re-acquired.`,
        { overByMs: over, clock: 'monotonic' },
      );
    }
    throw new FlurryError(
      ErrorCode.LEASE_EXPIRED,
      `The node lease's wall-clock deadline passed ${Math.round(wallOver)} ms ago although its monotonic deadline has not: the machine was probably suspended (monotonic time stands still then, the registry's TTL does not), or the wall clock stepped forward. Another holder may have this node ID now, so no IDs are issued until the lease is renewed or re-acquired.`,
      { overByMs: wallOver, clock: 'wall' },
    );
  }
}
