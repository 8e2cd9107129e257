/**
 * Public IDs: what to show the world instead of a Snowflake ID. A raw ID reveals its
 * creation time, node and per-millisecond volume, and consecutive IDs let a crawler walk
 * your URLs; a public ID is the ID under a keyed permutation of the layout's N-bit space
 * (see `feistel.ts`), written as a fixed-width URL-safe string (format 2):
 *
 * ```
 *   K  PPPPPPPPPPP  TTT  C     e.g. "K7cuyYGf9Ydxv7Tb" (64 bits, base62: 16 characters)
 *   │  │            │    └ check character over everything before it (detects any 1
 *   │  │            │      changed character and any swap of 2 adjacent ones)
 *   │  │            └ authentication tag: a keyed MAC (Chaskey-12) of the format version,
 *   │  │              alphabet, width N, key ID and encrypted value, 3 digits (1 in 238,328
 *   │  │              for base62, 1 in 195,112 for base58 that a wrong key passes)
 *   │  └ the encrypted ID, fixed-width base62 (or base58): ⌈N / log2(radix)⌉ digits
 *   └ key ID (selects the key on decoding; rotation keeps old links working)
 * ```
 *
 * Decoding returns a wrong ID only when the tag matches by chance: wrong length, a bad
 * character, a failed check character, an unknown key ID, an encrypted value outside
 * [0, 2^N) and a decrypted ID above `maxId` are always coded errors, but a different key
 * under the same key ID, and a string made for another width N of the same length (60–64
 * bits in base62: a narrower value, 63 → 64 or 60 → 63, always fits the wider codec), are
 * refused by the tag alone, with probability 1 − 1/radix³ (1 in 238,328 base62 strings
 * decodes to a wrong ID). Use one width per key ID. See docs/public-ids.md for the tag.
 *
 * @example
 * ```ts
 * import { PublicIdCodec, generateKey } from '@flurry/core';
 * const codec = PublicIdCodec.create({ keys: process.env.FLURRY_PUBLIC_KEY ?? generateKey(), bits: 63 });
 * const pub = codec.encode(1859214170478923776n); // e.g. 'K2pnIbuJmnt4yFHG'
 * codec.decode(pub);                              // 1859214170478923776n
 * ```
 */
import { hkdfSync } from 'node:crypto';
import { Alphabet, MAX_FOR_BITS, TWO32, checkBits, describeValue, joinU64, splitU64 } from '../codecs/alphabet.js';
import { BASE58_ALPHABET, BASE62_ALPHABET } from '../codecs/formats.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { plural } from '../text.js';
import { ChaskeyBlockMac } from './chaskey.js';
import { DihedralCheck } from './checksum.js';
import { FeistelPermutation } from './feistel.js';
import { PublicIdKey, parseKeys } from './keys.js';

/**
 * The version of the public-ID string form. Format 2 added the authentication tag; format 1
 * (key ID, encrypted ID, check character) was never released and is not read. The version
 * is not a character of the string: it is bound into the tag, and the formats differ in
 * length.
 *
 * @example
 * ```ts
 * PUBLIC_ID_FORMAT_VERSION; // 2
 * ```
 */
export const PUBLIC_ID_FORMAT_VERSION = 2;

/**
 * Characters of the authentication tag of every public-ID string. A string checked with a
 * key that did not issue it passes with probability 1/radix³: 1/238,328 (base62),
 * 1/195,112 (base58).
 *
 * @example
 * ```ts
 * PUBLIC_ID_TAG_LENGTH; // 3
 * ```
 */
export const PUBLIC_ID_TAG_LENGTH = 3;

/** HKDF salt and info of the tag key: apart from the Feistel round keys (salt `flurry/public-id/v1`). */
const TAG_SALT = 'flurry/public-id/v2';
const TAG_INFO = 'tag;chaskey12';
/** "FTAG" as a little-endian word: the fourth word of every tag block. */
const TAG_DOMAIN = 0x47415446;
/** 2^21: the high 21 bits of word 1 of the MAC are dropped to keep the tag input at 53 bits. */
const TAG_SHIFT = 11;

