// PublicIdCipher: a keyed permutation of the N-bit space written as key ID, encrypted ID, tag, check character
// (format 2, docs/public-ids.md); its alphabet tables, per-key material and the errors of a malformed string.
import { hkdfSha256 } from '#platform';
import {
  Alphabet,
  MAX_FOR_BITS,
  TWO32,
  checkBits,
  describeValue,
  fitsBits,
  joinU64,
  splitU64,
} from '../codecs/alphabet.js';
import { BASE58_ALPHABET, BASE62_ALPHABET } from '../codecs/formats.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { plural } from '../text.js';
import { ChaskeyBlockMac } from './chaskey.js';
import { DihedralCheck } from './checksum.js';
import { FeistelPermutation } from './feistel.js';
import { parseKeys, type PublicIdKey } from './keys.js';

/** The public-ID string form's version, bound into the tag (format 1, without a tag, was never released). */
export const PUBLIC_ID_FORMAT_VERSION = 2;

/**
 * Characters of the authentication tag of every public-ID string. A string checked with a key that did not issue it
 * passes with probability 1/radix³: 1/238,328 (base62), 1/195,112 (base58).
 */
export const PUBLIC_ID_TAG_LENGTH = 3;

/** HKDF salt and info of the tag key (the Feistel round keys use salt `flurry/public-id/v1`). */
const TAG_SALT = 'flurry/public-id/v2';
const TAG_INFO = 'tag;chaskey12';

/** The alphabet of public-ID strings. */
export type PublicIdAlphabet = 'base62' | 'base58';

const ALPHABETS: Record<PublicIdAlphabet, string> = { base62: BASE62_ALPHABET, base58: BASE58_ALPHABET };

/** The digit system and check-character tables of each alphabet, built on first use (a few hundred µs) and shared. */
const TABLES: Partial<Record<PublicIdAlphabet, { digits: Alphabet; check: DihedralCheck }>> = {};

/**
 * What a cipher keeps per key for `bits`-wide IDs: the key, its Feistel permutation and tag MAC (keys by HKDF, secret
 * copies wiped), the key ID's character code (< 128) and digit value. Holds key material: keep it in `#private` fields.
 */
function keyEntry(key: PublicIdKey, bits: number, values: Int8Array) {
  const secret = key.secretBytes();
  const tagKey = hkdfSha256(secret, TAG_SALT, TAG_INFO, 16);
  const dv = new DataView(tagKey.buffer, tagKey.byteOffset, tagKey.byteLength);
  const entry = {
    key,
    perm: FeistelPermutation.fromSecret(secret, bits),
    mac: new ChaskeyBlockMac(Uint32Array.from({ length: 4 }, (_, i) => dv.getUint32(4 * i, true))),
    keyCode: key.id.charCodeAt(0),
    keyDigit: values[key.id.charCodeAt(0)],
  };
  secret.fill(0);
  tagKey.fill(0);
  return entry;
}

type KeyEntry = ReturnType<typeof keyEntry>;

/** The string of the digits `d` through the codes `c` (`scratch`: `d.length` numbers, for lengths other than 16). */
function digitText(d: Uint8Array, c: Uint16Array, scratch: number[]): string {
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
  for (let i = 0; i < d.length; i++) scratch[i] = c[d[i]];
  return String.fromCharCode(...scratch);
}

/** A public ID of the wrong length: the expected length and its parts, and a hint at a format-1 length. */
function wrongLengthError(publicId: string, f: PublicIdCipher): FlurryError {
  const formatOne = 1 + f.payloadLength + (f.checksum ? 1 : 0);
  const parts = `key ID, ${f.payloadLength} for the ID, ${PUBLIC_ID_TAG_LENGTH} for the tag${f.checksum ? ', check character' : ''}`;
  const hint =
    publicId.length === formatOne
      ? ` A ${formatOne}-character string may be a public ID of format 1 (before the authentication tag; never released), which is no longer read: encode the ID again.`
      : ' Check for a truncated or extended copy.';
  return new FlurryError(
    ErrorCode.PUBLIC_ID_MALFORMED,
    `The public ID ${describeValue(publicId)} is ${plural(publicId.length, 'character')} long; public IDs here are exactly ${f.length} ${f.alphabet} characters (${parts}).${hint}`,
    { length: publicId.length, expectedLength: f.length },
  );
}

/** A public ID with a character outside the alphabet at position `i` (0-based). */
function badCharError(publicId: string, i: number, alphabet: PublicIdAlphabet, chars: string): FlurryError {
  const ch = String.fromCodePoint(publicId.codePointAt(i) ?? 0);
  return new FlurryError(
    ErrorCode.PUBLIC_ID_MALFORMED,
    `The public ID ${describeValue(publicId)} has the invalid character ${describeValue(ch)} at position ${i + 1} of ${publicId.length}; public IDs use the ${alphabet} characters "${chars}".`,
    { char: ch, position: i + 1, length: publicId.length },
  );
}

