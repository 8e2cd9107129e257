/** Options of the UUID generators: their names and checks. */
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { POLICY_NAMES, badOption, type GeneratorOptions } from '../generator/options.js';
import { UuidFormat, type UuidFormatOptions } from './format.js';

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

/** The format of a UUID generator's options, checked (`what` names the generator in errors). */
export function uuidFormatOf(opts: UuidGeneratorOptions, what: string): UuidFormat {
  if (opts === null || typeof opts !== 'object') throw badOption('options', opts, 'an object such as { node }');
  assertKnownOptions(opts, UUID_GENERATOR_OPTION_NAMES, `${what} options`);
  return UuidFormat.from(opts);
}

/** A UUID generator (`who`) given no node ID; `more` names another way to get one. */
export function missingNode(format: UuidFormat, who: string, more = ''): FlurryError {
  const range = `0 to ${format.maxNode} with nodeBits = ${format.nodeBits}`;
  return new FlurryError(ErrorCode.NODE_OUT_OF_RANGE, `${who} needs its node ID: pass node (${range})${more}.`, {});
}