/**
 * The alphabet of public-ID strings.
 *
 * @example
 * ```ts
 * PublicIdCodec.create({ keys, alphabet: 'base58' satisfies PublicIdAlphabet });
 * ```
 */
export type PublicIdAlphabet = 'base62' | 'base58';

/**
 * Options of {@link PublicIdCodec.create}.
 *
 * @example
 * ```ts
 * const opts: PublicIdOptions = { keys: process.env.FLURRY_PUBLIC_KEY ?? '', bits: 63, alphabet: 'base62', checksum: true };
 * ```
 */
export interface PublicIdOptions {
  /** The keyring: `fk1_…` strings (comma-separated allowed) or key objects; the first key encodes, all decode. */
  keys: string | PublicIdKey | readonly (string | PublicIdKey)[];
  /** Width N of the ID space in bits, 1..64 (default 64). Pass `layout.totalBits`. */
  bits?: number;
  /** Largest valid ID (default 2^bits − 1); larger IDs are refused on encoding and on decoding. */
  maxId?: bigint;
  /** String alphabet (default `base62`; `base58` avoids look-alike characters). */
  alphabet?: PublicIdAlphabet;
  /** Append a check character (default true). Without it, typos are still refused (by the tag), but reported as a wrong key. */
  checksum?: boolean;
}

/** The keys of {@link PublicIdOptions}. @example `PUBLIC_ID_OPTION_NAMES.includes('checksum') // true` */
export const PUBLIC_ID_OPTION_NAMES = optionNames<PublicIdOptions>({
  keys: true,
  bits: true,
  maxId: true,
  alphabet: true,
  checksum: true,
});

const ALPHABETS: Record<PublicIdAlphabet, string> = { base62: BASE62_ALPHABET, base58: BASE58_ALPHABET };

/** The digit system and the check-character tables of each alphabet, built once (a few hundred µs each) and shared: both are immutable after construction. */
const TABLES = new Map<PublicIdAlphabet, { digits: Alphabet; check: DihedralCheck }>();
function tables(alphabet: PublicIdAlphabet): { digits: Alphabet; check: DihedralCheck } {
  let t = TABLES.get(alphabet);
  if (t === undefined) {
    const chars = ALPHABETS[alphabet];
    t = {
      digits: new Alphabet(`${alphabet} public ID`, chars, {
        malformedCode: ErrorCode.PUBLIC_ID_MALFORMED,
        tooWideCode: ErrorCode.PUBLIC_ID_MALFORMED,
      }),
      check: new DihedralCheck(chars),
    };
    TABLES.set(alphabet, t);
  }
  return t;
}

interface Entry {
  key: PublicIdKey;
  perm: FeistelPermutation;
  mac: ChaskeyBlockMac;
  /** The key ID's character code (< 128) and its digit value in the alphabet. */
  keyCode: number;
  keyDigit: number;
}

/**
 * Encrypts IDs to public IDs and back. Create one per process (deriving the round and tag
 * keys costs a few HKDF calls) and reuse it; every method is synchronous and
 * allocation-light.
 *
 * @example
 * ```ts
 * const codec = PublicIdCodec.create({ keys: ['fk1_B_…', 'fk1_A_…'] }); // B current, A still decodes
 * codec.encrypt(42n);          // a 64-bit bigint
 * codec.decrypt(codec.encrypt(42n)); // 42n
 * codec.encode(42n);           // 'B…' (16 characters)
 * codec.decode(codec.encode(42n)); // 42n
 * ```
 */
export class PublicIdCodec {
  /** Width N of the ID space. */
  readonly bits: number;
  /** Largest accepted ID. */
  readonly maxId: bigint;
  /** The string alphabet. */
  readonly alphabet: PublicIdAlphabet;
  /** Whether strings carry a check character. */
  readonly checksum: boolean;
  /** Length of every public-ID string: 1 (key ID) + payload + 3 (tag) + 1 (check, when on). */
  readonly length: number;
  /** Length of the encrypted-ID part. */
  readonly payloadLength: number;
  /** Length of the authentication tag ({@link PUBLIC_ID_TAG_LENGTH}). */
  readonly tagLength: number = PUBLIC_ID_TAG_LENGTH;
  /** Key IDs of the keyring, current first. */
  readonly keyIds: readonly string[];
  /** The key ID used for encoding. */
  readonly currentKeyId: string;

