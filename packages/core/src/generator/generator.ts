/** {@link Generator}: the single-thread Snowflake generator. */
import { systemClock, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import type { NodeLease } from '../lease.js';
import { Layout } from '../layout/layout.js';
import { claimNode, type NodeClaim } from '#claims';
import { assertKnownOptions } from '../known-options.js';
import {
  GENERATOR_OPTION_NAMES,
  LITTLE_ENDIAN,
  badOption,
  checkCount,
  checkFill,
  resolvePolicy,
  type GeneratorOptions,
  type GeneratorStats,
} from './options.js';
import { STUCK_ROUNDS, TickPlanner } from './tick-planner.js';

/**
 * Issues unique, strictly increasing IDs for one node of a layout, in one thread.
 *
 * Each ID is `tick | node | sequence` in the layout's positions; the sequence counts IDs within a tick and never
 * wraps. Exhaustion waits or borrows ticks (`onExhausted`), a clock stepped back is tolerated, waited out or
 * refused (`onClockBackwards`), never with a repeated or smaller ID (docs/clocks.md). With a `lease` it follows
 * {@link NodeLease}'s contract (fencing deadlines, `notBeforeMs`, following a new claim). One live generator per
 * node ID in a process (`FLURRY_E_NODE_IN_USE`); {@link SharedGenerator} issues one node's IDs from several threads.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(Date.UTC(2025, 0, 1));
 * const gen = new Generator({ layout: 'leaf', node: { worker: 3 }, clock, onExhausted: 'borrow' });
 * const ids = gen.batch(10_000); // strictly increasing
 * gen.close();
 * ```
 */
export class Generator {
  readonly layout: Layout;

  // Hot-path state: small integers and one cached BigInt per tick.
  private lastTick: number;
  private seq: number;
  private base = 0n;
  private baseLo = 0;
  private baseHi = 0;
  private highWall = Number.NEGATIVE_INFINITY;
  private highWallMs = Number.NEGATIVE_INFINITY;
  private issued = 0;
  private started = false;
  private closed = false;
  private finalTick = Number.NEGATIVE_INFINITY;

  private readonly clock: Clock;
  private readonly lease: NodeLease | undefined;
  private readonly planner: TickPlanner;
  private readonly epochMs: number;
  private readonly unitMs: number;
  private readonly maxSeq: number;
  private readonly maxTick: number;
  private readonly tsShift: bigint;
  private nodeBits: bigint;
  /** `2^sequenceShift` when `sequence × seqMul` stays an exact number (shift + bits ≤ 53), else 0. */
  private readonly seqMul: number;
  private readonly seqShift: bigint;
  /** One sequence step in ID units: `2^sequenceShift`. */
  private readonly seqStep: bigint;
  /** The last ID `next()` returned and its sequence number, both of the current tick (`lastSeq` is -2 after a tick change). */
  private lastId = 0n;
  private lastSeq = -2;
  /** Whether `fill` may write 32-bit halves (sequence inside the low word, little-endian host). */
  private readonly fastFill: boolean;
  private claim: NodeClaim;
  private nodeNow: Readonly<Record<string, number>>;

  constructor(opts: GeneratorOptions) {
    if (opts === null || typeof opts !== 'object')
      throw badOption('options', opts, 'an object such as { layout, node }');
    assertKnownOptions(opts, GENERATOR_OPTION_NAMES, 'Generator options');
    const layout = Layout.from(opts.layout);
    const lease = opts.lease;
    const policy = resolvePolicy(opts);
    this.clock = opts.clock ?? systemClock;
    this.planner = new TickPlanner(layout, policy, this.clock, lease, opts.onEvent, (c) => this.follow(c));
    const claim = this.planner.lease;
    if (claim && opts.node && !sameNode(opts.node, claim.node)) {
      throw badOption(
        'node',
        JSON.stringify(opts.node),
        `the lease's node ${JSON.stringify(claim.node)} or no node (a lease grants exactly one node ID)`,
      );
    }
    const node = opts.node ?? claim?.node;
    if (node === undefined) {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `A generator needs its node ID: pass node (${describeNodeFields(layout)}) or a registry lease.`,
        {},
      );
    }
    const nodeBits = layout.nodeBits(node);
    this.layout = layout;
    this.nodeNow = Object.freeze({ ...node });
    this.lease = lease;
    this.epochMs = layout.epochMs;
    this.unitMs = layout.unitMs;
    this.maxSeq = layout.maxSequence;
    this.maxTick = layout.maxTick;
    this.tsShift = BigInt(layout.timestampField.shift);
    this.nodeBits = nodeBits;
    const seqField = layout.sequenceField;
    this.seqMul = seqField.shift + seqField.bits <= 53 ? 2 ** seqField.shift : 0;
    this.seqShift = BigInt(seqField.shift);
    this.seqStep = 1n << this.seqShift;
    this.fastFill = LITTLE_ENDIAN && seqField.shift + seqField.bits <= 32;
    this.claim = this.claimFor(this.nodeNow, nodeBits);
    // Start so that the first ID's tick is after the lease floor and after a previous
    // holder of this node ID in this process: (floor - 1, maxSeq) is "used up".
    this.lastTick = Math.max(-1, this.planner.floorTick - 1, this.claim.previousTick);
    this.seq = this.maxSeq;
    this.planner.attach(this.claim, () => this.lastIssuedUnixMs);
  }

  /** The node field values of the IDs: with a registry lease, its current claim's (which the next ID takes). */
  get node(): Readonly<Record<string, number>> {
    const claim = this.planner.claimNow();
    return claim === undefined || claim === this.planner.lease ? this.nodeNow : claim.node;
  }

  /**
   * Unix ms of the highest tick issued (borrowed ticks included): the high-water mark a
   * registry records. Before the first ID: the lease's `notBeforeMs` (or 0 without one).
   */
  get lastIssuedUnixMs(): number {
    const tick = this.closed ? this.finalTick : this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    if (!Number.isFinite(tick)) return this.planner.lease?.notBeforeMs ?? 0;
    return this.epochMs + tick * this.unitMs;
  }

  /** Counters: IDs issued, waits for the next tick, clock steps back seen, borrowed ticks. */
  get stats(): GeneratorStats {
    return this.planner.stats(this.issued);
  }

  /** The next ID. */
  next(): bigint {
    const now = this.clock.now();
    if (this.lease !== undefined) this.planner.checkDeadline(now);
    const unit = this.unitMs;
    const w = unit === 1 ? Math.floor(now - this.epochMs) : Math.floor((now - this.epochMs) / unit);
    if (w <= this.lastTick && this.seq < this.maxSeq && w >= this.highWall) {
      // Common case: the next sequence number of the current tick. When the previous ID of
      // this tick came from next() too, it is that ID plus one sequence step (one bigint
      // operation instead of two); `lastSeq` is reset whenever the tick (the base) changes.
      const s = ++this.seq;
      this.issued++;
      if (s === this.lastSeq + 1) {
        this.lastSeq = s;
        return (this.lastId += this.seqStep);
      }
    } else {
      if (w > this.lastTick) this.fresh(w, now);
      else this.slow(now);
      this.issued++;
    }
    this.lastSeq = this.seq;
    return (this.lastId = this.compose());
  }

  /** The next ID as a decimal string (JSON-safe). */
  nextString(): string {
    return this.next().toString();
  }

  /** `count` IDs in increasing order. */
  batch(count: number): bigint[] {
    checkCount(count);
    const target = new BigUint64Array(count);
    this.fill(target, 0, count);
    return Array.from(target);
  }

  /** `count` IDs as decimal strings, in increasing order. */
  batchStrings(count: number): string[] {
    checkCount(count);
    const target = new BigUint64Array(count);
    this.fill(target, 0, count);
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) out[i] = target[i].toString();
    return out;
  }

  /**
   * Writes `count` increasing IDs into `target` from `offset` (default: to the end) and
   * returns `count`. Reads the clock once per tick, not once per ID.
   */
  fill(target: BigUint64Array, offset = 0, count: number = target.length - offset): number {
    checkFill(target instanceof BigUint64Array, target, 'a BigUint64Array', target.length, offset, count);
    if (count === 0) return 0;
    if (this.lease !== undefined) this.planner.checkDeadline(this.clock.now());
    // `issued` counts what was written even when a step throws partway (those IDs are used).
    if (!this.fastFill) {
      let k = 0;
      try {
        for (; k < count; k++) {
          this.step();
          target[offset + k] = this.compose();
        }
      } finally {
        this.issued += k;
      }
      return count;
    }
    const words = new Uint32Array(target.buffer, target.byteOffset + offset * 8, count * 2);
    const mul = this.seqMul;
    const maxSeq = this.maxSeq;
    let i = 0;
    try {
      while (i < count) {
        this.step();
        const lo = this.baseLo;
        const hi = this.baseHi;
        let s = this.seq;
        const end = Math.min(maxSeq, s + (count - i - 1));
        let j = i * 2;
        for (; s <= end; s++) {
          words[j++] = lo + s * mul;
          words[j++] = hi;
        }
        i = j >> 1;
        this.seq = end;
      }
    } finally {
      this.issued += i;
    }
    return count;
  }

  /**
   * Stops issuing and frees the node ID for another generator in this process (which
   * then starts after this one's last tick). Idempotent; later calls throw
   * `FLURRY_E_GENERATOR_CLOSED`.
   */
  close(): void {
    if (this.closed) return;
    this.finalTick = this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    this.closed = true;
    // Route every later call to the slow path, which throws GENERATOR_CLOSED.
    this.lastTick = Number.POSITIVE_INFINITY;
    this.seq = this.maxSeq;
    this.claim.release(this.finalTick);
  }

  /** This process's claim on `node` (one live generator per node ID). */
  private claimFor(node: Readonly<Record<string, number>>, nodeBits: bigint): NodeClaim {
    const what = `${this.layout.name} node ${JSON.stringify(node)}`;
    return claimNode(this.layout.idSpaceKey(nodeBits), what, () => this.lastTick);
  }

  /** Takes a new claim of the lease (see `TickPlanner.checkDeadline`): its node, and a new tick for the next ID. */
  private follow(claim: NodeLease): number | undefined {
    if (this.closed) return undefined;
    const floorMs = this.lastIssuedUnixMs;
    if (!sameNode(claim.node, this.nodeNow)) {
      const node = Object.freeze({ ...claim.node });
      const nodeBits = this.layout.nodeBits(node);
      const next = this.claimFor(node, nodeBits);
      this.claim.release(this.started ? this.lastTick : Number.NEGATIVE_INFINITY);
      this.claim = next;
      this.nodeNow = node;
      this.nodeBits = nodeBits;
      this.lastTick = Math.max(this.lastTick, next.previousTick);
    }
    this.seq = this.maxSeq;
    return floorMs;
  }

  /**
   * Reserves the next (tick, seq) into this.lastTick / this.seq. Common cases inline: a
   * new wall tick, or one more sequence value in the current logical tick (the wall's,
   * or one borrowed ahead of it) while the wall clock has not stepped back below the
   * highest tick it showed (`highWall`, which only the slow path and new ticks raise).
   */
  private step(): void {
    const now = this.clock.now();
    const w = Math.floor((now - this.epochMs) / this.unitMs);
    if (w > this.lastTick) this.fresh(w, now);
    else if (this.seq < this.maxSeq && w >= this.highWall) this.seq++;
    else this.slow(now);
  }

  /** The wall clock moved to a new tick `w` beyond the last one. */
  private fresh(w: number, now: number): void {
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

  private setTick(tick: number, seq: number): void {
    this.lastTick = tick;
    this.seq = seq;
    this.lastSeq = -2;
    this.started = true;
    const base = (BigInt(tick) << this.tsShift) | this.nodeBits;
    this.base = base;
    if (this.fastFill) {
      this.baseLo = Number(base & 0xffffffffn);
      this.baseHi = Number(base >> 32n);
    }
  }

  /** Everything but the common case: clock steps, exhaustion, floors, expiry, closed. */
  private slow(now: number): void {
    if (this.closed) {
      throw new FlurryError(
        ErrorCode.GENERATOR_CLOSED,
        'This generator was closed; create a new one (it will continue after the last ID issued).',
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

  private compose(): bigint {
    const mul = this.seqMul;
    return mul !== 0 ? this.base + BigInt(this.seq * mul) : this.base | (BigInt(this.seq) << this.seqShift);
  }
}

function sameNode(a: Record<string, number>, b: Readonly<Record<string, number>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

function describeNodeFields(layout: Layout): string {
  return layout.nodeFields.length
    ? layout.nodeFields.map((f) => `${f.name} 0..${f.max}`).join(', ')
    : '{} for this layout';
}
