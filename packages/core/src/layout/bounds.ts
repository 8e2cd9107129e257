// Time to ID bounds: the smallest and largest ID of an instant, and the half-open ID interval of a time range.
import { ErrorCode, FlurryError } from '../errors.js';
import type { LayoutGeometry } from './types.js';

/** A half-open ID interval: an ID carries a time in `[fromMs, toMs)` exactly when `min <= id < maxExclusive`. */
export interface IdBounds {
  /** The smallest ID carrying a time at or after `fromMs`. */
  readonly min: bigint;
  /** One past the largest ID carrying a time before `toMs` (`maxIdAt(toMs - unit) + 1`); may be `2^totalBits`. */
  readonly maxExclusive: bigint;
  /** The first instant inside and the first outside (`fromMs` and `toMs` rounded down to the unit). */
  readonly fromMs: number;
  readonly toMs: number;
}

/** The life of a layout, for a message: `<epoch> (Unix ms …, the epoch) up to, not including, <end of life> (…)`. */
export function describeRange(layout: LayoutGeometry): string {
  return `${new Date(layout.epochMs).toISOString()} (Unix ms ${layout.epochMs}, the epoch) up to, not including, ${layout.expiresAt.toISOString()} (Unix ms ${layout.expiresAt.getTime()}, its end of life)`;
}

function checkedTick(layout: LayoutGeometry, unixMs: number, what: string, allowEnd: boolean): number {
  if (typeof unixMs !== 'number' || !Number.isFinite(unixMs)) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `${what} must be a finite number of Unix milliseconds (or a Date), got ${String(unixMs)}.`,
      { [what]: String(unixMs) },
    );
  }
  const tick = layout.tickOf(unixMs);
  const limit = allowEnd ? layout.maxTick + 1 : layout.maxTick;
  if (tick < 0 || tick > limit) {
    const when = Number.isFinite(new Date(unixMs).getTime()) ? new Date(unixMs).toISOString() : String(unixMs);
    throw new FlurryError(
      ErrorCode.TIME_OUT_OF_RANGE,
      `${what} ${when} (Unix ms ${unixMs}) is ${tick < 0 ? "before the layout's epoch" : "past the layout's end of life"}; the ${layout.name} layout holds times from ${describeRange(layout)}${allowEnd ? ' (the end of a range may equal the end of life)' : ''}. Give a time in that range.`,
      { [what]: unixMs, epochMs: layout.epochMs, expiresAtMs: layout.expiresAt.getTime(), layout: layout.name },
    );
  }
  return tick;
}

function toMs(t: number | Date): number {
  return t instanceof Date ? t.getTime() : t;
}

/** Every bit of the layout that is not a timestamp bit: node fields and sequence, wherever they sit. */
export function nonTimeMask(layout: LayoutGeometry): bigint {
  const ts = layout.timestampField;
  return layout.maxId & ~(((1n << BigInt(ts.bits)) - 1n) << BigInt(ts.shift));
}

/**
 * The smallest ID a layout can give the instant `unixMs` (rounded down to the unit): its tick in the timestamp field,
 * every other field zero. Throws `FLURRY_E_TIME_OUT_OF_RANGE` before the epoch or at/after the end of life.
 */
export function minIdAt(layout: LayoutGeometry, unixMs: number | Date): bigint {
  const tick = checkedTick(layout, toMs(unixMs), 'unixMs', false);
  return BigInt(tick) << BigInt(layout.timestampField.shift);
}

/** The largest ID a layout can give the instant `unixMs`: as {@link minIdAt}, every other field all ones. */
export function maxIdAt(layout: LayoutGeometry, unixMs: number | Date): bigint {
  return minIdAt(layout, unixMs) | nonTimeMask(layout);
}

/**
 * The half-open interval `[minIdAt(fromMs), minIdAt(toMs))` of the IDs whose time is in `[fromMs, toMs)`, both rounded
 * down to the unit; `toMs` may equal the end of life (`2^totalBits`). `FLURRY_E_TIME_OUT_OF_RANGE`,
 * `FLURRY_E_INVALID_OPTION` (`toMs < fromMs`), `FLURRY_E_BOUNDS_NOT_CONTIGUOUS`: docs/layouts.md#time-to-id-bounds.
 */
export function idBounds(layout: LayoutGeometry, fromMs: number | Date, toMsArg: number | Date): IdBounds {
  const from = toMs(fromMs);
  const to = toMs(toMsArg);
  if (layout.fields[0].kind !== 'timestamp') {
    const above = layout.fields.slice(0, layout.fields.indexOf(layout.timestampField)).map((f) => f.name);
    throw new FlurryError(
      ErrorCode.BOUNDS_NOT_CONTIGUOUS,
      `The ${layout.name} layout puts ${above.join(', ')} above the timestamp, so its IDs do not sort by time and a time range is not one ID interval; use minIdAt/maxIdAt per value of ${above.join(', ')}, or a layout with the timestamp as its top field.`,
      { layout: layout.name, fieldsAbove: above },
    );
  }
  const fromTick = checkedTick(layout, from, 'fromMs', false);
  const toTick = checkedTick(layout, to, 'toMs', true);
  if (toTick < fromTick) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `The range ends (${new Date(to).toISOString()}) before it starts (${new Date(from).toISOString()}); give from <= to.`,
      { fromMs: from, toMs: to },
    );
  }
  const shift = BigInt(layout.timestampField.shift);
  return Object.freeze({
    min: BigInt(fromTick) << shift,
    maxExclusive: BigInt(toTick) << shift,
    fromMs: layout.epochMs + fromTick * layout.unitMs,
    toMs: layout.epochMs + toTick * layout.unitMs,
  });
}

/**
 * Reads a time as the CLI and the HTTP API take it: Unix ms (digits, optionally negative) or an ISO 8601 date
 * (`2026-11-01`, `2026-11-01T12:00:00Z`; without a zone, UTC). Else `FLURRY_E_INVALID_OPTION` naming `what`.
 */
export function parseTime(text: string, what: string): number {
  const s = typeof text === 'string' ? text.trim() : '';
  let ms = Number.NaN;
  if (/^-?\d{1,16}$/.test(s)) ms = Number(s);
  else {
    const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/.exec(s);
    if (m) ms = Date.parse(m[2] === undefined ? m[1] : `${m[1]}T${m[2]}${m[3] ?? 'Z'}`);
  }
  if (!Number.isSafeInteger(ms)) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `${what} = ${JSON.stringify(String(text).slice(0, 40))} is not a time; give Unix milliseconds (e.g. 1793491200000) or an ISO 8601 date (e.g. 2026-11-01 or 2026-11-01T00:00:00Z).`,
      { [what]: String(text).slice(0, 40) },
    );
  }
  return ms;
}
