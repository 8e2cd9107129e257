/** The options of a {@link PublicIdCipher} and their validation. */
import { MAX_FOR_BITS, checkBits, describeValue } from '../codecs/alphabet.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import type { PublicIdAlphabet } from './format.js';
import type { PublicIdKey } from './keys.js';

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

/**
 * The keys of {@link PublicIdOptions} (unknown keys are refused with
 * `FLURRY_E_UNKNOWN_OPTION`).
 */
export const PUBLIC_ID_OPTION_NAMES = optionNames<PublicIdOptions>({
  keys: true,
  bits: true,
  maxId: true,
  alphabet: true,
  checksum: true,
});

/** An invalid `option`: `FLURRY_E_INVALID_OPTION` with `message`. */
function invalid(option: string | undefined, message: string): FlurryError {
  return new FlurryError(ErrorCode.INVALID_OPTION, message, option === undefined ? {} : { option });
}

/**
 * Checks the options of a cipher and applies the defaults (the keyring is parsed by the cipher). Throws
 * `FLURRY_E_INVALID_OPTION` (naming the option and its allowed values) or `FLURRY_E_UNKNOWN_OPTION`.
 */
export function resolvePublicIdOptions(options: PublicIdOptions) {
  if (options === null || typeof options !== 'object')
    throw invalid(undefined, 'PublicIdCodec.create needs an options object with at least { keys }.');
  assertKnownOptions(options, PUBLIC_ID_OPTION_NAMES, 'PublicIdCodec options');
  const bits = options.bits === undefined ? 64 : checkBits(options.bits, 'bits');
  const widest = MAX_FOR_BITS[bits];
  const { maxId, checksum } = options;
  if (maxId !== undefined && (typeof maxId !== 'bigint' || maxId < 0n || maxId > widest))
    throw invalid('maxId', `maxId must be a bigint from 0 to ${widest} (2^${bits} - 1), got ${describeValue(maxId)}.`);
  const alphabet = options.alphabet ?? 'base62';
  if (alphabet !== 'base62' && alphabet !== 'base58')
    throw invalid('alphabet', `alphabet must be "base62" or "base58", got ${describeValue(alphabet)}.`);
  if (checksum !== undefined && typeof checksum !== 'boolean')
    throw invalid('checksum', `checksum must be true or false, got ${describeValue(checksum)}.`);
  return { bits, maxId: maxId ?? widest, alphabet, checksum: checksum ?? true };
}
