/** {@link UuidGenerator}: RFC 9562 UUIDv7 with Snowflake's guarantees, in one thread. */
import { systemClock, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions } from '../known-options.js';
import type { NodeLease } from '../lease.js';
import { claimNode, type NodeClaim } from '#claims';
import { badOption, resolvePolicy, type GeneratorStats } from '../generator/options.js';
import { STUCK_ROUNDS, TickPlanner } from '../generator/tick-planner.js';
import { MAX_UNIX_MS, UuidFormat } from './format.js';
import { UuidIssuer, nodeOf, uuidClaim, uuidPlan } from './issuer.js';
import { UUID_GENERATOR_OPTION_NAMES, type UuidGeneratorOptions } from './options.js';

/**
 * Issues strictly increasing UUIDv7 for one node ID, in one thread; unique across every
 * generator of the cluster by construction (see docs/uuids.md).
 *
 * Each UUID holds the Unix millisecond, the version, a sequence counting the UUIDs of that millisecond (RFC 9562
 * §6.2 method 1), the variant, the node ID (§6.4) and random fill; `(millisecond, sequence)` only grows and no two
 * live generators share a node ID, so no two UUIDs are equal. The clock and lease policies are {@link Generator}'s,
 * run by the same planner. One live generator per node ID in a process (whatever its widths).
 *
 * @example
 * ```ts
 * const gen = new UuidGenerator({ node: 3, clock: new ManualClock(Date.UTC(2025, 0, 1)) });
 * const ids = gen.batch(1000);          // canonical strings, strictly increasing
 * const raw = gen.batch(10, 'bytes');   // Uint8Array(16) each
 * gen.close();
 * ```
 */
export class UuidGenerator extends UuidIssuer {
  private lastTick: number;
  private seq: number;
  private highWall = Number.NEGATIVE_INFINITY;
  private highWallMs = Number.NEGATIVE_INFINITY;
  private issued = 0;
  private started = false;
  private closed = false;
  private finalTick = Number.NEGATIVE_INFINITY;

  private readonly clock: Clock;
  private readonly lease: NodeLease | undefined;
  private readonly planner: TickPlanner;
  private readonly maxSeq: number;
  private claim: NodeClaim;

