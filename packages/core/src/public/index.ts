// Public IDs: keyed, reversible, fixed-width strings of IDs (docs/public-ids.md); keys, keyrings and rotation.
export { PublicIdCipher, PublicIdCodec, type PublicIdOptions } from './cipher.js';
export { PUBLIC_ID_FORMAT_VERSION, PUBLIC_ID_TAG_LENGTH, type PublicIdAlphabet } from './cipher.js';
export { PublicIdKey, generateKey, parseKeys, loadKeysFromEnv, loadKeysFromFile } from './keys.js';
export { FEISTEL_ROUNDS } from './feistel.js';
