/** {@link Generator}: the single-thread Snowflake generator. */
import { systemClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
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
} from './options.js';
import { LocalTicks } from './local-ticks.js';

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
export class Generator extends LocalTicks {
  readonly layout: Layout;

  // Hot-path state besides LocalTicks's: one cached BigInt per tick.
  private base = 0n;
  private baseLo = 0;
  private baseHi = 0;
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
  private nodeNow: Readonly<Record<string, number>>;

  constructor(opts: GeneratorOptions) {
    if (opts === null || typeof opts !== 'object')
      throw badOption('options', opts, 'an object such as { layout, node }');
    assertKnownOptions(opts, GENERATOR_OPTION_NAMES, 'Generator options');
    const layout = Layout.from(opts.layout);
    super(layout, resolvePolicy(opts), opts.clock ?? systemClock, opts.lease, opts.onEvent, 'ID');
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
    this.tsShift = BigInt(layout.timestampField.shift);
    this.nodeBits = nodeBits;
    const seqField = layout.sequenceField;
    this.seqMul = seqField.shift + seqField.bits <= 53 ? 2 ** seqField.shift : 0;
    this.seqShift = BigInt(seqField.shift);
    this.seqStep = 1n << this.seqShift;
    this.fastFill = LITTLE_ENDIAN && seqField.shift + seqField.bits <= 32;
    this.start(this.claimFor(this.nodeNow, nodeBits));
  }

  /** The node field values of the IDs: with a registry lease, its current claim's (which the next ID takes). */
  get node(): Readonly<Record<string, number>> {
    const claim = this.planner.claimNow();
    return claim === undefined || claim === this.planner.lease ? this.nodeNow : claim.node;
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

  /** This process's claim on `node` (one live generator per node ID). */
  private claimFor(node: Readonly<Record<string, number>>, nodeBits: bigint): NodeClaim {
    const what = `${this.layout.name} node ${JSON.stringify(node)}`;
    return claimNode(this.layout.idSpaceKey(nodeBits), what, () => this.lastTick);
  }

  protected override switchNode(node: Readonly<Record<string, number>>): NodeClaim | undefined {
    if (sameNode(node, this.nodeNow)) return undefined;
    const nodeBits = this.layout.nodeBits(node);
    const claim = this.claimFor(node, nodeBits);
    this.nodeNow = Object.freeze({ ...node });
    this.nodeBits = nodeBits;
    return claim;
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

  protected override onTick(tick: number): void {
    this.lastSeq = -2;
    const base = (BigInt(tick) << this.tsShift) | this.nodeBits;
    this.base = base;
    if (this.fastFill) {
      this.baseLo = Number(base & 0xffffffffn);
      this.baseHi = Number(base >> 32n);
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
