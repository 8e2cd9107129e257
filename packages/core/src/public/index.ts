/**
 * Public IDs: keyed, reversible obfuscation of IDs (a format-preserving Feistel cipher
 * over the layout's N-bit space) with fixed-width base62/base58 strings carrying a key ID,
 * a keyed authentication tag and a check character; keys, keyrings and rotation. (The
 * plain string forms of IDs — decimal, hex, base62… — are the codecs of `codecs/`.)
 */
export { PublicIdCipher, PublicIdCodec } from './cipher.js';
export { PUBLIC_ID_FORMAT_VERSION, PUBLIC_ID_TAG_LENGTH, type PublicIdAlphabet } from './format.js';
export type { PublicIdOptions } from './options.js';
export { PublicIdKey, generateKey, parseKeys, loadKeysFromEnv, loadKeysFromFile } from './keys.js';
export { FEISTEL_ROUNDS } from './feistel.js';