// The tag block's fourth word ("FTAG", little-endian), and the high bits of MAC word 1 dropped to keep 53 bits.
const TAG_DOMAIN = 0x47415446;
const TAG_SHIFT = 11;

/** Options of {@link PublicIdCipher.create}. */
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

const OPTION_NAMES = optionNames<PublicIdOptions>({
  keys: true,
  bits: true,
  maxId: true,
  alphabet: true,
  checksum: true,
});

function invalid(option: string | undefined, message: string): FlurryError {
  return new FlurryError(ErrorCode.INVALID_OPTION, message, option === undefined ? {} : { option });
}

/**
 * Encrypts IDs to public IDs and back (docs/public-ids.md). Create one per process (deriving the round and tag keys
 * costs a few HKDF calls) and reuse it; every method is synchronous and allocation-light.
 */
export class PublicIdCipher {
  /** The resolved {@link PublicIdOptions}. */
  readonly bits: number;
  readonly maxId: bigint;
  readonly alphabet: PublicIdAlphabet;
  readonly checksum: boolean;
  /** Length of every public-ID string: 1 (key ID) + payload + 3 (tag) + 1 (check, when on). */
  readonly length: number;
  /** Length of the encrypted-ID part. */
  readonly payloadLength: number;
  /** Length of the authentication tag ({@link PUBLIC_ID_TAG_LENGTH}). */
  readonly tagLength: number = PUBLIC_ID_TAG_LENGTH;
  /** Key IDs of the keyring, current (encoding) first. */
  readonly keyIds: readonly string[];
  readonly currentKeyId: string;

  private readonly digits: Alphabet;
  private readonly check: DihedralCheck | null;
  private readonly radix: number;
  private readonly tagSpace: number;
  /** Character code of each digit value; digit values and character codes of the string being built or parsed. */
  private readonly codes: Uint16Array;
  private readonly work: Uint8Array;
  private readonly textCodes: number[];
  /** Other widths whose strings have the same payload length (for telling a width mix-up from a wrong key). */
  private readonly sameLengthWidths: readonly number[];
  // #private so that no inspection (even util.inspect with customInspect: false) reaches key material.
  readonly #current: KeyEntry;
  readonly #byId = new Map<string, KeyEntry>();
  readonly #byCode: (KeyEntry | undefined)[] = new Array<KeyEntry | undefined>(128).fill(undefined);
  private readonly halves = new Float64Array(2);

  private constructor(options: PublicIdOptions) {
    if (options === null || typeof options !== 'object')
      throw invalid(undefined, 'PublicIdCodec.create needs an options object with at least { keys }.');
    assertKnownOptions(options, OPTION_NAMES, 'PublicIdCodec options');
    const bits = (this.bits = options.bits === undefined ? 64 : checkBits(options.bits));
    const widest = MAX_FOR_BITS[bits];
    const { maxId, checksum } = options;
    if (maxId !== undefined && (typeof maxId !== 'bigint' || maxId < 0n || maxId > widest))
      throw invalid(
        'maxId',
        `maxId must be a bigint from 0 to ${widest} (2^${bits} - 1), got ${describeValue(maxId)}.`,
      );
    const alphabet = (this.alphabet = options.alphabet ?? 'base62');
    if (alphabet !== 'base62' && alphabet !== 'base58')
      throw invalid('alphabet', `alphabet must be "base62" or "base58", got ${describeValue(alphabet)}.`);
    if (checksum !== undefined && typeof checksum !== 'boolean')
      throw invalid('checksum', `checksum must be true or false, got ${describeValue(checksum)}.`);
    this.maxId = maxId ?? widest;
    this.checksum = checksum ?? true;
    const shared = (TABLES[alphabet] ??= {
      digits: new Alphabet(`${alphabet} public ID`, ALPHABETS[alphabet]),
      check: new DihedralCheck(ALPHABETS[alphabet]),
    });
    this.digits = shared.digits;
    this.check = this.checksum ? shared.check : null;
    this.radix = this.digits.radix;
    this.tagSpace = this.radix ** PUBLIC_ID_TAG_LENGTH;
    this.codes = Uint16Array.from(this.digits.chars, (ch) => ch.charCodeAt(0));
    this.payloadLength = this.digits.fixedLengths[this.bits];
    this.length = 1 + this.payloadLength + PUBLIC_ID_TAG_LENGTH + (this.checksum ? 1 : 0);
    this.work = new Uint8Array(this.length);
    this.textCodes = new Array<number>(this.length).fill(0);
    const widths = Array.from({ length: 64 }, (_, i) => i + 1);
    this.sameLengthWidths = widths.filter((w) => w !== bits && this.digits.fixedLengths[w] === this.payloadLength);
    const keys = parseKeys(options.keys);
    for (const key of keys) {
      const entry = keyEntry(key, this.bits, this.digits.values);
      this.#byId.set(key.id, entry);
      this.#byCode[entry.keyCode] = entry;
    }
    this.keyIds = Object.freeze(keys.map((k) => k.id));
    this.currentKeyId = keys[0].id;
    this.#current = this.#byId.get(this.currentKeyId) as KeyEntry;
  }

