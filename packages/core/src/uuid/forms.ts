/** The forms of a UUIDv7 (docs/uuids.md), written and read strictly: fixed widths, so text order is numeric order. */
import { asciiBuffer, asciiText } from '#platform';
import { ErrorCode, FlurryError } from '../errors.js';
import { BASE58_ALPHABET, BASE62_ALPHABET, CROCKFORD_ALPHABET as B32 } from '../codecs/formats.js';
import { UuidFormat, bigintWords, wordsBigint, writeCanonical, type UuidFormatOptions } from './format.js';

/** A UUID form: a string form's name, `'bytes'` (a `Uint8Array(16)`) or `'bigint'`. */
export type UuidForm = 'canonical' | 'hex' | 'base32' | 'base58' | 'base62' | 'bytes' | 'bigint';
/** The string forms. */
export type UuidTextForm = Exclude<UuidForm, 'bytes' | 'bigint'>;
/** What the readers accept: a string of any form, 16 bytes, or a `bigint` below 2^128. */
export type UuidInput = string | Uint8Array | bigint;

const WIDTH: Record<UuidTextForm, number> = { canonical: 36, hex: 32, base32: 26, base58: 22, base62: 22 };

/** Writes a UUID's four words as 16 bytes, big-endian, at `out[at]`; here so that `flurry decode` loads no pool. */
export function writeBytes(out: Uint8Array, at: number, w0: number, w1: number, w2: number, w3: number): Uint8Array {
  put32(out, at, w0);
  put32(out, at + 4, w1);
  put32(out, at + 8, w2);
  put32(out, at + 12, w3);
  return out;
}

function put32(out: Uint8Array, at: number, w: number): void {
  out[at] = w >>> 24;
  out[at + 1] = w >>> 16;
  out[at + 2] = w >>> 8;
  out[at + 3] = w;
}

const canonicalText = asciiBuffer(36);

/** The canonical string of four words (`xxxxxxxx-xxxx-7xxx-xxxx-xxxxxxxxxxxx`, lowercase). */
export function canonicalOf(w0: number, w1: number, w2: number, w3: number): string {
  writeCanonical(canonicalText, 0, w0, w1, w2, w3);
  return asciiText(canonicalText, 0, 36);
}

/** `width` bits of the 128-bit value starting at bit `lo` (`width ≤ 25`). */
function bitsAt(w: ArrayLike<number>, lo: number, width: number): number {
  const i = 3 - (lo >>> 5);
  const off = lo & 31;
  let v = w[i] >>> off;
  if (off + width > 32) v |= w[i - 1] << (32 - off);
  return v & ((1 << width) - 1);
}

/** Crockford base32 of four words: 26 characters, the first one `0`–`7` (a ULID text). */
export function base32Of(w: ArrayLike<number>): string {
  let s = B32[w[0] >>> 29];
  for (let lo = 100; lo >= 0; lo -= 25) {
    const g = bitsAt(w, lo, 25);
    s += B32[(g >>> 20) & 31] + B32[(g >>> 15) & 31] + B32[(g >>> 10) & 31] + B32[(g >>> 5) & 31] + B32[g & 31];
  }
  return s;
}

function baseNOf(v: bigint, alphabet: string, width: number): string {
  const n = BigInt(alphabet.length);
  let s = '';
  for (let i = 0; i < width; i++) {
    s = alphabet[Number(v % n)] + s;
    v /= n;
  }
  return s;
}

/** A UUID (any of {@link UuidInput}) as `form`, after checking it is a v7 UUID. */
export function encodeUuid(x: UuidInput, form: 'bytes'): Uint8Array;
export function encodeUuid(x: UuidInput, form: 'bigint'): bigint;
export function encodeUuid(x: UuidInput, form?: UuidTextForm): string;
export function encodeUuid(x: UuidInput, form: UuidForm = 'canonical'): string | Uint8Array | bigint {
  return formOf(uuidWords(x), form);
}

// Each form's writer of four checked words, in the order the docs list the forms.
const WRITERS: Record<UuidForm, (w: ArrayLike<number>) => string | Uint8Array | bigint> = {
  canonical: (w) => canonicalOf(w[0], w[1], w[2], w[3]),
  hex: (w) => canonicalOf(w[0], w[1], w[2], w[3]).replace(/-/g, ''),
  base32: base32Of,
  base58: (w) => baseNOf(wordsBigint(w), BASE58_ALPHABET, WIDTH.base58),
  base62: (w) => baseNOf(wordsBigint(w), BASE62_ALPHABET, WIDTH.base62),
  bytes: (w) => writeBytes(new Uint8Array(16), 0, w[0], w[1], w[2], w[3]),
  bigint: wordsBigint,
};

