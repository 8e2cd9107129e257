// String forms of an ID: numeral systems (not byte encodings) whose alphabets ascend in ASCII order, so fixed-width
// strings sort like the IDs. The table of alphabets and widths: docs/layouts.md.
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { Alphabet, MAX_FOR_BITS, TWO32, checkBits, describeValue, joinU64, type AlphabetOptions } from './alphabet.js';

/** The name of a string form of an ID (the CLI's `--format`). */
export type IdFormat = 'decimal' | 'hex' | 'base32' | 'base58' | 'base62' | 'base64url';

/** Options of {@link encodeId}, {@link decodeId} and an {@link IdCodec}. */
export interface EncodeOptions {
  /** Fixed width for `bits`-bit IDs (strings sort like IDs): encoding pads to it, decoding requires it; default off. */
  fixed?: boolean;
  /** The ID width in bits, 1..64 (default 64; pass `layout.totalBits`): wider IDs are `FLURRY_E_ID_TOO_WIDE`. */
  bits?: number;
}

/** Options of {@link decodeId}: the same as {@link EncodeOptions}. */
export type DecodeOptions = EncodeOptions;

const CODEC_OPTION_NAMES = optionNames<EncodeOptions>({ fixed: true, bits: true });

/** One string form of IDs. */
export interface IdCodec {
  readonly name: IdFormat;
  /** The digits, from value 0 upwards (ascending ASCII), and their count. */
  readonly alphabet: string;
  readonly radix: number;
  /** One line for help texts. */
  readonly description: string;
  /** Encodes a non-negative integer ID of at most `bits` bits. */
  encode(id: bigint | number, options?: EncodeOptions): string;
  /** Decodes back to a bigint; coded errors for bad characters, empty input, overflow, wrong fixed length. */
  decode(text: string, options?: DecodeOptions): bigint;
  /** Characters of the fixed-width form of `bits`-bit IDs (default 64). */
  fixedLength(bits?: number): number;
}

const halves = new Float64Array(2);

function badId(id: unknown): FlurryError {
  return new FlurryError(
    ErrorCode.ID_MALFORMED,
    `An ID to encode must be a non-negative integer bigint (or a safe integer number), got ${describeValue(id)}; parse strings with decodeId or parseId first.`,
    { value: describeValue(id) },
  );
}

function negative(id: bigint | number): FlurryError {
  return new FlurryError(
    ErrorCode.ID_NEGATIVE,
    `An ID cannot be negative, got ${id}; IDs are unsigned integers from 0 to 2^bits - 1.`,
    { value: String(id) },
  );
}

function tooWide(id: bigint | number, bits: number): FlurryError {
  return new FlurryError(
    ErrorCode.ID_TOO_WIDE,
    `The ID ${id} does not fit ${bits} bits (largest ${MAX_FOR_BITS[bits]}); pass bits: layout.totalBits of the layout that issued it.`,
    { value: String(id), bits, max: MAX_FOR_BITS[bits] },
  );
}

/** A codec whose digit tables are built on first use (a CLI run does not pay for all six at load). */
function makeCodec(name: IdFormat, chars: string, description: string, options?: AlphabetOptions): IdCodec {
  let built: Alphabet | undefined;
  const table = (): Alphabet => (built ??= new Alphabet(name, chars, options));
  const codec: IdCodec = {
    name,
    alphabet: chars,
    radix: chars.length,
    description,
    encode(id: bigint | number, options?: EncodeOptions): string {
      if (options !== undefined) assertKnownOptions(options, CODEC_OPTION_NAMES, `${name} encode options`);
      const bits = options?.bits === undefined ? 64 : checkBits(options.bits);
      const alphabet = table();
      const width = options?.fixed ? alphabet.fixedLengths[bits] : 0;
      if (typeof id === 'bigint') {
        if (id < 0n) throw negative(id);
        if (id > MAX_FOR_BITS[bits]) throw tooWide(id, bits);
        return alphabet.encodeBigInt(id, width);
      }
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw badId(id);
      if (id < 0) throw negative(id);
      if (bits < 53 && id > 2 ** bits - 1) throw tooWide(id, bits);
      return alphabet.encode(Math.floor(id / TWO32), id % TWO32, width);
    },
    decode(text: string, options?: DecodeOptions): bigint {
      if (options !== undefined) assertKnownOptions(options, CODEC_OPTION_NAMES, `${name} decode options`);
      const bits = options?.bits === undefined ? 64 : checkBits(options.bits);
      const alphabet = table();
      alphabet.decode(text, bits, options?.fixed ? alphabet.fixedLengths[bits] : 0, halves);
      return joinU64(halves[0], halves[1]);
    },
    fixedLength(bits = 64): number {
      return table().fixedLengths[checkBits(bits)];
    },
  };
  return Object.freeze(codec);
}

