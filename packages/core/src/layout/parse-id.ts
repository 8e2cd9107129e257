// parseId: an ID from a decimal string, a bigint or a safe-integer number, with coded errors for anything else.
import { ErrorCode, FlurryError } from '../errors.js';
import { plural } from '../text.js';
import type { LayoutGeometry } from './types.js';

const U64_MAX = (1n << 64n) - 1n;
const DECIMAL_RE = /^[0-9]{1,20}$/;

/**
 * Parses an ID. Accepted: a bigint; a string of 1 to 20 decimal digits (no sign, spaces, dots or exponent); a
 * non-negative safe-integer number. Rejected with `FLURRY_E_ID_NEGATIVE` (below zero), `FLURRY_E_ID_TOO_WIDE` (above
 * the layout's `maxId`, or above 2^64 - 1 without a layout) or `FLURRY_E_ID_MALFORMED` (anything else, including
 * numbers above 2^53 - 1, which have already lost precision — pass a string or bigint instead).
 */
export function parseId(input: string | bigint | number, layout?: LayoutGeometry): bigint {
  let value: bigint;
  if (typeof input === 'bigint') value = input;
  else if (typeof input === 'number') {
    if (!Number.isInteger(input)) throw malformed(input, 'it is not a whole number');
    if (input < 0) throw negative(String(input));
    if (!Number.isSafeInteger(input)) {
      throw malformed(
        input,
        'it is above 2^53 - 1, so a JavaScript number has already lost its low digits; pass the ID as a string or bigint',
      );
    }
    value = BigInt(input);
  } else if (typeof input === 'string') {
    if (!DECIMAL_RE.test(input)) {
      if (/^-[0-9]+$/.test(input)) throw negative(input);
      if (/^[0-9]{21,}$/.test(input)) {
        const why = 'it has more than 20 digits (the most a 64-bit ID has)';
        throw new FlurryError(ErrorCode.ID_TOO_WIDE, `The ID ${preview(input)} is too wide: ${why}.`, {
          id: preview(input),
          digits: input.length,
        });
      }
      const why =
        input === ''
          ? 'it is empty'
          : /^\s|\s$/.test(input)
            ? 'it has leading or trailing whitespace'
            : 'it is not a string of decimal digits (no sign, spaces, dots, exponent or other bases)';
      throw malformed(input, why);
    }
    value = BigInt(input);
  } else {
    throw malformed(input, `it is a ${input === null ? 'null' : typeof input}, not a string, bigint or number`);
  }
  if (value < 0n) throw negative(value.toString());
  const max = layout ? layout.maxId : U64_MAX;
  if (value > max) {
    const bits = layout ? layout.totalBits : 64;
    throw new FlurryError(
      ErrorCode.ID_TOO_WIDE,
      `The ID ${value} is wider than ${plural(bits, 'bit')}${layout ? ` (the ${layout.name} layout)` : ''}: the largest is ${max}. Check that it was issued with this layout.`,
      { id: value.toString(), maxId: max.toString(), bits },
    );
  }
  return value;
}

function negative(text: string): FlurryError {
  return new FlurryError(ErrorCode.ID_NEGATIVE, `The ID ${preview(text)} is negative; IDs are non-negative integers.`, {
    id: preview(text),
  });
}

function malformed(input: unknown, why: string): FlurryError {
  const shown = typeof input === 'string' ? JSON.stringify(preview(input)) : String(input);
  return new FlurryError(
    ErrorCode.ID_MALFORMED,
    `The ID ${shown} is malformed: ${why}. Give a decimal integer such as 1541815603606036480.`,
    { id: typeof input === 'string' ? preview(input) : String(input) },
  );
}

function preview(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
