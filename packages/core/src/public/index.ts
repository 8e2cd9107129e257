/**
 * Public IDs: keyed, reversible obfuscation of IDs (a format-preserving Feistel cipher over the N-bit space) as
 * fixed-width strings with a key ID, an authentication tag and a check character; keys, keyrings and rotation.
 */
export { PublicIdCipher, PublicIdCodec, type PublicIdOptions } from './cipher.js';
export { PUBLIC_ID_FORMAT_VERSION, PUBLIC_ID_TAG_LENGTH, type PublicIdAlphabet } from './format.js';
export { PublicIdKey, generateKey, parseKeys, loadKeysFromEnv, loadKeysFromFile } from './keys.js';
export { FEISTEL_ROUNDS } from './feistel.js';
