/**
 * Public IDs: what to show the world instead of a Snowflake ID. A raw ID reveals its
 * creation time, node and per-millisecond volume, and consecutive IDs let a crawler walk
 * your URLs; a public ID is the ID under a keyed permutation of the layout's N-bit space
 * (see `feistel.ts`), written as a fixed-width URL-safe string:
 *
 * ```
 *   K  PPPPPPPPPPP  C        e.g.  "A2kZ9Qw0LmRt7"
 *   │  │            └ check character (detects any 1 changed character, any adjacent swap)
 *   │  └ the encrypted ID, fixed-width base62 (or base58)
 *   └ key ID (selects the key on decoding; rotation keeps old links working)
 * ```
 *
 * Decoding never returns a wrong ID silently: wrong length, a bad character, a failed
 * checksum, an unknown key ID, an encrypted value outside [0, 2^N) or a decrypted ID
 * above `maxId` are coded errors. (A string made with a *different* key that shares the
 * key ID cannot be told apart from a valid one unless it decrypts above `maxId`; keep
 * key IDs unique across the keys you ever used.)
 *
 * @example
 * ```ts
 * import { PublicIdCodec, generateKey } from '@flurry/core';
 * const codec = PublicIdCodec.create({ keys: process.env.FLURRY_PUBLIC_KEY ?? generateKey(), bits: 63 });
 * const pub = codec.encode(1859214170478923776n); // e.g. 'A2kZ9Qw0LmRt7'
 * codec.decode(pub);                              // 1859214170478923776n
 * ```
 */
import { Alphabet, MAX_FOR_BITS, TWO32, checkBits, describeValue, joinU64, splitU64 } from '../codecs/alphabet.js';
import { BASE58_ALPHABET, BASE62_ALPHABET } from '../codecs/formats.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { DihedralCheck } from './checksum.js';
import { FeistelPermutation } from './feistel.js';
import { PublicIdKey, parseKeys } from './keys.js';

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
  /** Largest valid ID (default 2^bits − 1); larger IDs are refused on encoding and reported as a wrong key on decoding. */
  maxId?: bigint;
  /** String alphabet (default `base62`; `base58` avoids look-alike characters). */
  alphabet?: PublicIdAlphabet;
  /** Append a check character (default true). */
  checksum?: boolean;
}

const ALPHABETS: Record<PublicIdAlphabet, string> = { base62: BASE62_ALPHABET, base58: BASE58_ALPHABET };

interface Entry {
  key: PublicIdKey;
  perm: FeistelPermutation;
}