  /** Builds a cipher: `FLURRY_E_PUBLIC_KEY_INVALID` (bad keyring), `FLURRY_E_INVALID_OPTION`. */
  static create(options: PublicIdOptions): PublicIdCipher {
    return new PublicIdCipher(options);
  }

  /** The encrypted value of an ID in [0, 2^bits), with the current key or `keyId`; no tag: prefer {@link encode}. */
  encrypt(id: bigint, keyId?: string): bigint {
    this.split(id, this.maxId, 'ID');
    const perm = this.entry(keyId).perm;
    perm.encryptHalves(this.halves[0], this.halves[1]);
    return joinU64(perm.out[0], perm.out[1]);
  }

  /**
   * Inverse of {@link encrypt}. A result above `maxId` (only possible with the wrong key) is
   * `FLURRY_E_PUBLIC_ID_MALFORMED`; any other wrong-key value decrypts to a wrong ID, since a bare integer has no tag
   * to check: prefer {@link decode}.
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

  /** The public-ID string of an ID, with the current key. */
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
    return digitText(this.work, this.codes, this.textCodes);
  }

  /** The ID behind a public-ID string, never a wrong ID: docs/public-ids.md#order-of-checks-on-decoding. */
  decode(publicId: string): bigint {
    if (typeof publicId !== 'string') {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_MALFORMED,
        `A public ID must be a string, got ${describeValue(publicId)}.`,
        {},
      );
    }
    const len = this.length;
    if (publicId.length !== len) throw wrongLengthError(publicId, this);
    const d = this.work;
    const values = this.digits.values;
    for (let i = 0; i < len; i++) {
      const c = publicId.charCodeAt(i);
      const v = c < 128 ? values[c] : -1;
      if (v < 0) throw badCharError(publicId, i, this.alphabet, this.digits.chars);
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
    const fast = this.digits.fastDigits;
    const head = p < fast ? p : fast;
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
    if (!fitsBits(hi, lo, bits)) {
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

  /** Redacted description (no key material). */
  toString(): string {
    return `PublicIdCodec(bits=${this.bits}, ${this.alphabet}, ${this.checksum ? 'checksum' : 'no checksum'}, keys=${this.keyIds.join(',')})`;
  }

  toJSON() {
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

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  /** The tag value in [0, radix³): docs/public-ids.md#the-authentication-tag. */
  private tagOf(e: KeyEntry, bits: number, hi: number, lo: number): number {
    const mac = e.mac;
    mac.tag(
      lo | 0,
      hi | 0,
      bits | (this.radix << 8) | (e.keyCode << 16) | (PUBLIC_ID_FORMAT_VERSION << 24),
      TAG_DOMAIN,
    );
    return ((mac.out[1] >>> TAG_SHIFT) * TWO32 + (mac.out[0] >>> 0)) % this.tagSpace;
  }

  /** A tag mismatch: a string issued for another width of the same length (64-bit ID, 63-bit cipher), else a wrong key. */
  private wrongKey(publicId: string, e: KeyEntry, hi: number, lo: number, tag: number): FlurryError {
    for (const w of this.sameLengthWidths) {
      if (fitsBits(hi, lo, w) && this.tagOf(e, w, hi, lo) === tag) {
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

  private entry(keyId: string | undefined): KeyEntry {
    if (keyId === undefined) return this.#current;
    const e = this.#byId.get(keyId);
    if (e === undefined) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_UNKNOWN_KEY,
        `No key "${String(keyId)}" in the keyring (${this.keyIds.map((k) => `"${k}"`).join(', ')}).`,
        { keyId: String(keyId), known: [...this.keyIds] },
      );
    }
    return e;
  }

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
          { value: x.toString(), bits: this.bits, max: max.toString() },
        );
      }
      return splitU64(x, this.halves);
    }
    if (typeof x === 'number' && Number.isSafeInteger(x)) return this.split(BigInt(x), max, what);
    throw new FlurryError(
      ErrorCode.ID_MALFORMED,
      `The ${what} must be a non-negative integer bigint, got ${describeValue(x)}.`,
      { value: describeValue(x) },
    );
  }
}

/** @deprecated Use {@link PublicIdCipher} (the old name; `String(cipher)` and option errors still say `PublicIdCodec`). */
export const PublicIdCodec = PublicIdCipher;
/** @deprecated Use {@link PublicIdCipher}. */
export type PublicIdCodec = PublicIdCipher;
