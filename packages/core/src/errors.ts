/**
 * Coded errors: every error Flurry throws is a {@link FlurryError} with a stable `code` (`FLURRY_E_…`, never reused)
 * and a message that says what was wrong, what is allowed and what to do. Other packages build their codes on it.
 */
export class FlurryError extends Error {
  /** Stable machine-readable code, e.g. `FLURRY_E_LAYOUT_TOO_WIDE`. */
  readonly code: string;
  /** Structured facts about the failure (limits, offending values), safe to log. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FlurryError';
    this.code = code;
    this.details = details;
  }

  /** A JSON-safe view (`{ code, message, details }`); bigint values become decimal strings. */
  toJSON(): { code: string; message: string; details: Record<string, unknown> } {
    const details: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(this.details)) details[k] = typeof v === 'bigint' ? v.toString() : v;
    return { code: this.code, message: this.message, details };
  }
}

/** The codes of the core library. Other packages define theirs in their own `errors.ts`. */
export const ErrorCode = {
  /** A layout is wider than 64 bits. */
  LAYOUT_TOO_WIDE: 'FLURRY_E_LAYOUT_TOO_WIDE',
  /** A field has a zero, negative or non-integer width. */
  LAYOUT_FIELD_WIDTH: 'FLURRY_E_LAYOUT_FIELD_WIDTH',
  /** A layout lacks its timestamp or sequence field, or has more than one. */
  LAYOUT_MISSING_FIELD: 'FLURRY_E_LAYOUT_MISSING_FIELD',
  /** Two fields share a name, or a name is not an identifier. */
  LAYOUT_FIELD_NAME: 'FLURRY_E_LAYOUT_FIELD_NAME',
  /** The epoch is in the future, negative or not a date. */
  LAYOUT_EPOCH: 'FLURRY_E_LAYOUT_EPOCH',
  /** The time unit is not one of the supported units. */
  LAYOUT_UNIT: 'FLURRY_E_LAYOUT_UNIT',
  /** No preset of that name. */
  LAYOUT_UNKNOWN_PRESET: 'FLURRY_E_LAYOUT_UNKNOWN_PRESET',
  /** A `--fields` spec or layout object could not be parsed, or puts the sequence above the timestamp. */
  LAYOUT_SPEC: 'FLURRY_E_LAYOUT_SPEC',
  /** A node field value is missing, unknown or out of its field's range. */
  NODE_OUT_OF_RANGE: 'FLURRY_E_NODE_OUT_OF_RANGE',
  /** The layout's timestamp field has run out (the layout expired). */
  LAYOUT_EXPIRED: 'FLURRY_E_LAYOUT_EXPIRED',
  /** The clock went backwards further than the policy allows. */
  CLOCK_BACKWARDS: 'FLURRY_E_CLOCK_BACKWARDS',
  /** The clock is before the layout's epoch. */
  CLOCK_BEFORE_EPOCH: 'FLURRY_E_CLOCK_BEFORE_EPOCH',
  /** Sequence exhausted and borrowing/waiting beyond its bound. */
  SEQUENCE_EXHAUSTED: 'FLURRY_E_SEQUENCE_EXHAUSTED',
  /** A second live generator for the same node ID in one process. */
  NODE_IN_USE: 'FLURRY_E_NODE_IN_USE',
  /** The generator was closed. */
  GENERATOR_CLOSED: 'FLURRY_E_GENERATOR_CLOSED',
  /** The node lease's deadline has passed: issuing is fenced until it is renewed. */
  LEASE_EXPIRED: 'FLURRY_E_LEASE_EXPIRED',
  /** The clock is behind the node's recorded high-water mark by more than the wait bound. */
  CLOCK_BEHIND_HIGH_WATER: 'FLURRY_E_CLOCK_BEHIND_HIGH_WATER',
  /** A time given to turn into ID bounds (`minIdAt`, `bounds`, SQL `flurry_min_id`) is before the layout's epoch or past its end of life. */
  TIME_OUT_OF_RANGE: 'FLURRY_E_TIME_OUT_OF_RANGE',
  /** A time range asked of a layout whose node fields sit above the timestamp: its IDs do not sort by time, so a time range is not one ID interval. */
  BOUNDS_NOT_CONTIGUOUS: 'FLURRY_E_BOUNDS_NOT_CONTIGUOUS',
  /** A bad option value (a count, a policy name, a bound). */
  INVALID_OPTION: 'FLURRY_E_INVALID_OPTION',
  /** An options object has a key the function does not know (a likely misspelling); the message names the closest one. */
  UNKNOWN_OPTION: 'FLURRY_E_UNKNOWN_OPTION',
  /** An ID is negative. */
  ID_NEGATIVE: 'FLURRY_E_ID_NEGATIVE',
  /** An ID is wider than its layout. */
  ID_TOO_WIDE: 'FLURRY_E_ID_TOO_WIDE',
  /** An ID string is malformed (empty, bad characters, wrong length). */
  ID_MALFORMED: 'FLURRY_E_ID_MALFORMED',
  /** An unknown codec / format name. */
  CODEC_UNKNOWN: 'FLURRY_E_CODEC_UNKNOWN',
  /** A public ID failed its checksum. */
  PUBLIC_ID_CHECKSUM: 'FLURRY_E_PUBLIC_ID_CHECKSUM',
  /** A public ID names a key ID that is not loaded. */
  PUBLIC_ID_UNKNOWN_KEY: 'FLURRY_E_PUBLIC_ID_UNKNOWN_KEY',
  /** A public-ID key is malformed (wrong length or encoding). */
  PUBLIC_KEY_INVALID: 'FLURRY_E_PUBLIC_KEY_INVALID',
  /** A public ID is malformed (length, characters), was issued for another width, or decrypts outside the layout. */
  PUBLIC_ID_MALFORMED: 'FLURRY_E_PUBLIC_ID_MALFORMED',
  /** A public ID's authentication tag does not match the key its key ID names: a key that did not issue it (same key ID, other secret). */
  PUBLIC_ID_WRONG_KEY: 'FLURRY_E_PUBLIC_ID_WRONG_KEY',
  /** A UUID is malformed: wrong length, bad characters, misplaced dashes, over 128 bits. */
  UUID_MALFORMED: 'FLURRY_E_UUID_MALFORMED',
  /** A UUID's version nibble is not 7 (only time-ordered UUIDv7 are read). */
  UUID_VERSION: 'FLURRY_E_UUID_VERSION',
  /** A UUID's variant bits are not the RFC 9562 variant `10`. */
  UUID_VARIANT: 'FLURRY_E_UUID_VARIANT',
} as const;

/** Union of the core's error code strings. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];