/**
 * Encrypts IDs to public IDs and back. Create one per process (deriving the round keys
 * costs a few HKDF calls) and reuse it; every method is synchronous and allocation-light.
 *
 * @example
 * ```ts
 * const codec = PublicIdCodec.create({ keys: ['fk1_B_…', 'fk1_A_…'] }); // B current, A still decodes
 * codec.encrypt(42n);          // a 64-bit bigint
 * codec.decrypt(codec.encrypt(42n)); // 42n
 * codec.encode(42n);           // 'B…' (13 characters)
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
  /** Length of every public-ID string: 1 (key ID) + payload + 1 (check, when on). */
  readonly length: number;
  /** Length of the encrypted-ID part. */
  readonly payloadLength: number;
  /** Key IDs of the keyring, current first. */
  readonly keyIds: readonly string[];
  /** The key ID used for encoding. */
  readonly currentKeyId: string;

  private readonly digits: Alphabet;
  private readonly check: DihedralCheck | null;
  // #private so that no inspection (even util.inspect with customInspect: false) reaches key material.
  readonly #current: Entry;
  readonly #byId = new Map<string, Entry>();
  private readonly halves = new Float64Array(2);

  private constructor(options: PublicIdOptions) {
    if (options === null || typeof options !== 'object') {
      throw new FlurryError(ErrorCode.INVALID_OPTION, 'PublicIdCodec.create needs an options object with at least { keys }.', {});
    }
    this.bits = options.bits === undefined ? 64 : checkBits(options.bits, 'bits');
    const widest = MAX_FOR_BITS[this.bits];
    if (options.maxId !== undefined && (typeof options.maxId !== 'bigint' || options.maxId < 0n || options.maxId > widest)) {
      throw new FlurryError(ErrorCode.INVALID_OPTION, `maxId must be a bigint from 0 to ${widest} (2^${this.bits} - 1), got ${describeValue(options.maxId)}.`, {
        option: 'maxId',
      });
    }
    this.maxId = options.maxId ?? widest;
    const alphabet = options.alphabet ?? 'base62';
    if (alphabet !== 'base62' && alphabet !== 'base58') {
      throw new FlurryError(ErrorCode.INVALID_OPTION, `alphabet must be "base62" or "base58", got ${describeValue(alphabet)}.`, { option: 'alphabet' });
    }
    if (options.checksum !== undefined && typeof options.checksum !== 'boolean') {
      throw new FlurryError(ErrorCode.INVALID_OPTION, `checksum must be true or false, got ${describeValue(options.checksum)}.`, { option: 'checksum' });
    }
    this.alphabet = alphabet;
    this.checksum = options.checksum ?? true;
    this.digits = new Alphabet(`${alphabet} public ID`, ALPHABETS[alphabet], {
      malformedCode: ErrorCode.PUBLIC_ID_MALFORMED,
      tooWideCode: ErrorCode.PUBLIC_ID_MALFORMED,
    });
    this.check = this.checksum ? new DihedralCheck(ALPHABETS[alphabet]) : null;
    this.payloadLength = this.digits.fixedLengths[this.bits];
    this.length = 1 + this.payloadLength + (this.checksum ? 1 : 0);
    const keys = parseKeys(options.keys);
    for (const key of keys) this.#byId.set(key.id, { key, perm: FeistelPermutation.fromSecret(key.secretBytes(), this.bits) });
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
   * is `FLURRY_E_PUBLIC_ID_MALFORMED`.
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
    if (id > this.maxId) throw this.outOfRange(perm === this.#current.perm ? this.currentKeyId : (keyId as string));
    return id;
  }

  /**
   * The public-ID string of an ID: key ID, fixed-width encrypted ID, check character.
   *
   * @example
   * ```ts
   * codec.encode(1859214170478923776n); // 13 characters for 64 bits in base62
   * ```
   */
  encode(id: bigint | number): string {
    this.split(id, this.maxId, 'ID');
    const perm = this.#current.perm;
    perm.encryptHalves(this.halves[0], this.halves[1]);
    const body = this.currentKeyId + this.digits.encode(perm.out[0], perm.out[1], this.payloadLength);
    return this.check === null ? body : body + this.check.checkChar(body);
  }

  /**
   * The ID behind a public-ID string. Errors (never a wrong ID): wrong length, bad
   * character or encrypted value out of range → `FLURRY_E_PUBLIC_ID_MALFORMED`; failed
   * check character → `FLURRY_E_PUBLIC_ID_CHECKSUM`; key ID not in the keyring →
   * `FLURRY_E_PUBLIC_ID_UNKNOWN_KEY`; decrypts above `maxId` (wrong key) →
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
      throw new FlurryError(ErrorCode.PUBLIC_ID_MALFORMED, `A public ID must be a string, got ${describeValue(publicId)}.`, {});
    }
    if (publicId.length !== this.length) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_MALFORMED,
        `The public ID ${describeValue(publicId)} is ${publicId.length} characters long; public IDs here are exactly ${this.length} ${this.alphabet} characters (key ID, ${this.payloadLength} for the ID${this.checksum ? ', check character' : ''}). Check for a truncated or extended copy.`,
        { length: publicId.length, expectedLength: this.length },
      );
    }
    // Characters are validated here (the checksum needs valid characters) and by the payload decoder.
    const digits = this.digits;
    for (let i = 0; i < publicId.length; i++) {
      if (digits.digitValue(publicId.charCodeAt(i)) < 0) {
        const ch = String.fromCodePoint(publicId.codePointAt(i) ?? 0);
        throw new FlurryError(
          ErrorCode.PUBLIC_ID_MALFORMED,
          `The public ID ${describeValue(publicId)} has the invalid character ${describeValue(ch)} at position ${i + 1} of ${publicId.length}; public IDs use the ${this.alphabet} characters "${digits.chars}".`,
          { char: ch, position: i + 1, length: publicId.length },
        );
      }
    }
    if (this.check !== null && !this.check.verify(publicId)) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_CHECKSUM,
        `The public ID ${describeValue(publicId)} fails its check character: a character was changed or two were swapped. Copy the ID again.`,
        { length: publicId.length },
      );
    }
    const keyId = publicId[0];
    const entry = this.#byId.get(keyId);
    if (entry === undefined) {
      throw new FlurryError(
        ErrorCode.PUBLIC_ID_UNKNOWN_KEY,
        `The public ID ${describeValue(publicId)} was made with key "${keyId}", which is not in the keyring (${this.keyIds.map((k) => `"${k}"`).join(', ')}); add that key (after the current one) to FLURRY_PUBLIC_KEY to decode it.`,
        { keyId, known: [...this.keyIds] },
      );
    }
    this.digits.decode(publicId.slice(1, 1 + this.payloadLength), this.bits, this.payloadLength, this.halves, 'encrypted ID');
    entry.perm.decryptHalves(this.halves[0], this.halves[1]);
    const id = joinU64(entry.perm.out[0], entry.perm.out[1]);
    if (id > this.maxId) throw this.outOfRange(keyId);
    return id;
  }

  /** Redacted description (no key material). @example `String(codec) // 'PublicIdCodec(bits=64, base62, checksum, keys=B,A)'` */
  toString(): string {
    return `PublicIdCodec(bits=${this.bits}, ${this.alphabet}, ${this.checksum ? 'checksum' : 'no checksum'}, keys=${this.keyIds.join(',')})`;
  }

  /** Redacted JSON form. @example `JSON.stringify(codec) // '{"bits":64,"alphabet":"base62",…}'` */
  toJSON(): { bits: number; maxId: string; alphabet: PublicIdAlphabet; checksum: boolean; length: number; keyIds: string[]; currentKeyId: string } {
    return {
      bits: this.bits,
      maxId: this.maxId.toString(),
      alphabet: this.alphabet,
      checksum: this.checksum,
      length: this.length,
      keyIds: [...this.keyIds],
      currentKeyId: this.currentKeyId,
    };
  }

  /** Redacted output for `util.inspect`. @example `console.log(codec) // PublicIdCodec(bits=64, …)` */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  private entry(keyId: string | undefined): Entry {
    if (keyId === undefined) return this.#current;
    const e = this.#byId.get(keyId);
    if (e === undefined) {
      throw new FlurryError(ErrorCode.PUBLIC_ID_UNKNOWN_KEY, `No key "${String(keyId)}" in the keyring (${this.keyIds.map((k) => `"${k}"`).join(', ')}).`, {
        keyId: String(keyId),
        known: [...this.keyIds],
      });
    }
    return e;
  }

  private outOfRange(keyId: string): FlurryError {
    return new FlurryError(
      ErrorCode.PUBLIC_ID_MALFORMED,
      `The public ID decrypts with key "${keyId}" to a value above the largest valid ID (${this.maxId}): it was made with a different key under the same key ID, or for another layout. It is rejected rather than mapped to a wrong ID.`,
      { keyId, maxId: this.maxId.toString() },
    );
  }

  /** Range-checks and splits into this.halves. */
  private split(x: unknown, max: bigint, what: string): void {
    if (typeof x === 'bigint') {
      if (x < 0n) throw new FlurryError(ErrorCode.ID_NEGATIVE, `The ${what} cannot be negative, got ${x}.`, { value: x.toString() });
      if (x > max) {
        throw new FlurryError(ErrorCode.ID_TOO_WIDE, `The ${what} ${x} is above the largest accepted value ${max} (a ${this.bits}-bit public-ID codec).`, {
          value: x.toString(),
          bits: this.bits,
          max: max.toString(),
        });
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
    throw new FlurryError(ErrorCode.ID_MALFORMED, `The ${what} must be a non-negative integer bigint, got ${describeValue(x)}.`, { value: describeValue(x) });
  }
}
