/**
 * Formatted serials (`sequences.serial(key, { format, reset, timeZone })`): each period of the reset (day, month,
 * year) is its own key `KEY:STAMP`, created on first use; the previous period's sequence is retired.
 */
import { periodOf, periodStamp, renderSerial, type ResetPeriod, type SerialFormat } from './format.js';
import type { Clock } from '@flurry/core';
import type { Sequence } from './sequence.js';

/**
 * What a {@link Serial} needs from the `Sequences` that made it: the clock that picks the period, a period's
 * sequence (created on first use) and the retiring of the previous period's one.
 */
export interface SerialOwner {
  readonly clock: Clock;
  sequenceWithCreate(key: string, create: { start: bigint; step: number } | undefined): Sequence;
  retire(seq: Sequence): void;
}

/** The options of `Sequences.serial`. */
export interface SerialOptions {
  format: string;
  /** Default `day`. */
  reset?: ResetPeriod;
  /** An IANA zone (default `UTC`). */
  timeZone?: string;
  /** The stored step of each period's key (default the sequences' `defaultStep`). */
  step?: number;
  /** The first number of each period (default 1). */
  start?: number | bigint;
}

/**
 * A formatted serial (see `format.ts`): each period its own key `KEY:STAMP`, created on first use.
 *
 * @example
 * ```ts
 * const orders = sequences.serial('order', { format: 'ORD-{yyyyMMdd}-{seq:08}', reset: 'day', timeZone: 'Asia/Shanghai' });
 * await orders.next(); // 'ORD-20261123-00000001'
 * ```
 */
export class Serial {
  private current: { stamp: string; seq: Sequence } | undefined;

  /** @internal */
  constructor(
    readonly key: string,
    readonly format: SerialFormat,
    readonly timeZone: string,
    private readonly owner: SerialOwner,
    private readonly create: { start: bigint; step: number },
  ) {}

  /**
   * The next serial: a string while buffered, a promise when it must wait. The period is read from the clock
   * once, so the date printed and the period's counter always agree.
   */
  next(): string | Promise<string> {
    const p = periodOf(this.owner.clock.now(), this.timeZone);
    const stamp = periodStamp(p, this.format.reset);
    const seq = this.sequenceFor(stamp);
    const v = seq.tryNextBigInt();
    if (v !== undefined) return renderSerial(this.format, p, v);
    return Promise.resolve(seq.nextBigInt()).then((n) => renderSerial(this.format, p, n));
  }

  /** The key of the period that `unixMs` falls in (`order:20261123`). */
  keyAt(unixMs: number): string {
    const stamp = periodStamp(periodOf(unixMs, this.timeZone), this.format.reset);
    return stamp ? `${this.key}:${stamp}` : this.key;
  }

  private sequenceFor(stamp: string): Sequence {
    if (this.current && this.current.stamp === stamp) return this.current.seq;
    const key = stamp ? `${this.key}:${stamp}` : this.key;
    const previous = this.current;
    const seq = this.owner.sequenceWithCreate(key, this.create);
    this.current = { stamp, seq };
    // The previous period is over (or the clock stepped back into it: its own sequence keeps serving then).
    if (previous && previous.stamp < stamp) this.owner.retire(previous.seq);
    return seq;
  }
}