/** Crockford's base32 digits (no I, L, O, U), in ascending ASCII order. */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Bitcoin's base58 digits (no 0, O, I, l), in ascending ASCII order. */
export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** base62 digits `0-9A-Za-z`, in ascending ASCII order. */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The RFC 4648 URL-safe base64 characters in ascending ASCII order, so fixed-width strings sort like the numbers. */
export const SORTABLE_BASE64URL_ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

/** The codecs by format name. */
export const codecs: Readonly<Record<IdFormat, IdCodec>> = Object.freeze({
  decimal: makeCodec('decimal', '0123456789', 'decimal digits (20 fixed for 64 bits)'),
  hex: makeCodec('hex', '0123456789abcdef', 'lower-case hexadecimal (16 fixed for 64 bits)', { caseInsensitive: true }),
  base32: makeCodec('base32', CROCKFORD_ALPHABET, 'Crockford base32, upper case (13 fixed for 64 bits)', {
    caseInsensitive: true,
    aliases: { I: '1', i: '1', L: '1', l: '1', O: '0', o: '0' },
  }),
  base58: makeCodec('base58', BASE58_ALPHABET, 'Bitcoin base58 (11 fixed for 64 bits)'),
  base62: makeCodec('base62', BASE62_ALPHABET, 'base62 0-9A-Za-z (11 fixed for 64 bits)'),
  base64url: makeCodec(
    'base64url',
    SORTABLE_BASE64URL_ALPHABET,
    'URL-safe base64 characters in sortable order -0-9A-Z_a-z, numeric, not RFC byte encoding (11 fixed for 64 bits)',
  ),
});

/** Every format name, in the order the CLI lists them (`--format decimal|hex|…`). */
export const FORMATS: readonly IdFormat[] = Object.freeze(Object.keys(codecs) as IdFormat[]);

/** True when `name` is one of {@link FORMATS}. */
export function isIdFormat(name: unknown): name is IdFormat {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(codecs, name);
}

/** The codec of a format name; `FLURRY_E_CODEC_UNKNOWN` for anything else. */
export function getCodec(format: string): IdCodec {
  if (!isIdFormat(format)) {
    throw new FlurryError(
      ErrorCode.CODEC_UNKNOWN,
      `Unknown ID format ${describeValue(format)}; use one of ${FORMATS.join(', ')}.`,
      { format: describeValue(format), allowed: [...FORMATS] },
    );
  }
  return codecs[format];
}

/** Encodes an ID in a format; `fixed: true` pads to the width of `bits`-bit IDs, so the strings sort like the IDs. */
export function encodeId(id: bigint | number, format: IdFormat | (string & {}), options?: EncodeOptions): string {
  return getCodec(format).encode(id, options);
}

/**
 * Decodes a string form of an ID: `FLURRY_E_ID_MALFORMED` (a bad character named with its position, a wrong fixed
 * length), `FLURRY_E_ID_TOO_WIDE` (over `bits`), `FLURRY_E_CODEC_UNKNOWN`.
 */
export function decodeId(text: string, format: IdFormat | (string & {}), options?: DecodeOptions): bigint {
  return getCodec(format).decode(text, options);
}
