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

/** Validated options, defaults applied (the keyring is parsed by the cipher). */
export interface ResolvedPublicIdOptions {
  readonly bits: number;
  readonly maxId: bigint;
  readonly alphabet: PublicIdAlphabet;
  readonly checksum: boolean;
}

/**
 * Checks the options of a cipher and applies the defaults. Throws `FLURRY_E_INVALID_OPTION`
 * (naming the option and its allowed values) or `FLURRY_E_UNKNOWN_OPTION`.
 */
export function resolvePublicIdOptions(options: PublicIdOptions): ResolvedPublicIdOptions {
  if (options === null || typeof options !== 'object') {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      'PublicIdCodec.create needs an options object with at least { keys }.',
      {},
    );
  }
  assertKnownOptions(options, PUBLIC_ID_OPTION_NAMES, 'PublicIdCodec options');
  const bits = options.bits === undefined ? 64 : checkBits(options.bits, 'bits');
  const widest = MAX_FOR_BITS[bits];
  if (
    options.maxId !== undefined &&
    (typeof options.maxId !== 'bigint' || options.maxId < 0n || options.maxId > widest)
  ) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `maxId must be a bigint from 0 to ${widest} (2^${bits} - 1), got ${describeValue(options.maxId)}.`,
      {
        option: 'maxId',
      },
    );
  }
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
  return { bits, maxId: options.maxId ?? widest, alphabet, checksum: options.checksum ?? true };
}
