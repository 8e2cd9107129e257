/**
 * Layouts: the bit layout of an ID, presets, validation, derived facts, compose/decode
 * and ID parsing.
 *
 * @example
 * ```ts
 * import { Layout, parseId } from '@flurry/core';
 * const l = Layout.from('twitter');
 * l.decode(parseId('1541815603606036480', l));
 * ```
 */
export * from './types.js';
export * from './presets.js';
export * from './parse-id.js';
export * from './layout.js';
export * from './spec-options.js';
export * from './bounds.js';
