/**
 * Public IDs: keyed, reversible obfuscation of IDs (a format-preserving Feistel cipher
 * over the layout's N-bit space) with fixed-width base62/base58 strings carrying a key ID,
 * a keyed authentication tag and a check character; keys, keyrings and rotation.
 *
 * @example
 * ```ts
 * import { PublicIdCodec, loadKeysFromEnv } from '@flurry/core/public';
 * const codec = PublicIdCodec.create({ keys: loadKeysFromEnv(), bits: 63 });
 * const pub = codec.encode(1859214170478923776n);
 * codec.decode(pub); // 1859214170478923776n
 * ```
 */
export { PublicIdCodec, PUBLIC_ID_FORMAT_VERSION, PUBLIC_ID_TAG_LENGTH, PUBLIC_ID_OPTION_NAMES } from './codec.js';
export type { PublicIdOptions, PublicIdAlphabet } from './codec.js';
export { PublicIdKey, generateKey, parseKeys, loadKeysFromEnv, loadKeysFromFile } from './keys.js';
export { FEISTEL_ROUNDS } from './feistel.js';
