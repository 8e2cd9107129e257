/**
 * String forms of IDs (decimal, hex, Crockford base32, base58, base62, sortable base64url — each with a fixed-width
 * form that sorts like the IDs) and JSON helpers that keep 64-bit IDs exact.
 */
export {
  FORMATS,
  codecs,
  encodeId,
  decodeId,
  getCodec,
  isIdFormat,
  CROCKFORD_ALPHABET,
  BASE58_ALPHABET,
  BASE62_ALPHABET,
  SORTABLE_BASE64URL_ALPHABET,
} from './formats.js';
export type { IdFormat, IdCodec, EncodeOptions, DecodeOptions } from './formats.js';
export { jsonReplacer, jsonReviver, toJSONSafe } from './json.js';
export type { IdKeys, JsonReviver, JsonReviverOptions, JsonSafe } from './json.js';
