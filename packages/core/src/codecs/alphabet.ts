// Numeral systems over an alphabet on 64-bit integers held as two 32-bit halves in doubles: long division stays
// exact (below 2^38) and is several times faster than `bigint` division.
import { ErrorCode, FlurryError } from '../errors.js';
import { plural } from '../text.js';

export const TWO32 = 4294967296;

const scratch = new DataView(new ArrayBuffer(8));
const halves = new Float64Array(2);

/** Splits a (range-checked) bigint in [0, 2^64) into `out[0]` = high and `out[1]` = low 32-bit halves. */
export function splitU64(value: bigint, out: Float64Array): void {
  if (value <= 0x1fffffffffffffn) {
    const n = Number(value);
    out[0] = Math.floor(n / TWO32);
    out[1] = n - out[0] * TWO32;
    return;
  }
  scratch.setBigUint64(0, value);
  out[0] = scratch.getUint32(0);
  out[1] = scratch.getUint32(4);
}

/** Joins two 32-bit halves (each an integer in [0, 2^32)) into a bigint. */
export function joinU64(hi: number, lo: number): bigint {
  if (hi < 0x200000) return BigInt(hi * TWO32 + lo);
  scratch.setUint32(0, hi);
  scratch.setUint32(4, lo);
  return scratch.getBigUint64(0);
}

/** Whether hi·2^32 + lo < 2^bits. */
export function fitsBits(hi: number, lo: number, bits: number): boolean {
  if (hi >= TWO32) return false;
  if (bits >= 64) return true;
  return bits > 32 ? hi < 2 ** (bits - 32) : hi === 0 && lo < 2 ** bits;
}

/** `MAX_FOR_BITS[b] = 2^b - 1` for b in 0..64. */
export const MAX_FOR_BITS: readonly bigint[] = Array.from({ length: 65 }, (_, b) => (1n << BigInt(b)) - 1n);

/** Checks a width option: an integer in 1..64. */
export function checkBits(bits: unknown): number {
  if (typeof bits !== 'number' || !Number.isInteger(bits) || bits < 1 || bits > 64) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `bits must be an integer from 1 to 64 (the ID width in bits), got ${describeValue(bits)}; pass a layout's totalBits or omit it for 64.`,
      { option: 'bits', value: describeValue(bits), min: 1, max: 64 },
    );
  }
  return bits;
}

/** A short, printable description of any value for an error message (strings quoted, cut at 40 characters). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value);
  return `a ${typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value}`;
}

/** Options of {@link Alphabet}. */
export interface AlphabetOptions {
  /** Extra characters accepted on decoding, mapped to the character they stand for (e.g. Crockford's `I` → `1`). */
  aliases?: Record<string, string>;
  /** Accept lower- and upper-case forms of every letter on decoding. */
  caseInsensitive?: boolean;
}

/** A radix-`chars.length` numeral system; characters ascend so that equal-length strings sort like their numbers. */
export class Alphabet {
  /** The format name of error messages; the digits from value 0 up; their count. */
  readonly name: string;
  readonly chars: string;
  readonly radix: number;
  /** `fixedLengths[b]`: characters needed for every value of width `b` (0..64). */
  readonly fixedLengths: Uint8Array;
  /** Digit value of each character code < 128 (aliases and case folding included), or -1. */
  readonly values: Int8Array;
  /** The digit pairs of one encoding, most significant last. */
  private readonly buf = new Uint16Array(40);
  private readonly radix2: number;
  /** `pairs[v]`: the two digits of v in [0, radix²), made at the first encoding (decoding never pays for them). */
  private pairs: string[] | undefined;
  /** `zeros[k]`: k zero digits. */
  private readonly zeros: string[];
  /** Most digits whose value always fits a double exactly (radix^fastDigits ≤ 2^53). */
  readonly fastDigits: number;
  /** `powers[k]` = radix^k for k ≤ 8. */
  private readonly powers: number[];
  /** The radix whose `bigint.toString(radix)` digits equal this alphabet (10, 16), else 0. */
  private readonly nativeRadix: number;