/** Every form, in the order the docs list them. */
export const UUID_FORMS: readonly UuidForm[] = Object.freeze(Object.keys(WRITERS) as UuidForm[]);

/** Four checked words as `form` (`FLURRY_E_CODEC_UNKNOWN` for an unknown form). */
export function formOf(w: ArrayLike<number>, form: UuidForm): string | Uint8Array | bigint {
  if (Object.hasOwn(WRITERS, form)) return WRITERS[form](w);
  throw new FlurryError(
    ErrorCode.CODEC_UNKNOWN,
    `Unknown UUID form ${JSON.stringify(form)}; use one of ${UUID_FORMS.join(', ')}.`,
    { form: String(form), allowed: [...UUID_FORMS] },
  );
}

/** Options of {@link decodeUuid}: the format's widths and, for base58 or base62 (both 22 characters), the form. */
export interface DecodeUuidOptions extends UuidFormatOptions {
  /** Read the string as this form only (required for base58 and base62). */
  form?: UuidTextForm;
}

/** What {@link decodeUuid} reads from a v7 UUID. */
export interface DecodedUuid {
  /** The canonical lowercase string. */
  uuid: string;
  version: 7;
  /** Variant bits `10`. */
  variant: 'RFC 9562';
  /** `unix_ts_ms`: Unix milliseconds. */
  unixMs: number;
  /** `unixMs` as an ISO 8601 string. */
  timestamp: string;
  /** The node ID (under the format's `nodeBits`). */
  node: number;
  /** The sequence within the millisecond (under the format's `sequenceBits`). */
  sequence: number;
  /** The random fill bits. */
  random: bigint;
  nodeBits: number;
  sequenceBits: number;
}

/**
 * Reads a v7 UUID of any form into its fields under the format (`FLURRY_E_UUID_MALFORMED`, `_VERSION`, `_VARIANT`);
 * samples: docs/uuids.md#forms.
 */
export function decodeUuid(x: UuidInput, opts: DecodeUuidOptions = {}): DecodedUuid {
  const format = UuidFormat.from(opts);
  const w = uuidWords(x, opts.form);
  const f = format.fields(w);
  return {
    uuid: canonicalOf(w[0], w[1], w[2], w[3]),
    version: 7,
    variant: 'RFC 9562',
    unixMs: f.unixMs,
    timestamp: new Date(f.unixMs).toISOString(),
    node: f.node,
    sequence: f.sequence,
    random: f.random,
    nodeBits: format.nodeBits,
    sequenceBits: format.sequenceBits,
  };
}

/** Whether `x` is a v7 UUID in one of the forms (never throws). */
export function isUuidV7(x: unknown, form?: UuidTextForm): boolean {
  try {
    uuidWords(x as UuidInput, form);
    return true;
  } catch {
    return false;
  }
}

/** The four words of a v7 UUID of any form, checked (see {@link decodeUuid} for the errors). */
export function uuidWords(x: UuidInput, form?: UuidTextForm): number[] {
  let w: number[];
  if (typeof x === 'string') w = parseText(x, form);
  else if (x instanceof Uint8Array) {
    if (x.length !== 16) throw malformed(`a Uint8Array of ${x.length} bytes`, 'exactly 16 bytes');
    w = [0, 1, 2, 3].map((i) => ((x[i * 4] << 24) | (x[i * 4 + 1] << 16) | (x[i * 4 + 2] << 8) | x[i * 4 + 3]) >>> 0);
  } else if (typeof x === 'bigint') {
    if (x < 0n || x >> 128n !== 0n) throw malformed(`the bigint ${x}`, 'a bigint from 0 to 2^128 − 1');
    w = bigintWords(x);
  } else {
    throw malformed(
      `a value of type ${x === null ? 'null' : typeof x}`,
      'a string, a Uint8Array(16) or a bigint below 2^128',
    );
  }
  checkV7(w, x);
  return w;
}

function shown(x: UuidInput): string {
  if (typeof x === 'string') return JSON.stringify(x.length > 60 ? `${x.slice(0, 60)}…` : x);
  if (typeof x === 'bigint') return `the bigint ${x}`;
  return 'the 16 bytes';
}

