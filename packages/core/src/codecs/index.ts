/**
 * String forms of IDs (decimal, hex, Crockford base32, base58, base62, sortable base64url — each with a fixed-width
 * form that sorts like the IDs) and JSON helpers that keep 64-bit IDs exact.
 */
export * from './formats.js';
export * from './json.js';
