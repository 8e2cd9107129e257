// String forms of IDs and JSON helpers that keep 64-bit IDs exact.
export * from './formats.js';
export * from './json.js';