  constructor(name: string, chars: string, options: AlphabetOptions = {}) {
    this.name = name;
    this.chars = chars;
    this.radix = chars.length;
    this.values = new Int8Array(128).fill(-1);
    for (let i = 0; i < chars.length; i++) {
      const forms = options.caseInsensitive ? [chars[i].toLowerCase(), chars[i].toUpperCase()] : [chars[i]];
      for (const ch of forms) this.values[ch.charCodeAt(0)] = i;
    }
    for (const [alias, target] of Object.entries(options.aliases ?? {}))
      this.values[alias.charCodeAt(0)] = this.values[target.charCodeAt(0)];
    const r = BigInt(this.radix);
    this.fixedLengths = Uint8Array.from({ length: 65 }, (_, b) => {
      let len = 1;
      for (let cap = r; cap <= MAX_FOR_BITS[b]; cap *= r) len++;
      return len;
    });
    this.radix2 = this.radix * this.radix;
    this.zeros = Array.from({ length: 66 }, (_, k) => chars[0].repeat(k));
    let fast = 1;
    while (this.radix ** (fast + 1) <= 2 ** 53) fast++;
    this.fastDigits = fast;
    this.powers = Array.from({ length: 9 }, (_, k) => this.radix ** k);
    if (this.fixedLengths[64] - fast > 8) throw new RangeError(`alphabet ${name}: radix too small`);
    const native = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, this.radix);
    this.nativeRadix = this.radix <= 36 && chars === native ? this.radix : 0;
  }

  /**
   * Encodes `hi·2^32 + lo`, left-padded with zero digits to `width` (0: shortest). Two digits at a time (by radix²,
   * from precomputed pairs): string concatenation, not arithmetic, dominates the cost of short strings.
   */
  encode(hi: number, lo: number, width: number): string {
    const r2 = this.radix2;
    const buf = this.buf;
    let n = 0;
    // Long division while the value is at least 2^52 (keeps every floor(x / r2) exact).
    while (hi >= 0x100000) {
      const qh = Math.floor(hi / r2);
      const t = (hi - qh * r2) * TWO32 + lo;
      const ql = Math.floor(t / r2);
      buf[n++] = t - ql * r2;
      hi = qh;
      lo = ql;
    }
    let v = hi * TWO32 + lo;
    do {
      const q = Math.floor(v / r2);
      buf[n++] = v - q * r2;
      v = q;
    } while (v > 0);
    const top = buf[n - 1];
    const single = top < this.radix;
    const digits = 2 * n - (single ? 1 : 0);
    const pairs = this.pairs ?? this.makePairs();
    let out =
      width > digits
        ? this.zeros[width - digits] + (single ? this.chars[top] : pairs[top])
        : single
          ? this.chars[top]
          : pairs[top];
    for (let i = n - 2; i >= 0; i--) out += pairs[buf[i]];
    return out;
  }

  private makePairs(): string[] {
    return (this.pairs = [...this.chars].flatMap((hi) => [...this.chars].map((lo) => hi + lo)));
  }

  /** Encodes a bigint in [0, 2^64) (already range-checked by the caller). */
  encodeBigInt(value: bigint, width: number): string {
    if (this.nativeRadix !== 0) {
      // V8's own bigint formatting is faster than ours for its native digit sets.
      const s = value.toString(this.nativeRadix);
      return s.length < width ? this.zeros[width - s.length] + s : s;
    }
    splitU64(value, halves);
    return this.encode(halves[0], halves[1], width);
  }

  /**
   * Decodes `text` into `out` as `[hi, lo]`, checking the characters, the length (`exactLength` > 0: exactly that many)
   * and that the value fits `bits` bits; coded errors name the offending character and its 1-based position.
   */
  decode(text: unknown, bits: number, exactLength: number, out: Float64Array): void {
    if (typeof text !== 'string') {
      throw new FlurryError(ErrorCode.ID_MALFORMED, `A ${this.name} ID must be a string, got ${describeValue(text)}.`, {
        format: this.name,
      });
    }
    const len = text.length;
    const maxLen = this.fixedLengths[bits];
    if (len === 0) {
      throw new FlurryError(
        ErrorCode.ID_MALFORMED,
        `The ${this.name} ID is empty; expected 1 to ${maxLen} characters from the ${this.name} digits "${this.chars}".`,
        { format: this.name, length: 0, maxLength: maxLen },
      );
    }
    if (exactLength > 0 && len !== exactLength) {
      throw new FlurryError(
        ErrorCode.ID_MALFORMED,
        `The ${this.name} ID ${describeValue(text)} is ${plural(len, 'character')} long; its fixed-width form for ${bits}-bit IDs is exactly ${exactLength} characters. Check for a truncated or padded copy.`,
        { format: this.name, length: len, expectedLength: exactLength, bits },
      );
    }
    if (len > maxLen) {
      throw new FlurryError(
        ErrorCode.ID_TOO_WIDE,
        `The ${this.name} ID ${describeValue(text)} is ${plural(len, 'character')} long; a ${bits}-bit ID takes at most ${maxLen} ${this.name} characters.`,
        { format: this.name, length: len, maxLength: maxLen, bits },
      );
    }
    const radix = this.radix;
    const values = this.values;
    // The first `fastDigits` digits accumulate exactly in one double (radix^fastDigits ≤ 2^53).
    const head = len < this.fastDigits ? len : this.fastDigits;
    let v = 0;
    for (let i = 0; i < head; i++) {
      const c = text.charCodeAt(i);
      const d = c < 128 ? values[c] : -1;
      if (d < 0) throw this.badChar(text, i);
      v = v * radix + d;
    }
    let hi = Math.floor(v / TWO32);
    let lo = v - hi * TWO32;
    if (len > head) {
      // At most a few more digits (len ≤ fixedLengths[bits]); multiply in as w < radix^rest ≤ 2^21.
      let w = 0;
      for (let i = head; i < len; i++) {
        const c = text.charCodeAt(i);
        const d = c < 128 ? values[c] : -1;
        if (d < 0) throw this.badChar(text, i);
        w = w * radix + d;
      }
      const m = this.powers[len - head];
      const x = lo * m + w;
      const carry = Math.floor(x / TWO32);
      lo = x - carry * TWO32;
      hi = hi * m + carry;
    }
    if (!fitsBits(hi, lo, bits)) throw this.tooWide(text, bits);
    out[0] = hi;
    out[1] = lo;
  }

  private badChar(text: string, index: number): FlurryError {
    const cp = text.codePointAt(index) ?? 0;
    const ch = String.fromCodePoint(cp);
    // Printable ASCII quoted, anything else as its code point (`U+00A0`).
    const shown = cp > 0x20 && cp < 0x7f ? `'${ch}'` : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    return new FlurryError(
      ErrorCode.ID_MALFORMED,
      `The ${this.name} ID ${describeValue(text)} has the invalid character ${shown} at position ${index + 1} of ${text.length}; allowed are the ${this.name} digits "${this.chars}".`,
      { format: this.name, char: ch, position: index + 1, length: text.length },
    );
  }

  private tooWide(text: string, bits: number): FlurryError {
    return new FlurryError(
      ErrorCode.ID_TOO_WIDE,
      `The ${this.name} ID ${describeValue(text)} is larger than the largest ${bits}-bit value (${MAX_FOR_BITS[bits]}); check the format and the layout width.`,
      { format: this.name, bits, max: MAX_FOR_BITS[bits] },
    );
  }
}
