/** Layouts: the bit layout of an ID, presets, validation, derived facts, compose/decode and ID parsing. */
export * from './types.js';
export * from './presets.js';
export * from './parse-id.js';
export * from './layout.js';
export type { LayoutParseOptions } from './spec.js';
export { idBounds, maxIdAt, minIdAt, parseTime, type IdBounds } from './bounds.js';
