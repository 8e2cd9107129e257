/**
 * Layout specs: reading the `--fields` form, the epoch, and validating a spec into positioned fields (the checks behind
 * every `FLURRY_E_LAYOUT_*` error). {@link Layout} builds on these.
 */
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { plural } from '../text.js';
import type { FieldSpec, LayoutField, LayoutSpec, TimeUnit } from './types.js';

/** Milliseconds per tick for each {@link TimeUnit}. */
export const UNIT_MS: Readonly<Record<TimeUnit, number>> = Object.freeze({ '1ms': 1, '10ms': 10, '1s': 1000 });

/** The largest Unix ms a JavaScript Date can hold (±8.64e15). */
const MAX_DATE_MS = 8.64e15;
/** Sequence fields are limited to 30 bits so the generator keeps them as small integers. */
const MAX_SEQUENCE_BITS = 30;
/** Node values are JavaScript numbers: at most 53 bits per node field. */
const MAX_NODE_FIELD_BITS = 53;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/;

/** The `--fields` form (`name:bits,…`) as field specs, widths and names unchecked; else `FLURRY_E_LAYOUT_SPEC`. */
export function parseFieldList(fields: string): FieldSpec[] {
  if (typeof fields !== 'string' || fields.trim() === '') {
    throw new FlurryError(
      ErrorCode.LAYOUT_SPEC,
      'The fields list is empty; write it as name:bits pairs, e.g. timestamp:41,worker:10,sequence:12.',
      { fields },
    );
  }
  return fields.split(',').map((part) => {
    const m = /^\s*([^:\s]+)\s*:\s*([+-]?\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) {
      throw new FlurryError(
        ErrorCode.LAYOUT_SPEC,
        `Cannot read the field ${JSON.stringify(part.trim())}; write each field as name:bits (e.g. worker:10), separated by commas.`,
        { field: part },
      );
    }
    return { name: m[1], bits: Number(m[2]) };
  });
}

/**
 * Validates a spec (keys, unit, epoch, names and widths, one `timestamp` and one `sequence`, duplicates, order, total
 * width, per-field limits, in that order) and positions its fields. Throws the `FLURRY_E_LAYOUT_*` error (or
 * `FLURRY_E_UNKNOWN_OPTION`) of the first problem found.
 */
export function validateLayoutSpec(spec: LayoutSpec): { fields: LayoutField[]; epochMs: number; unit: TimeUnit } {
  assertKnownOptions(spec, LAYOUT_SPEC_OPTION_NAMES, 'The layout spec');
  spec.fields.forEach((f, i) => assertKnownOptions(f, FIELD_SPEC_OPTION_NAMES, `Layout field ${i + 1}`));
  const unit = spec.unit ?? '1ms';
  if (!Object.prototype.hasOwnProperty.call(UNIT_MS, unit)) {
    throw new FlurryError(ErrorCode.LAYOUT_UNIT, `Unknown time unit ${JSON.stringify(unit)}; use 1ms, 10ms or 1s.`, {
      unit,
    });
  }
  const epochMs = parseEpoch(spec.epoch);
  const specs = spec.fields;
  if (specs.length === 0) {
    throw new FlurryError(
      ErrorCode.LAYOUT_MISSING_FIELD,
      'A layout needs a timestamp field and a sequence field; the fields list is empty.',
      {},
    );
  }
  for (const f of specs) checkFieldSpec(f);
  for (const reserved of ['timestamp', 'sequence'] as const) {
    const n = specs.filter((f) => f.name === reserved).length;
    if (n !== 1) {
      throw new FlurryError(
        ErrorCode.LAYOUT_MISSING_FIELD,
        n === 0
          ? `The layout has no ${reserved} field; add exactly one (e.g. ${reserved === 'timestamp' ? 'timestamp:41' : 'sequence:12'}).`
          : `The layout has ${n} ${reserved} fields; it needs exactly one.`,
        { field: reserved, count: n },
      );
    }
  }
  const twice = specs.find((f, i) => specs.findIndex((g) => g.name === f.name) !== i);
  if (twice !== undefined) {
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_NAME,
      `Field name ${twice.name} appears twice; every field needs its own name.`,
      { name: twice.name },
    );
  }
  if (specs.findIndex((f) => f.name === 'sequence') < specs.findIndex((f) => f.name === 'timestamp')) {
    throw new FlurryError(
      ErrorCode.LAYOUT_SPEC,
      'The sequence field comes before (is more significant than) the timestamp field, so IDs would decrease each time the sequence restarts in a new tick; list timestamp before sequence (node fields may go anywhere).',
      { fields: specs.map((f) => f.name) },
    );
  }
  const total = specs.reduce((s, f) => s + f.bits, 0);
  if (total > 64) {
    throw new FlurryError(
      ErrorCode.LAYOUT_TOO_WIDE,
      `The layout is ${specs.map((f) => `${f.bits}`).join('+')} = ${total} bits (${specs.map((f) => `${f.name} ${f.bits}`).join(', ')}), which overflows 64 bits by ${plural(total - 64, 'bit')}; narrow the fields by ${plural(total - 64, 'bit')} in total.`,
      { totalBits: total, overflowBits: total - 64 },
    );
  }
  for (const f of specs) checkFieldLimits(f, epochMs, unit);
  let shift = total;
  const fields: LayoutField[] = specs.map((f) => {
    shift -= f.bits;
    const kind = f.name === 'timestamp' ? 'timestamp' : f.name === 'sequence' ? 'sequence' : 'node';
    return { name: f.name, bits: f.bits, shift, max: 2 ** f.bits - 1, kind };
  });
  return { fields, epochMs, unit };
}

