import type { Layout } from '../layout/layout.js';
import { LITTLE_ENDIAN, checkFill, type GeneratorStats } from './options.js';

/** Where a generator's values come from: runs of one tick's sequence values (`LocalTicks`, `SharedTicks`). */
export interface TickRuns {
  /** Reserves the next value (a shared source wins a run for up to `want`), calling `onTick` at a new tick; returns its sequence. */
  advance(want: number): number;
  /** Reserves up to `more` further values of the same tick; returns the last sequence reserved. */
  take(more: number): number;
  readonly lastIssuedUnixMs: number;
  readonly stats: GeneratorStats;
  close(): void;
}

/** The IDs of one tick of a node for both generators: sequence 0's (`tick | node`) and how a sequence value adds. */
export class TickIds {
  private base = 0n;
  /** The 32-bit halves of {@link base} (set only when {@link mul} is). */
  private lo = 0;
  private hi = 0;
  /** The last ID {@link next} returned and its sequence (-2 after a new tick), so the next is one addition. */
  private lastId = 0n;
  private lastSeq = -2;
  private readonly step: bigint;
  private readonly shift: bigint;
  private readonly tsShift: bigint;
  /** `2^sequenceShift` when the sequence lies in the low 32 bits on a little-endian host (`fill` writes halves), else 0. */
  private readonly mul: number;

  constructor(
    layout: Layout,
    public nodeBits: bigint,
  ) {
    const seq = layout.sequenceField;
    this.shift = BigInt(seq.shift);
    this.step = 1n << this.shift;
    this.tsShift = BigInt(layout.timestampField.shift);
    this.mul = LITTLE_ENDIAN && seq.shift + seq.bits <= 32 ? 2 ** seq.shift : 0;
  }

  /** Makes `tick` the one {@link id} composes. */
  setTick(tick: number): void {
    const base = (BigInt(tick) << this.tsShift) | this.nodeBits;
    this.base = base;
    this.lastSeq = -2;
    if (this.mul !== 0) {
      this.lo = Number(base & 0xffffffffn);
      this.hi = Number(base >> 32n);
    }
  }

  /** The ID of sequence `seq` in the current tick. */
  id(seq: number): bigint {
    return this.base | (BigInt(seq) << this.shift);
  }

  /** {@link id} for a generator's `next()`: the previous ID plus one step when `seq` follows its sequence. */
  next(seq: number): bigint {
    if (seq === this.lastSeq + 1) {
      this.lastSeq = seq;
      return (this.lastId += this.step);
    }
    this.lastSeq = seq;
    return (this.lastId = this.id(seq));
  }

  /** Refuses bad `fill` arguments, then writes `count` increasing IDs from `runs` into `target` from `offset`. */
  fill(runs: TickRuns, target: BigUint64Array, offset: number, count: number): number {
    checkFill(target instanceof BigUint64Array, target, 'a BigUint64Array', target.length, offset, count);
    const mul = this.mul;
    const words = mul !== 0 ? new Uint32Array(target.buffer, target.byteOffset + offset * 8, count * 2) : undefined;
    for (let i = 0; i < count;) {
      const first = runs.advance(count - i);
      const last = runs.take(count - i - 1);
      if (words !== undefined) {
        const lo = this.lo;
        const hi = this.hi;
        for (let s = first, j = i * 2; s <= last; s++) {
          words[j++] = lo + s * mul;
          words[j++] = hi;
        }
      } else {
        for (let s = first, k = offset + i; s <= last; s++) target[k++] = this.id(s);
      }
      i += last - first + 1;
    }
    return count;
  }
}
