/** Options of {@link UuidGenerator} and their names. */
import { optionNames } from '../known-options.js';
import { POLICY_NAMES, type GeneratorOptions } from '../generator/options.js';
import type { UuidFormatOptions } from './format.js';

/** Options of {@link UuidGenerator}: the node ID (or a lease), the format's widths and {@link Generator}'s policies. */
export interface UuidGeneratorOptions extends UuidFormatOptions, Omit<GeneratorOptions, 'layout' | 'node'> {
  /** The node ID (`0 … 2^nodeBits − 1`), or `{ node: n }` as a lease grants it; required unless `lease` is given. */
  node?: number | Readonly<Record<string, number>>;
}

/** The keys of {@link UuidGeneratorOptions} (any other key: `FLURRY_E_UNKNOWN_OPTION`). */
export const UUID_GENERATOR_OPTION_NAMES = optionNames<UuidGeneratorOptions>({
  node: true,
  nodeBits: true,
  sequenceBits: true,
  ...POLICY_NAMES,
});
