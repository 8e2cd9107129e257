/** Generator options, events and their defaults (why these defaults: docs/clocks.md). */
import type { Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { optionNames, type OptionNames } from '../known-options.js';
import type { NodeLease } from '../lease.js';
import type { Layout } from '../layout/layout.js';
import type { PresetName } from '../layout/presets.js';
import type { LayoutSpec } from '../layout/types.js';

/** What to do when a tick's sequence runs out. */
export type ExhaustedPolicy = 'wait' | 'borrow';
/** What to do when the wall clock goes backwards. */
export type BackwardsPolicy = 'tolerate' | 'wait' | 'throw';
/** How each tick's sequence starts. */
export type SequenceStart = 'zero' | 'random';

/** Options of {@link Generator} and {@link SharedGenerator} (defaults: {@link GENERATOR_DEFAULTS}, docs/clocks.md). */
export interface GeneratorOptions {
  layout: Layout | LayoutSpec | PresetName;
  /** Node field values; required unless `lease` is given (then `lease.node` is used). */
  node?: Record<string, number>;
  /** Fencing deadline + high-water mark from a node-ID registry. */
  lease?: NodeLease;
  /** Default `systemClock`. */
  clock?: Clock;
  onExhausted?: ExhaustedPolicy;
  onClockBackwards?: BackwardsPolicy;
  maxBorrowMs?: number;
  maxBackwardsWaitMs?: number;
  highWaterWaitMs?: number;
  sequenceStart?: SequenceStart;
  /** Rare-path events (exhaustion, clock steps, high-water waits, fencing) for metrics and logs. */
  onEvent?: (e: GeneratorEvent) => void;
}

/** The keys of {@link GeneratorOptions} but `layout` and `node`: the policies every generator takes. */
export const POLICY_NAMES = {
  lease: true,
  clock: true,
  onExhausted: true,
  onClockBackwards: true,
  maxBorrowMs: true,
  maxBackwardsWaitMs: true,
  highWaterWaitMs: true,
  sequenceStart: true,
  onEvent: true,
} as const satisfies OptionNames<Omit<GeneratorOptions, 'layout' | 'node'>>;

/** The keys of {@link GeneratorOptions}: any other key is refused with `FLURRY_E_UNKNOWN_OPTION`. */
export const GENERATOR_OPTION_NAMES = optionNames<GeneratorOptions>({ layout: true, node: true, ...POLICY_NAMES });

/** Rare-path events a generator reports through `onEvent`. */
export type GeneratorEvent =
  | { type: 'exhausted'; tick: number; waitedMs: number; borrowed: boolean }
  | { type: 'clock-backwards'; byMs: number; action: 'tolerated' | 'waited' | 'threw' }
  | { type: 'high-water-wait'; waitedMs: number }
  | { type: 'fenced'; code: string };

/** Counters of a generator (per thread for a {@link SharedGenerator}). */
export interface GeneratorStats {
  issued: number;
  exhaustedWaits: number;
  clockBackwards: number;
  borrowedTicks: number;
}

/** The defaults of the numeric options. */
export const GENERATOR_DEFAULTS = Object.freeze({
  onExhausted: 'wait',
  onClockBackwards: 'tolerate',
  maxBorrowMs: 1000,
  maxBackwardsWaitMs: 5,
  highWaterWaitMs: 1000,
  sequenceStart: 'zero',
  /** How long one call waits for a wall clock that does not advance at all before `FLURRY_E_SEQUENCE_EXHAUSTED`. */
  stallLimitMs: 2000,
});

/** Options after defaults and validation (also in a shared generator's posted state). */
export type ResolvedPolicy = ReturnType<typeof resolvePolicy>;

/** Applies defaults and validates the policy options (throws `FLURRY_E_INVALID_OPTION`). */
export function resolvePolicy(opts: Omit<GeneratorOptions, 'layout'>) {
  const choice = <T extends string>(k: 'onExhausted' | 'onClockBackwards' | 'sequenceStart', allowed: readonly T[]) => {
    const v = (opts[k] ?? GENERATOR_DEFAULTS[k]) as T;
    if (!allowed.includes(v)) {
      const list = allowed.map((a) => `'${a}'`).join(', ');
      throw badOption(k, v, list.replace(/, (?=[^,]*$)/, ' or '));
    }
    return v;
  };
  const ms = (k: 'maxBorrowMs' | 'maxBackwardsWaitMs' | 'highWaterWaitMs'): number => {
    const v = opts[k];
    if (v === undefined) return GENERATOR_DEFAULTS[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 3_600_000)
      throw badOption(k, v, 'a number of milliseconds from 0 to 3600000');
    return v;
  };
  return {
    onExhausted: choice('onExhausted', ['wait', 'borrow']),
    onClockBackwards: choice('onClockBackwards', ['tolerate', 'wait', 'throw']),
    sequenceStart: choice('sequenceStart', ['zero', 'random']),
    maxBorrowMs: ms('maxBorrowMs'),
    maxBackwardsWaitMs: ms('maxBackwardsWaitMs'),
    highWaterWaitMs: ms('highWaterWaitMs'),
  };
}

/** Whether the host is little-endian (`fill` may then write an ID's two 32-bit halves). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const MAX_BATCH = 10_000_000;

/** Refuses a `batch` count that is not a whole number from 0 to MAX_BATCH. */
export function checkCount(count: number): void {
  if (!Number.isInteger(count) || count < 0 || count > MAX_BATCH)
    throw badOption('count', count, `a whole number from 0 to ${MAX_BATCH}`);
}

/** Refuses `fill` arguments: a `target` that is not `type` (`ok` false), an `offset` or `count` beyond its `room`. */
export function checkFill(
  ok: boolean,
  target: unknown,
  type: string,
  room: number,
  offset: number,
  count: number,
  unit = '',
): void {
  if (!ok) throw badOption('target', Object.prototype.toString.call(target), type);
  if (!Number.isInteger(offset) || offset < 0 || offset > room)
    throw badOption('offset', offset, `a whole number from 0 to ${room}${unit}`);
  if (!Number.isInteger(count) || count < 0 || offset + count > room)
    throw badOption('count', count, `a whole number from 0 to ${room - offset} (the room after offset ${offset})`);
}

/** The error for a bad option value. */
export function badOption(name: string, value: unknown, allowed: string): FlurryError {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new FlurryError(ErrorCode.INVALID_OPTION, `Option ${name} = ${shown} is not allowed; use ${allowed}.`, {
    option: name,
    value: shown,
  });
}
