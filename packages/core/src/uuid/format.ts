// UuidFormat: Flurry's fields inside a UUIDv7 (bit by bit in docs/uuids.md); a UUID is four 32-bit words, most
// significant first.
import { ErrorCode, FlurryError } from '../errors.js';

/** A UUID format's widths; every generator and reader of one cluster must use the same. */
export interface UuidFormatOptions {
  /** Width of the node ID in `rand_b`: 1 to 48, default 16 (65,536 node IDs). */
  nodeBits?: number;
  /** Width of the per-millisecond sequence: 12 (only `rand_a`) to 42, default 22 (4,194,304 UUIDs per ms and node). */
  sequenceBits?: number;
}

/** The default widths: a 16-bit node and a 22-bit sequence, leaving 36 random bits. */
export const UUID_DEFAULTS = Object.freeze({ nodeBits: 16, sequenceBits: 22 });

/** Bits of `rand_a`, the high part of the sequence. */
const RAND_A_BITS = 12;
/** The most sequence bits taken from `rand_b` (so they fit the word below the variant). */
const MAX_EXT_BITS = 30;
/** The most node bits (a node ID stays an exact number). */
const MAX_NODE_BITS = 48;
const TWO16 = 65536;

/** 48-bit `unix_ts_ms`: the last millisecond a UUIDv7 can hold (year 10889). */
export const MAX_UNIX_MS = 2 ** 48 - 1;

/** A validated format: the field widths and the constants that place them. */
export class UuidFormat {
  readonly nodeBits: number;
  readonly sequenceBits: number;
  /** Sequence bits in `rand_b` (`sequenceBits − 12`). */
  readonly extBits: number;
  /** Random fill bits at the low end of `rand_b` (`62 − extBits − nodeBits`). */
  readonly randomBits: number;
  readonly maxNode: number;
  readonly maxSequence: number;
  /** `2^extBits`: the sequence is `rand_a × extSize + ext`. */
  readonly extSize: number;
  /** Multiplier of `ext` inside word 2 (`2^(30 − extBits)`). */
  readonly extMul: number;

  private constructor(nodeBits: number, sequenceBits: number) {
    this.nodeBits = nodeBits;
    this.sequenceBits = sequenceBits;
    this.extBits = sequenceBits - RAND_A_BITS;
    this.randomBits = 62 - this.extBits - nodeBits;
    this.maxNode = 2 ** nodeBits - 1;
    this.maxSequence = 2 ** sequenceBits - 1;
    this.extSize = 2 ** this.extBits;
    this.extMul = 2 ** (MAX_EXT_BITS - this.extBits);
  }

  /** Validates the widths (`FLURRY_E_INVALID_OPTION` naming the allowed range). */
  static from(opts: UuidFormatOptions = {}): UuidFormat {
    const nodeBits = opts.nodeBits ?? UUID_DEFAULTS.nodeBits;
    if (!Number.isInteger(nodeBits) || nodeBits < 1 || nodeBits > MAX_NODE_BITS) {
      throw formatError('nodeBits', nodeBits, `a whole number from 1 to ${MAX_NODE_BITS}`);
    }
    const maxSeq = RAND_A_BITS + Math.min(MAX_EXT_BITS, 62 - nodeBits);
    const sequenceBits = opts.sequenceBits ?? Math.min(UUID_DEFAULTS.sequenceBits, maxSeq);
    if (!Number.isInteger(sequenceBits) || sequenceBits < RAND_A_BITS || sequenceBits > maxSeq) {
      throw formatError(
        'sequenceBits',
        sequenceBits,
        `a whole number from ${RAND_A_BITS} to ${maxSeq} (12 in rand_a, the rest beside the ${nodeBits}-bit node in the 62 bits of rand_b)`,
      );
    }
    return new UuidFormat(nodeBits, sequenceBits);
  }

  /** The node ID's contribution to words 2 and 3 (`[hi, lo]`), or `FLURRY_E_NODE_OUT_OF_RANGE`. */
  nodeWords(node: number): [number, number] {
    if (typeof node !== 'number' || !Number.isInteger(node) || node < 0 || node > this.maxNode) {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `UUID node = ${String(node)} is out of range; with nodeBits = ${this.nodeBits} it must be a whole number from 0 to ${this.maxNode}. Pass another node or a wider nodeBits (every generator and reader of the cluster must agree on it).`,
        { node: String(node), nodeBits: this.nodeBits, max: this.maxNode },
      );
    }
    const v = BigInt(node) << BigInt(this.randomBits);
    return [Number(v >> 32n), Number(v & 0xffffffffn)];
  }

  /** Splits a UUID's words into its fields (the caller has checked version and variant). */
  fields(w: ArrayLike<number>): { unixMs: number; sequence: number; node: number; random: bigint } {
    const unixMs = w[0] * TWO16 + (w[1] >>> 16);
    const sequence = (w[1] & 0xfff) * this.extSize + Math.floor((w[2] & 0x3fffffff) / this.extMul);
    const lo = (BigInt(w[2] & 0x3fffffff) << 32n) | BigInt(w[3]);
    const r = BigInt(this.randomBits);
    return { unixMs, sequence, node: Number((lo >> r) & BigInt(this.maxNode)), random: lo & ((1n << r) - 1n) };
  }
}