function checkV7(w: number[], x: UuidInput): void {
  const version = (w[1] >>> 12) & 15;
  if (version !== 7) {
    throw new FlurryError(
      ErrorCode.UUID_VERSION,
      `${shown(x)} is a version ${version} UUID (the 13th hex digit, the version nibble, is ${version.toString(16)}); only version 7 (time-ordered, RFC 9562 §5.7) is read here. Pass a UUIDv7, e.g. from UuidGenerator.`,
      { version },
    );
  }
  const top = w[2] >>> 29;
  if (top >>> 1 !== 2) {
    const name = top >>> 2 === 0 ? 'NCS (0xx)' : top === 6 ? 'Microsoft (110)' : 'reserved (111)';
    throw new FlurryError(
      ErrorCode.UUID_VARIANT,
      `${shown(x)} has the ${name} variant (the 17th hex digit is ${(w[2] >>> 28).toString(16)}); a UUIDv7 has the RFC 9562 variant 10, so that digit is one of 8, 9, a, b.`,
      { variantBits: top.toString(2).padStart(3, '0') },
    );
  }
}

function malformed(what: string, allowed: string, extra: Record<string, unknown> = {}): FlurryError {
  return new FlurryError(ErrorCode.UUID_MALFORMED, `${what} is not a UUID; use ${allowed}.`, extra);
}

const HEX_RE = /^[0-9a-fA-F]{32}$/;
const CANONICAL_DASHES = [8, 13, 18, 23];

function parseText(text: string, form: UuidTextForm | undefined): number[] {
  const urn = (form ?? 'canonical') === 'canonical' && text.length === 45 && /^urn:uuid:/i.test(text);
  const s = urn ? text.slice(9) : text;
  const f = form ?? (['canonical', 'hex', 'base32'] as const).find((g) => WIDTH[g] === s.length);
  if (f === undefined || !(f in WIDTH)) {
    const lengths =
      'canonical 36 (8-4-4-4-12 hex digits), hex 32, Crockford base32 26, base58 or base62 22 with { form }';
    throw malformed(
      f === undefined ? `${JSON.stringify(text)} (${text.length} characters)` : `form ${JSON.stringify(f)}`,
      `one of the forms: ${lengths}`,
      { length: text.length },
    );
  }
  if (s.length !== WIDTH[f]) {
    throw malformed(
      `${JSON.stringify(text)} (${s.length} characters)`,
      `exactly ${WIDTH[f]} characters for the ${f} form`,
      { length: s.length, form: f },
    );
  }
  if (f === 'canonical' || f === 'hex') {
    let hex = s;
    if (f === 'canonical') {
      const bad = CANONICAL_DASHES.find((i) => s[i] !== '-');
      if (bad !== undefined)
        throw malformed(
          `${JSON.stringify(text)} (character ${bad + 1} is ${JSON.stringify(s[bad])})`,
          `the canonical 8-4-4-4-12 form with dashes at characters 9, 14, 19 and 24`,
        );
      hex = s.slice(0, 8) + s.slice(9, 13) + s.slice(14, 18) + s.slice(19, 23) + s.slice(24);
    }
    if (!HEX_RE.test(hex)) {
      const i = [...hex].findIndex((c) => !/[0-9a-fA-F]/.test(c));
      throw malformed(`${JSON.stringify(text)} (${JSON.stringify(hex[i])} is not a hex digit)`, 'hex digits 0-9, a-f');
    }
    return [0, 8, 16, 24].map((i) => parseInt(hex.slice(i, i + 8), 16));
  }
  const upper = f === 'base32' ? s.toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0') : s;
  const alphabet = f === 'base32' ? B32 : f === 'base58' ? BASE58_ALPHABET : BASE62_ALPHABET;
  const n = BigInt(alphabet.length);
  let v = 0n;
  for (let i = 0; i < upper.length; i++) {
    const d = alphabet.indexOf(upper[i]);
    if (d < 0)
      throw malformed(
        `${JSON.stringify(text)} (character ${i + 1}, ${JSON.stringify(s[i])}, is not in the ${f} alphabet)`,
        `characters of ${alphabet}`,
      );
    v = v * n + BigInt(d);
  }
  if (v >> 128n !== 0n)
    throw malformed(
      `${JSON.stringify(text)} (its value exceeds 128 bits)`,
      f === 'base32' ? 'a first character from 0 to 7' : `a ${f} text below 2^128`,
    );
  return bigintWords(v);
}
