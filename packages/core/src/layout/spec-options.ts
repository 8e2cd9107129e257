/**
 * The keys a layout spec, each of its fields and `Layout.parse` options may have: anything else (`epoc`,
 * `{ name, bit }`) is refused with `FLURRY_E_UNKNOWN_OPTION` naming the closest valid key, instead of being
 * ignored (a misspelt `epoch` would silently move every ID's time).
 */
import { assertKnownOptions, optionNames } from '../known-options.js';
import type { FieldSpec, LayoutSpec } from './types.js';

/** Options of `Layout.parse`. */
export interface LayoutParseOptions {
  epoch?: string | number;
  unit?: string;
  name?: string;
}

export const LAYOUT_SPEC_OPTION_NAMES = optionNames<LayoutSpec>({ name: true, fields: true, epoch: true, unit: true });
export const FIELD_SPEC_OPTION_NAMES = optionNames<FieldSpec>({ name: true, bits: true });
export const LAYOUT_PARSE_OPTION_NAMES = optionNames<LayoutParseOptions>({ epoch: true, unit: true, name: true });

/** Refuses unknown keys in a layout spec and in each of its fields (`FLURRY_E_UNKNOWN_OPTION`). */
export function assertLayoutSpecKeys(spec: LayoutSpec): void {
  assertKnownOptions(spec, LAYOUT_SPEC_OPTION_NAMES, 'The layout spec');
  spec.fields.forEach((f, i) => assertKnownOptions(f, FIELD_SPEC_OPTION_NAMES, `Layout field ${i + 1}`));
}
