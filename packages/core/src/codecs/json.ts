/** JSON without precision loss: IDs travel as decimal strings (docs/layouts.md#json). */
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { MAX_FOR_BITS, checkBits, describeValue } from './alphabet.js';

/** `JSON.stringify` replacer that writes every bigint as its decimal string. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Which keys {@link jsonReviver} turns into bigints: one name, several, or a predicate. */
export type IdKeys = string | Iterable<string> | ((key: string) => boolean);

/** Options of {@link jsonReviver}. */
export interface JsonReviverOptions {
  /** The ID width in bits, 1..64 (default 64); wider values are `FLURRY_E_ID_TOO_WIDE`. */
  bits?: number;
}

const JSON_REVIVER_OPTION_NAMES = optionNames<JsonReviverOptions>({ bits: true });

/** The reviver's signature (`context.source` is passed by Node ≥ 21 and used when present). */
export type JsonReviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

const DECIMAL = /^[0-9]{1,20}$/;

/**
 * A `JSON.parse` reviver that turns the values of the chosen keys back into bigints: decimal strings, safe-integer
 * numbers, `null` (kept), and arrays of those; anything else under a chosen key (a number above 2^53 that `JSON.parse`
 * already rounded included) throws a coded `FlurryError`.
 */
export function jsonReviver(keys: IdKeys, options: JsonReviverOptions = {}): JsonReviver {
  assertKnownOptions(options, JSON_REVIVER_OPTION_NAMES, 'jsonReviver options');
  const bits = options.bits === undefined ? 64 : checkBits(options.bits);
  const max = MAX_FOR_BITS[bits];
  const set = new Set(typeof keys === 'function' ? [] : typeof keys === 'string' ? [keys] : keys);
  const isIdKey = typeof keys === 'function' ? keys : (k: string) => set.has(k);

  const convert = (key: string, value: unknown, source: string | undefined): bigint => {
    let id: bigint;
    if (typeof value === 'string' && DECIMAL.test(value)) id = BigInt(value);
    else if (typeof value === 'number' && source !== undefined && DECIMAL.test(source)) id = BigInt(source);
    else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) id = BigInt(value);
    else if (typeof value === 'number' && Number.isInteger(value) && value > Number.MAX_SAFE_INTEGER) {
      throw new FlurryError(
        ErrorCode.ID_MALFORMED,
        `JSON key "${key}" holds the number ${value}, above 2^53: JSON.parse has already rounded it, so the ID is lost. Send IDs as decimal strings (JSON.stringify(v, jsonReplacer)).`,
        { key, value: String(value) },
      );
    } else {
      throw new FlurryError(
        ErrorCode.ID_MALFORMED,
        `JSON key "${key}" must hold an ID as a decimal string of 1 to 20 digits (or a safe non-negative integer), got ${describeValue(value)}.`,
        { key, value: describeValue(value) },
      );
    }
    if (id > max) {
      throw new FlurryError(
        ErrorCode.ID_TOO_WIDE,
        `JSON key "${key}" holds ${id}, which does not fit ${bits} bits (largest ${max}).`,
        { key, value: id.toString(), bits },
      );
    }
    return id;
  };

  return function reviver(key: string, value: unknown, context?: { source?: string }): unknown {
    if (value === null || !isIdKey(key)) return value;
    if (Array.isArray(value))
      return (value as unknown[]).map((v) => (v === null || typeof v === 'bigint' ? v : convert(key, v, undefined)));
    return convert(key, value, context?.source);
  };
}

/** The JSON-safe form of `T`: bigints (and bigint arrays) become decimal strings, recursively. */
export type JsonSafe<T> = T extends bigint
  ? string
  : T extends BigInt64Array | BigUint64Array
    ? string[]
    : T extends { toJSON(): infer R }
      ? JsonSafe<R>
      : T extends readonly (infer U)[]
        ? JsonSafe<U>[]
        : T extends object
          ? { [K in keyof T]: JsonSafe<T[K]> }
          : T;

/** A deep copy with every bigint a decimal string; `toJSON()` applies; a cycle is `FLURRY_E_INVALID_OPTION`. */
export function toJSONSafe<T>(value: T): JsonSafe<T> {
  return safe(value, new Set()) as JsonSafe<T>;
}

function safe(value: unknown, active: Set<object>): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof BigUint64Array || value instanceof BigInt64Array) return Array.from(value, (v) => v.toString());
  if (active.has(value)) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      'toJSONSafe: the value contains a cycle, which JSON cannot represent; pass an acyclic value.',
      {},
    );
  }
  active.add(value);
  try {
    if ('toJSON' in value && typeof value.toJSON === 'function') return safe((value.toJSON as () => unknown)(), active);
    if (Array.isArray(value)) return value.map((v) => safe(v, active));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = safe(v, active);
    return out;
  } finally {
    active.delete(value);
  }
}