/** One field's name and width (the first checks, before the fields are compared). */
function checkFieldSpec(f: FieldSpec): void {
  if (f === null || typeof f !== 'object' || typeof f.name !== 'string' || !NAME_RE.test(f.name)) {
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_NAME,
      `Field name ${JSON.stringify(f?.name)} is not allowed; use a letter or _ followed by up to 31 letters, digits or _.`,
      { name: f?.name },
    );
  }
  if (f.name === '__proto__') {
    // A decoded ID's fields are a plain object: this name would set its prototype and vanish.
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_NAME,
      'Field name "__proto__" is not allowed: it is reserved in JavaScript objects and a decoded ID would lose it; choose another name.',
      { name: f.name },
    );
  }
  if (typeof f.bits !== 'number' || !Number.isInteger(f.bits) || f.bits < 1) {
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_WIDTH,
      `Field ${f.name} has width ${String(f.bits)}; a width must be a whole number of bits, at least 1.`,
      { field: f.name, bits: f.bits },
    );
  }
}

/** One field's width against its kind's limit: the sequence's, the timestamp's last date, a node field's. */
function checkFieldLimits(f: FieldSpec, epochMs: number, unit: TimeUnit): void {
  const unitMs = UNIT_MS[unit];
  if (f.name === 'sequence' && f.bits > MAX_SEQUENCE_BITS) {
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_WIDTH,
      `The sequence field has ${f.bits} bits; at most ${MAX_SEQUENCE_BITS} are supported (over a billion IDs per tick).`,
      { field: f.name, bits: f.bits, max: MAX_SEQUENCE_BITS },
    );
  }
  if (f.name === 'timestamp' && epochMs + 2 ** f.bits * unitMs > MAX_DATE_MS) {
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_WIDTH,
      `The timestamp field has ${f.bits} bits of ${unit}, which outlasts the largest date JavaScript can represent (year 275760); use fewer bits (41 bits of 1 ms already last 69 years).`,
      { field: f.name, bits: f.bits, unit },
    );
  }
  if (f.name !== 'timestamp' && f.name !== 'sequence' && f.bits > MAX_NODE_FIELD_BITS) {
    throw new FlurryError(
      ErrorCode.LAYOUT_FIELD_WIDTH,
      `Node field ${f.name} has ${plural(f.bits, 'bit')}; a node field holds at most ${MAX_NODE_FIELD_BITS} bits (a JavaScript safe integer).`,
      { field: f.name, bits: f.bits, max: MAX_NODE_FIELD_BITS },
    );
  }
}

/**
 * Reads an epoch (Unix ms as a number or digits, an ISO date, or a Date) into Unix ms. Throws `FLURRY_E_LAYOUT_EPOCH`
 * when it is not a whole-ms date from 1970 on, or is in the future.
 */
export function parseEpoch(epoch: unknown): number {
  let ms = typeof epoch === 'number' ? epoch : epoch instanceof Date ? epoch.getTime() : Number.NaN;
  const s = typeof epoch === 'string' ? epoch.trim() : '';
  if (/^\d+$/.test(s)) ms = Number(s);
  else if (/^\d{4}-\d{2}-\d{2}/.test(s)) ms = Date.parse(s);
  if (Number.isSafeInteger(ms) && ms < 0) {
    throw new FlurryError(
      ErrorCode.LAYOUT_EPOCH,
      `The epoch ${JSON.stringify(epoch instanceof Date ? String(epoch) : epoch)} is a valid date but before 1970 (Unix ms ${ms}); an epoch must be from 1970-01-01T00:00:00Z to now, e.g. 2024-01-01T00:00:00Z.`,
      { epoch: epoch instanceof Date ? String(epoch) : epoch, epochMs: ms, min: 0 },
    );
  }
  if (!Number.isFinite(ms) || !Number.isInteger(ms) || ms < 0) {
    throw new FlurryError(
      ErrorCode.LAYOUT_EPOCH,
      `The epoch ${JSON.stringify(epoch instanceof Date ? String(epoch) : epoch)} is not a valid date; give Unix milliseconds (e.g. 1288834974657) or an ISO date (e.g. 2024-01-01T00:00:00Z), not before 1970.`,
      { epoch: epoch instanceof Date ? String(epoch) : epoch },
    );
  }
  const now = Date.now();
  if (ms > now) {
    throw new FlurryError(
      ErrorCode.LAYOUT_EPOCH,
      `The epoch ${ms <= 8.64e15 ? new Date(ms).toISOString() : `${ms} (Unix ms)`} is in the future (now ${new Date(now).toISOString()}); IDs would carry negative times. Choose an epoch in the past, e.g. the day you deploy.`,
      { epochMs: ms, nowMs: now },
    );
  }
  return ms;
}

/** Options of `Layout.parse`. */
export interface LayoutParseOptions {
  epoch?: string | number;
  unit?: string;
  name?: string;
}

// The keys a layout spec, each of its fields and `Layout.parse` options may have: a misspelt `epoch` would silently
// move every ID's time.
const LAYOUT_SPEC_OPTION_NAMES = optionNames<LayoutSpec>({ name: true, fields: true, epoch: true, unit: true });
const FIELD_SPEC_OPTION_NAMES = optionNames<FieldSpec>({ name: true, bits: true });
export const LAYOUT_PARSE_OPTION_NAMES = optionNames<LayoutParseOptions>({ epoch: true, unit: true, name: true });
