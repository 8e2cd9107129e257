/**
 * "Did you mean …?" for `FLURRY_*` environment variables that are no setting (warned about, since
 * the environment is shared with other tools; unknown flags: `closestName` in ../cli/args.ts).
 */
import { closestName } from '../cli/args.js';
import { clip } from '../errors.js';
import { SETTINGS } from './settings.js';

/** The variable naming the config file (not a setting in the file). */
export const CONFIG_ENV = 'FLURRY_CONFIG';

/**
 * Every `FLURRY_*` environment variable Flurry reads: each setting's variable and
 * `FLURRY_CONFIG` (`FLURRY_PUBLIC_KEY`/`FLURRY_PUBLIC_KEY_FILE`, also read by the core's
 * `keysFromEnv`, are settings).
 */
export const KNOWN_ENV: readonly string[] = Object.freeze([...SETTINGS.map((s) => s.env), CONFIG_ENV]);

/** One unknown `FLURRY_*` environment variable found by {@link unknownEnvWarnings}. */
export interface EnvWarning {
  /** The variable as set. */
  readonly variable: string;
  /** The closest known variable, when one is close enough to be a likely misspelling. */
  readonly suggestion: string | undefined;
  /** The warning text, e.g. `FLURRY_REGSITRY is not a flurry setting and is ignored; did you mean FLURRY_REGISTRY?`. */
  readonly message: string;
}

/**
 * The `FLURRY_*` environment variables (any case) that are not a known setting (see
 * {@link KNOWN_ENV}), each with the closest known name when one is near. These are warnings, not errors (unlike unknown
 * config-file keys): the environment is shared with other tools and scripts.
 */
export function unknownEnvWarnings(env: NodeJS.ProcessEnv): EnvWarning[] {
  const known = new Set(KNOWN_ENV);
  const out: EnvWarning[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.toUpperCase().startsWith('FLURRY_') || known.has(name)) continue; // flurry_port too: names are case-sensitive
    const suggestion = closestName(name.toUpperCase(), KNOWN_ENV, 'FLURRY_'.length);
    const shown = clip(name);
    out.push({
      variable: shown,
      suggestion,
      message: `${shown} is not a flurry setting and is ignored; ${suggestion !== undefined ? `did you mean ${suggestion}?` : 'flurry serve --help lists the FLURRY_* variables.'}`,
    });
  }
  return out;
}