/** Words 0 and 1 of a UUID of millisecond `ms` before the sequence's `rand_a` part: timestamp and version 7. */
export function tickWords(ms: number): [number, number] {
  const hi = Math.floor(ms / TWO16);
  return [hi, (ms - hi * TWO16) * TWO16 + 0x7000];
}

/** The four words of a 128-bit value (`0 ≤ v < 2^128`). */
export function bigintWords(v: bigint): number[] {
  return [96n, 64n, 32n, 0n].map((shift) => Number((v >> shift) & 0xffffffffn));
}

/** The 128-bit value of four words. */
export function wordsBigint(w: ArrayLike<number>): bigint {
  return (BigInt(w[0]) << 96n) | (BigInt(w[1]) << 64n) | (BigInt(w[2]) << 32n) | BigInt(w[3]);
}

/** Two lowercase hex digits of each byte. */
export const HEX2: readonly string[] = Array.from({ length: 256 }, (_, i) => (i < 16 ? '0' : '') + i.toString(16));

/** The ASCII codes of {@link HEX2}: byte `b`'s two hex digits at `2b` and `2b + 1`. */
const HEX_CODES = Uint8Array.from(HEX2.join(''), (ch) => ch.charCodeAt(0));

/** Writes the 36 ASCII characters of a UUID's canonical form at `b[at]`. */
export function writeCanonical(b: Uint8Array, at: number, w0: number, w1: number, w2: number, w3: number): void {
  const c = HEX_CODES;
  const put = (i: number, byte: number) => {
    b[i] = c[byte * 2];
    b[i + 1] = c[byte * 2 + 1];
  };
  put(at, w0 >>> 24);
  put(at + 2, (w0 >>> 16) & 255);
  put(at + 4, (w0 >>> 8) & 255);
  put(at + 6, w0 & 255);
  b[at + 8] = 45;
  put(at + 9, w1 >>> 24);
  put(at + 11, (w1 >>> 16) & 255);
  b[at + 13] = 45;
  put(at + 14, (w1 >>> 8) & 255);
  put(at + 16, w1 & 255);
  b[at + 18] = 45;
  put(at + 19, w2 >>> 24);
  put(at + 21, (w2 >>> 16) & 255);
  b[at + 23] = 45;
  put(at + 24, (w2 >>> 8) & 255);
  put(at + 26, w2 & 255);
  put(at + 28, w3 >>> 24);
  put(at + 30, (w3 >>> 16) & 255);
  put(at + 32, (w3 >>> 8) & 255);
  put(at + 34, w3 & 255);
}

function formatError(name: string, value: unknown, allowed: string): FlurryError {
  const v = String(value);
  return new FlurryError(ErrorCode.INVALID_OPTION, `Option ${name} = ${v} is not allowed; use ${allowed}.`, {
    option: name,
    value: v,
  });
}

// The smallest and largest UUIDv7 of a Unix millisecond, for range scans (docs/sql.md, "UUIDv7 columns").
function hexMs(ms: number, what: string): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_UNIX_MS) {
    throw new FlurryError(
      ErrorCode.TIME_OUT_OF_RANGE,
      `${what} (Unix ms ${String(ms)}) is outside what a UUIDv7 holds: whole Unix ms from 0 to ${MAX_UNIX_MS} (1970-01-01T00:00:00.000Z to 10889-08-02T05:31:50.655Z). Give a time in that range.`,
      { value: String(ms), min: 0, max: MAX_UNIX_MS },
    );
  }
  const h = ms.toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}`;
}

/** The smallest UUIDv7 of the Unix millisecond `ms`, canonical (`FLURRY_E_TIME_OUT_OF_RANGE` outside 0 … 2^48 − 1). */
export function uuidMinAt(ms: number, what = 'the time'): string {
  return `${hexMs(ms, what)}-7000-8000-000000000000`;
}

/** The largest UUIDv7 of the Unix millisecond `ms`, canonical (`FLURRY_E_TIME_OUT_OF_RANGE` outside 0 … 2^48 − 1). */
export function uuidMaxAt(ms: number, what = 'the time'): string {
  return `${hexMs(ms, what)}-7fff-bfff-ffffffffffff`;
}