  constructor(opts: UuidGeneratorOptions) {
    if (opts === null || typeof opts !== 'object') throw badOption('options', opts, 'an object such as { node }');
    assertKnownOptions(opts, UUID_GENERATOR_OPTION_NAMES, 'UuidGenerator options');
    const format = UuidFormat.from(opts);
    const lease = opts.lease;
    // The lease's current claim (TickPlanner.claimNow, before `this` exists).
    const claimNow = typeof lease?.forGenerator === 'function' ? lease.forGenerator() : lease;
    const given = nodeOf(opts.node);
    const leased = claimNow ? nodeOf(claimNow.node) : undefined;
    if (given !== undefined && leased !== undefined && given !== leased) {
      throw badOption('node', given, `the lease's node ${leased} or no node (a lease grants exactly one node ID)`);
    }
    const node = given ?? leased;
    if (node === undefined) {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `A UUID generator needs its node ID: pass node (0 to ${format.maxNode} with nodeBits = ${format.nodeBits}) or a registry lease.`,
        {},
      );
    }
    super(format, node);
    this.clock = opts.clock ?? systemClock;
    this.lease = lease;
    this.maxSeq = format.maxSequence;
    this.planner = new TickPlanner(
      uuidPlan(format.sequenceBits),
      resolvePolicy({ ...opts, node: undefined }),
      this.clock,
      lease,
      opts.onEvent,
      (c) => this.follow(c),
    );
    this.claim = this.claimFor(node);
    this.lastTick = Math.max(-1, this.planner.floorTick - 1, this.claim.previousTick);
    this.seq = this.maxSeq;
    this.planner.attach(this.claim, () => this.lastIssuedUnixMs);
  }

  /**
   * Unix ms of the highest millisecond issued (borrowed ones included): the high-water mark
   * a registry records. Before the first UUID: the lease's `notBeforeMs` (or 0 without one).
   */
  get lastIssuedUnixMs(): number {
    const tick = this.closed ? this.finalTick : this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    if (!Number.isFinite(tick)) return this.planner.lease?.notBeforeMs ?? 0;
    return tick;
  }

  /** The node ID: with a registry lease, its current claim's (which the next UUID takes). */
  override get node(): number {
    const claim = this.planner.claimNow();
    return claim === undefined || claim === this.planner.lease ? this.nodeNow : nodeOf(claim.node)!;
  }

  /** Counters: UUIDs issued, waits for the next millisecond, clock steps back seen, borrowed milliseconds. */
  get stats(): GeneratorStats {
    return this.planner.stats(this.issued);
  }

  /**
   * Stops issuing and frees the node ID for another generator in this process (which then
   * starts after this one's last millisecond). Idempotent; later calls throw
   * `FLURRY_E_GENERATOR_CLOSED`.
   */
  close(): void {
    if (this.closed) return;
    this.finalTick = this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    this.closed = true;
    this.lastTick = Number.POSITIVE_INFINITY;
    this.seq = this.maxSeq;
    this.claim.release(this.finalTick);
  }

  /**
   * Issues `count` UUIDs, calling `emit(k)` with the words of the k-th composed. Reads the
   * clock once per run of sequence numbers (as `Generator.fill`): a batch takes the rest
   * of the current millisecond's sequence at once, so it costs one clock read, not one per
   * UUID. `issued` counts every UUID composed, so a throw partway leaves it exact.
   */
  protected produce(count: number, emit: (k: number) => void): void {
    let k = 0;
    while (k < count) {
      const s0 = this.advance();
      const end = Math.min(this.maxSeq, s0 + (count - k - 1));
      for (let s = s0; s <= end; s++) {
        this.seq = s;
        this.compose(s);
        emit(k++);
      }
      this.issued += end - s0;
    }
  }

  /** This process's claim on `node`, whatever the format (see {@link uuidClaim}). */
  private claimFor(node: number): NodeClaim {
    const c = uuidClaim(this.format, node);
    return claimNode(c.key, c.describe, () => this.lastTick);
  }

  /** Takes a new claim of the lease, as `Generator` does: its node, and a new millisecond above the last. */
  private follow(claim: NodeLease): number | undefined {
    if (this.closed) return undefined;
    const floorMs = this.lastIssuedUnixMs;
    const node = nodeOf(claim.node)!;
    if (node !== this.nodeNow) {
      const next = this.claimFor(node);
      this.claim.release(this.started ? this.lastTick : Number.NEGATIVE_INFINITY);
      this.claim = next;
      this.setNode(node);
      this.lastTick = Math.max(this.lastTick, next.previousTick);
    }
    this.seq = this.maxSeq;
    return floorMs;
  }

  /** Reserves the next (millisecond, sequence): the common case inline, the rest in {@link slow}. */
  protected advance(): number {
    const now = this.clock.now();
    if (this.lease !== undefined) this.planner.checkDeadline(now);
    const w = Math.floor(now);
    if (w <= this.lastTick && this.seq < this.maxSeq && w >= this.highWall) this.seq++;
    else if (w > this.lastTick) this.fresh(w, now);
    else this.slow(now);
    this.issued++;
    return this.seq;
  }

  /** The wall clock moved to a new millisecond `w` beyond the last one. */
  private fresh(w: number, now: number): void {
    if (w < this.highWall || w > MAX_UNIX_MS || (this.lease !== undefined && w < this.planner.refreshFloor())) {
      this.slow(now);
      return;
    }
    this.highWall = w;
    this.highWallMs = now;
    this.newTick(w, this.planner.startSeq());
  }

  private newTick(tick: number, seq: number): void {
    this.lastTick = tick;
    this.seq = seq;
    this.started = true;
    this.setTick(tick);
  }

  /** Everything but the common case: clock steps, exhaustion, floors, expiry, closed (as `Generator`). */
  private slow(now: number): void {
    if (this.closed) {
      throw new FlurryError(
        ErrorCode.GENERATOR_CLOSED,
        'This UUID generator was closed; create a new one (it will continue after the last UUID issued).',
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
      const w = Math.floor(now);
      const elapsed = waitStart < 0 ? 0 : clock.monotonic() - waitStart;
      const d = planner.decide(now, w, this.lastTick, this.seq, this.highWall, this.highWallMs, elapsed);
      if (w >= this.highWall) {
        this.highWall = w;
        if (now > this.highWallMs) this.highWallMs = now;
      }
      if (!d.wait) {
        if (d.tick !== this.lastTick) this.newTick(d.tick, d.seq);
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