  private readonly digits: Alphabet;
  private readonly check: DihedralCheck | null;
  private readonly radix: number;
  /** radix³, the number of tag values. */
  private readonly tagSpace: number;
  /** Digits that accumulate exactly in one double (radix^k ≤ 2^53). */
  private readonly fastDigits: number;
  /** Digit value of each character code < 128, or -1. */
  private readonly values: Int8Array;
  /** Character code of each digit value. */
  private readonly codes: Uint16Array;
  /** Digit values of the string being built or parsed. */
  private readonly work: Uint8Array;
  /** Character codes of the string being built (plain array, for `String.fromCharCode(...)`). */
  private readonly textCodes: number[];
  /** Other widths whose strings have the same payload length (for telling a width mix-up from a wrong key). */
  private readonly sameLengthWidths: readonly number[];
  // #private so that no inspection (even util.inspect with customInspect: false) reaches key material.
  readonly #current: Entry;
  readonly #byId = new Map<string, Entry>();
  /** Entries by key-ID character code. */
  readonly #byCode: (Entry | undefined)[] = new Array<Entry | undefined>(128).fill(undefined);
  private readonly halves = new Float64Array(2);

  private constructor(options: PublicIdOptions) {
    if (options === null || typeof options !== 'object') {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        'PublicIdCodec.create needs an options object with at least { keys }.',
        {},
      );
    }
    assertKnownOptions(options, PUBLIC_ID_OPTION_NAMES, 'PublicIdCodec options');
    this.bits = options.bits === undefined ? 64 : checkBits(options.bits, 'bits');
    const widest = MAX_FOR_BITS[this.bits];
    if (
      options.maxId !== undefined &&
      (typeof options.maxId !== 'bigint' || options.maxId < 0n || options.maxId > widest)
    ) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `maxId must be a bigint from 0 to ${widest} (2^${this.bits} - 1), got ${describeValue(options.maxId)}.`,
        {
          option: 'maxId',
        },
      );
    }
    this.maxId = options.maxId ?? widest;
    const alphabet = options.alphabet ?? 'base62';
    if (alphabet !== 'base62' && alphabet !== 'base58') {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `alphabet must be "base62" or "base58", got ${describeValue(alphabet)}.`,
        { option: 'alphabet' },
      );
    }
    if (options.checksum !== undefined && typeof options.checksum !== 'boolean') {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `checksum must be true or false, got ${describeValue(options.checksum)}.`,
        { option: 'checksum' },
      );
    }
    this.alphabet = alphabet;
    this.checksum = options.checksum ?? true;
    const chars = ALPHABETS[alphabet];
    const shared = tables(alphabet);
    this.digits = shared.digits;
    this.check = this.checksum ? shared.check : null;
    this.radix = chars.length;
    this.tagSpace = this.radix ** PUBLIC_ID_TAG_LENGTH;
    let fast = 1;
    while (this.radix ** (fast + 1) <= 2 ** 53) fast++;
    this.fastDigits = fast;
    this.values = new Int8Array(128).fill(-1);
    this.codes = new Uint16Array(this.radix);
    for (let i = 0; i < this.radix; i++) {
      this.values[chars.charCodeAt(i)] = i;
      this.codes[i] = chars.charCodeAt(i);
    }
    this.payloadLength = this.digits.fixedLengths[this.bits];
    this.length = 1 + this.payloadLength + PUBLIC_ID_TAG_LENGTH + (this.checksum ? 1 : 0);
    this.work = new Uint8Array(this.length);
    this.textCodes = new Array<number>(this.length).fill(0);
    const same: number[] = [];
    for (let w = 1; w <= 64; w++)
      if (w !== this.bits && this.digits.fixedLengths[w] === this.payloadLength) same.push(w);
    this.sameLengthWidths = Object.freeze(same);
    const keys = parseKeys(options.keys);
    for (const key of keys) {
      const secret = key.secretBytes();
      const tagKey = new Uint8Array(hkdfSync('sha256', secret, TAG_SALT, TAG_INFO, 16));
      const dv = new DataView(tagKey.buffer, tagKey.byteOffset, tagKey.byteLength);
      const entry: Entry = {
        key,
        perm: FeistelPermutation.fromSecret(secret, this.bits),
        mac: new ChaskeyBlockMac(Uint32Array.from({ length: 4 }, (_, i) => dv.getUint32(4 * i, true))),
        keyCode: key.id.charCodeAt(0),
        keyDigit: this.values[key.id.charCodeAt(0)],
      };
      secret.fill(0);
      tagKey.fill(0);
      this.#byId.set(key.id, entry);
      this.#byCode[entry.keyCode] = entry;
    }
    this.keyIds = Object.freeze(keys.map((k) => k.id));
    this.currentKeyId = keys[0].id;
    this.#current = this.#byId.get(this.currentKeyId) as Entry;
  }

  /**
   * Builds a codec. Errors: `FLURRY_E_PUBLIC_KEY_INVALID` (malformed or empty keyring,
   * duplicate key IDs), `FLURRY_E_INVALID_OPTION`.
   *
   * @example
   * ```ts
   * PublicIdCodec.create({ keys: loadKeysFromEnv(), bits: layout.totalBits, alphabet: 'base58' });
   * ```
   */
  static create(options: PublicIdOptions): PublicIdCodec {
    return new PublicIdCodec(options);
  }

  /**
   * The encrypted value of an ID (another integer in [0, 2^bits)), with the current key or
   * the key `keyId`. `FLURRY_E_ID_NEGATIVE`/`FLURRY_E_ID_TOO_WIDE` for IDs out of range.
   * The bare integer carries no tag: prefer {@link encode}/{@link decode}.
   *
   * @example
   * ```ts
   * codec.encrypt(1n); // e.g. 13804395120393203587n
   * ```
   */
  encrypt(id: bigint, keyId?: string): bigint {
    this.split(id, this.maxId, 'ID');
    const perm = this.entry(keyId).perm;
    perm.encryptHalves(this.halves[0], this.halves[1]);
    return joinU64(perm.out[0], perm.out[1]);
  }

  /**
   * Inverse of {@link encrypt}. A result above `maxId` (only possible with the wrong key)
   * is `FLURRY_E_PUBLIC_ID_MALFORMED`; any other wrong-key value decrypts to a wrong ID,
   * since a bare integer has no tag to check: prefer {@link decode}.
   *
   * @example
   * ```ts
   * codec.decrypt(codec.encrypt(1n)); // 1n
   * ```
   */
  decrypt(value: bigint, keyId?: string): bigint {
    this.split(value, MAX_FOR_BITS[this.bits], 'encrypted value');
    const perm = this.entry(keyId).perm;
    perm.decryptHalves(this.halves[0], this.halves[1]);
    const id = joinU64(perm.out[0], perm.out[1]);
    if (id > this.maxId) {
      const k = perm === this.#current.perm ? this.currentKeyId : (keyId as string);
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_MALFORMED,
        `The value decrypts with key "${k}" to above the largest valid ID (${this.maxId}): it was made with a different key under the same key ID, or for another layout. It is rejected rather than mapped to a wrong ID.`,
        { keyId: k, maxId: this.maxId.toString() },
      );
    }
    return id;
  }

  /**
   * The public-ID string of an ID, with the current key: key ID, fixed-width encrypted ID,
   * 3-character authentication tag, check character.
   *
   * @example
   * ```ts
   * codec.encode(1859214170478923776n); // 16 characters for 63 or 64 bits in base62
   * ```
   */
  encode(id: bigint | number): string {
    this.split(id, this.maxId, 'ID');
    const e = this.#current;
    const perm = e.perm;
    perm.encryptHalves(this.halves[0], this.halves[1]);
    let hi = perm.out[0];
    let lo = perm.out[1];
    const r = this.radix;
    const d = this.work;
    const p = this.payloadLength;
    // The tag first (it reads hi and lo), written most significant digit first.
    let t = this.tagOf(e, this.bits, hi, lo);
    for (let i = p + PUBLIC_ID_TAG_LENGTH; i > p; i--) {
      const q = Math.floor(t / r);
      d[i] = t - q * r;
      t = q;
    }
    // The encrypted value in p fixed-width digits: long division on two 32-bit halves.
    let i = p;
    while (hi !== 0) {
      const qh = Math.floor(hi / r);
      const x = (hi - qh * r) * TWO32 + lo; // < radix·2^32: exact
      const ql = Math.floor(x / r);
      d[i--] = x - ql * r;
      hi = qh;
      lo = ql;
    }
    while (i >= 1) {
      const q = Math.floor(lo / r);
      d[i--] = lo - q * r;
      lo = q;
    }
    d[0] = e.keyDigit;
    if (this.check !== null) d[this.length - 1] = this.check.checkValue(d, this.length - 1);
    return this.text();
  }

  /**
   * The ID behind a public-ID string. Errors (never a wrong ID), in the order checked:
   * not a string, wrong length, bad character → `FLURRY_E_PUBLIC_ID_MALFORMED`; failed
   * check character (a typo) → `FLURRY_E_PUBLIC_ID_CHECKSUM`; key ID not in the keyring →
   * `FLURRY_E_PUBLIC_ID_UNKNOWN_KEY`; encrypted value out of range, or a string issued for
   * another width → `FLURRY_E_PUBLIC_ID_MALFORMED`; authentication tag not made by the
   * key of that key ID → `FLURRY_E_PUBLIC_ID_WRONG_KEY`; an ID above `maxId` →
   * `FLURRY_E_PUBLIC_ID_MALFORMED`.
   *
   * @example
   * ```ts
   * codec.decode(codec.encode(42n)); // 42n
   * codec.decode('nope');            // throws FLURRY_E_PUBLIC_ID_MALFORMED
   * ```
   */
  decode(publicId: string): bigint {
    if (typeof publicId !== 'string') {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_MALFORMED,
        `A public ID must be a string, got ${describeValue(publicId)}.`,
        {},
      );
    }
    const len = this.length;
    if (publicId.length !== len) throw this.wrongLength(publicId);
    const d = this.work;
    const values = this.values;
    for (let i = 0; i < len; i++) {
      const c = publicId.charCodeAt(i);
      const v = c < 128 ? values[c] : -1;
      if (v < 0) throw this.badChar(publicId, i);
      d[i] = v;
    }
    if (this.check !== null && !this.check.verifyValues(d, len)) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_CHECKSUM,
        `The public ID ${describeValue(publicId)} fails its check character: a character was changed or two were swapped. Copy the ID again.`,
        { length: len },
      );
    }
    const e = this.#byCode[publicId.charCodeAt(0)];
    if (e === undefined) {
      const keyId = publicId[0];
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_UNKNOWN_KEY,
        `The public ID ${describeValue(publicId)} was made with key "${keyId}", which is not in the keyring (${this.keyIds.map((k) => `"${k}"`).join(', ')}); add that key (after the current one) to FLURRY_PUBLIC_KEY to decode it.`,
        { keyId, known: [...this.keyIds] },
      );
    }
    // The encrypted value: the first fastDigits digits in one double, the rest multiplied in.
    const r = this.radix;
    const p = this.payloadLength;
    const head = p < this.fastDigits ? p : this.fastDigits;
    let v = 0;
    for (let i = 1; i <= head; i++) v = v * r + d[i];
    let hi = Math.floor(v / TWO32);
    let lo = v - hi * TWO32;
    if (p > head) {
      let w = 0;
      let m = 1;
      for (let i = head + 1; i <= p; i++) {
        w = w * r + d[i];
        m *= r;
      }
      const x = lo * m + w; // m ≤ radix³ < 2^18: exact
      const carry = Math.floor(x / TWO32);
      lo = x - carry * TWO32;
      hi = hi * m + carry;
    }
    const bits = this.bits;
    if (!PublicIdCodec.fits(hi, lo, bits)) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_MALFORMED,
        `The public ID ${describeValue(publicId)} holds an encrypted value larger than the largest ${bits}-bit value: it was made for wider IDs (another layout), or is not a public ID. Decode it with the layout it was made for.`,
        { bits },
      );
    }
    const tag = d[p + 1] * r * r + d[p + 2] * r + d[p + 3];
    if (tag !== this.tagOf(e, bits, hi, lo)) throw this.wrongKey(publicId, e, hi, lo, tag);
    e.perm.decryptHalves(hi, lo);
    const id = joinU64(e.perm.out[0], e.perm.out[1]);
    if (id > this.maxId) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_MALFORMED,
        `The public ID ${describeValue(publicId)} is authentic but names an ID above the largest valid ID here (${this.maxId}): it was issued by a codec with a larger maxId. It is rejected rather than returned.`,
        { keyId: e.key.id, maxId: this.maxId.toString() },
      );
    }
    return id;
  }

  /** Redacted description (no key material). @example `String(codec) // 'PublicIdCodec(bits=64, base62, checksum, keys=B,A)'` */
  toString(): string {
    return `PublicIdCodec(bits=${this.bits}, ${this.alphabet}, ${this.checksum ? 'checksum' : 'no checksum'}, keys=${this.keyIds.join(',')})`;
  }

  /** Redacted JSON form. @example `JSON.stringify(codec) // '{"format":2,"bits":64,"alphabet":"base62",…}'` */
  toJSON(): {
    format: number;
    bits: number;
    maxId: string;
    alphabet: PublicIdAlphabet;
    checksum: boolean;
    length: number;
    tagLength: number;
    keyIds: string[];
    currentKeyId: string;
  } {
    return {
      format: PUBLIC_ID_FORMAT_VERSION,
      bits: this.bits,
      maxId: this.maxId.toString(),
      alphabet: this.alphabet,
      checksum: this.checksum,
      length: this.length,
      tagLength: this.tagLength,
      keyIds: [...this.keyIds],
      currentKeyId: this.currentKeyId,
    };
  }

  /** Redacted output for `util.inspect`. @example `console.log(codec) // PublicIdCodec(bits=64, …)` */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  /**
   * The tag value in [0, radix³): Chaskey-12 under the entry's tag key of the block
   * (encrypted low word, encrypted high word, N | radix << 8 | keyId << 16 | version << 24,
   * "FTAG"), reduced from 53 bits of its output ((w1 >>> 11)·2^32 + w0) modulo radix³.
   */
  private tagOf(e: Entry, bits: number, hi: number, lo: number): number {
    const mac = e.mac;
    mac.tag(
      lo | 0,
      hi | 0,
      bits | (this.radix << 8) | (e.keyCode << 16) | (PUBLIC_ID_FORMAT_VERSION << 24),
      TAG_DOMAIN,
    );
    return ((mac.out[1] >>> TAG_SHIFT) * TWO32 + (mac.out[0] >>> 0)) % this.tagSpace;
  }

  /** Whether hi·2^32 + lo < 2^bits. */
  private static fits(hi: number, lo: number, bits: number): boolean {
    if (hi >= TWO32) return false;
    if (bits >= 64) return true;
    return bits > 32 ? hi < 2 ** (bits - 32) : hi === 0 && lo < 2 ** bits;
  }

  /** The string of the digit values in `work`. */
  private text(): string {
    const d = this.work;
    const c = this.codes;
    if (d.length === 16) {
      return String.fromCharCode(
        c[d[0]],
        c[d[1]],
        c[d[2]],
        c[d[3]],
        c[d[4]],
        c[d[5]],
        c[d[6]],
        c[d[7]],
        c[d[8]],
        c[d[9]],
        c[d[10]],
        c[d[11]],
        c[d[12]],
        c[d[13]],
        c[d[14]],
        c[d[15]],
      );
    }
    const t = this.textCodes;
    for (let i = 0; i < d.length; i++) t[i] = c[d[i]];
    return String.fromCharCode(...t);
  }

  private wrongLength(publicId: string): FlurryError {
    const formatOne = 1 + this.payloadLength + (this.checksum ? 1 : 0);
    const parts = `key ID, ${this.payloadLength} for the ID, ${PUBLIC_ID_TAG_LENGTH} for the tag${this.checksum ? ', check character' : ''}`;
    const hint =
      publicId.length === formatOne
        ? ` A ${formatOne}-character string may be a public ID of format 1 (before the authentication tag; never released), which is no longer read: encode the ID again.`
        : ' Check for a truncated or extended copy.';
    return new FlurryError(
      ErrorCode.PUBLIC_ID_MALFORMED,
      `The public ID ${describeValue(publicId)} is ${plural(publicId.length, 'character')} long; public IDs here are exactly ${this.length} ${this.alphabet} characters (${parts}).${hint}`,
      { length: publicId.length, expectedLength: this.length },
    );
  }

  private badChar(publicId: string, i: number): FlurryError {
    const ch = String.fromCodePoint(publicId.codePointAt(i) ?? 0);
    return new FlurryError(
      ErrorCode.PUBLIC_ID_MALFORMED,
      `The public ID ${describeValue(publicId)} has the invalid character ${describeValue(ch)} at position ${i + 1} of ${publicId.length}; public IDs use the ${this.alphabet} characters "${this.digits.chars}".`,
      { char: ch, position: i + 1, length: publicId.length },
    );
  }

  /**
   * The error of a tag mismatch. When the tag is the right one for another width with the
   * same string length (a 64-bit public ID given to a 63-bit codec), says so; otherwise the
   * key of that key ID did not issue the string.
   */
  private wrongKey(publicId: string, e: Entry, hi: number, lo: number, tag: number): FlurryError {
    for (const w of this.sameLengthWidths) {
      if (PublicIdCodec.fits(hi, lo, w) && this.tagOf(e, w, hi, lo) === tag) {
        return new FlurryError(
          ErrorCode.PUBLIC_ID_MALFORMED,
          `The public ID ${describeValue(publicId)} was issued for ${w}-bit IDs, but this codec decodes ${this.bits}-bit IDs (the layouts differ). Decode it with the layout it was made for.`,
          { keyId: e.key.id, bits: this.bits, issuedBits: w },
        );
      }
    }
    const id = e.key.id;
    return new FlurryError(
      ErrorCode.PUBLIC_ID_WRONG_KEY,
      `The public ID ${describeValue(publicId)} was decoded with a key that did not issue it: its authentication tag does not match the key with key ID "${id}" in this keyring. ` +
        `It was made with a different key under the same key ID (a regenerated key, another deployment's key)${this.checksum ? ', or carries several typos that the check character missed' : ', or was mistyped (this codec has no check character)'}. ` +
        `Check the key for key ID "${id}" (FLURRY_PUBLIC_KEY or the key file) against the key that issued it. No ID is returned.`,
      { keyId: id, bits: this.bits },
    );
  }

  private entry(keyId: string | undefined): Entry {
    if (keyId === undefined) return this.#current;
    const e = this.#byId.get(keyId);
    if (e === undefined) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_UNKNOWN_KEY,
        `No key "${String(keyId)}" in the keyring (${this.keyIds.map((k) => `"${k}"`).join(', ')}).`,
        {
          keyId: String(keyId),
          known: [...this.keyIds],
        },
      );
    }
    return e;
  }

  /** Range-checks and splits into this.halves. */
  private split(x: unknown, max: bigint, what: string): void {
    if (typeof x === 'bigint') {
      if (x < 0n)
        throw new FlurryError(ErrorCode.ID_NEGATIVE, `The ${what} cannot be negative, got ${x}.`, {
          value: x.toString(),
        });
      if (x > max) {
        throw new FlurryError(
          ErrorCode.ID_TOO_WIDE,
          `The ${what} ${x} is above the largest accepted value ${max} (a ${this.bits}-bit public-ID codec).`,
          {
            value: x.toString(),
            bits: this.bits,
            max: max.toString(),
          },
        );
      }
      if (x <= 0x1fffffffffffffn) {
        const n = Number(x);
        const hi = Math.floor(n / TWO32);
        this.halves[0] = hi;
        this.halves[1] = n - hi * TWO32;
      } else {
        splitU64(x, this.halves);
      }
      return;
    }
    if (typeof x === 'number' && Number.isSafeInteger(x)) return this.split(BigInt(x), max, what);
    throw new FlurryError(
      ErrorCode.ID_MALFORMED,
      `The ${what} must be a non-negative integer bigint, got ${describeValue(x)}.`,
      { value: describeValue(x) },
    );
  }
}
