// The public-ID string format (format 2): version, tag constants, alphabet tables, per-key material and the errors of
// a malformed string. The string's layout: cipher.ts; the tag: docs/public-ids.md.
import { hkdfSha256 } from '#platform';
import { Alphabet, describeValue } from '../codecs/alphabet.js';
import { BASE58_ALPHABET, BASE62_ALPHABET } from '../codecs/formats.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { plural } from '../text.js';
import { ChaskeyBlockMac } from './chaskey.js';
import { DihedralCheck } from './checksum.js';
import { FeistelPermutation } from './feistel.js';
import type { PublicIdKey } from './keys.js';

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

const TABLES: Partial<Record<PublicIdAlphabet, { digits: Alphabet; check: DihedralCheck }>> = {};

/** The digit system and check-character tables of an alphabet, built on first use (a few hundred µs) and shared. */
export function alphabetTables(alphabet: PublicIdAlphabet): { digits: Alphabet; check: DihedralCheck } {
  const chars = ALPHABETS[alphabet];
  return (TABLES[alphabet] ??= {
    digits: new Alphabet(`${alphabet} public ID`, chars),
    check: new DihedralCheck(chars),
  });
}

/**
 * What a cipher keeps per key: the key, its Feistel permutation of the N-bit space, its tag MAC, and the key ID's
 * character code (< 128) and digit value in the alphabet. Holds key material: keep it in `#private` fields.
 */
export interface KeyEntry {
  key: PublicIdKey;
  perm: FeistelPermutation;
  mac: ChaskeyBlockMac;
  keyCode: number;
  keyDigit: number;
}

/** A key's entry for `bits`-wide IDs (round and tag keys by HKDF; the secret copies are wiped after). */
export function keyEntry(key: PublicIdKey, bits: number, values: Int8Array): KeyEntry {
  const secret = key.secretBytes();
  const tagKey = hkdfSha256(secret, TAG_SALT, TAG_INFO, 16);
  const dv = new DataView(tagKey.buffer, tagKey.byteOffset, tagKey.byteLength);
  const entry: KeyEntry = {
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

/**
 * The string of the digit values `d`, through the character codes `c` of the alphabet (`scratch`: a reusable array of
 * `d.length` numbers, for lengths other than 16).
 */
export function digitText(d: Uint8Array, c: Uint16Array, scratch: number[]): string {
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
export function wrongLengthError(
  publicId: string,
  f: { length: number; payloadLength: number; checksum: boolean; alphabet: PublicIdAlphabet },
): FlurryError {
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
export function badCharError(publicId: string, i: number, alphabet: PublicIdAlphabet, chars: string): FlurryError {
  const ch = String.fromCodePoint(publicId.codePointAt(i) ?? 0);
  return new FlurryError(
    ErrorCode.PUBLIC_ID_MALFORMED,
    `The public ID ${describeValue(publicId)} has the invalid character ${describeValue(ch)} at position ${i + 1} of ${publicId.length}; public IDs use the ${alphabet} characters "${chars}".`,
    { char: ch, position: i + 1, length: publicId.length },
  );
}
