/**
 * The errors of a malformed public-ID string (wrong length, a character outside the
 * alphabet): `FLURRY_E_PUBLIC_ID_MALFORMED` saying what was wrong and what the string
 * must look like.
 */
import { describeValue } from '../codecs/alphabet.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { plural } from '../text.js';
import { PUBLIC_ID_TAG_LENGTH, type PublicIdAlphabet } from './format.js';

/**
 * A public ID of the wrong length, naming the expected length and its parts, and hinting
 * at format 1 when the length is that of a format-1 string.
 */
export function wrongLengthError(
  publicId: string,
  f: {
    readonly length: number;
    readonly payloadLength: number;
    readonly checksum: boolean;
    readonly alphabet: PublicIdAlphabet;
  },
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
