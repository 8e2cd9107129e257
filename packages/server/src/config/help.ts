// `flurry serve`'s flags and `--help` from the settings table, and warnings for unknown `FLURRY_*` variables.
import { closestName, type FlagSpecs } from '../cli/args.js';
import { clip } from '../errors.js';
import { allowedText, SETTINGS } from './settings.js';

/** The flag and the variable naming the config file (not settings in the file). */
export const CONFIG_FLAG = 'config';
export const CONFIG_ENV = 'FLURRY_CONFIG';

/** Every `FLURRY_*` environment variable Flurry reads: each setting's and `FLURRY_CONFIG`. */
export const KNOWN_ENV: readonly string[] = Object.freeze([...SETTINGS.map((s) => s.env), CONFIG_ENV]);

/** One unknown `FLURRY_*` environment variable found by {@link unknownEnvWarnings}. */
export interface EnvWarning {
  readonly variable: string;
  /** The closest known variable, when one is close enough to be a likely misspelling. */
  readonly suggestion: string | undefined;
  readonly message: string;
}

/** The `FLURRY_*` variables (any case) that are no setting, with the nearest known name: warnings, as other tools share the environment. */
export function unknownEnvWarnings(env: NodeJS.ProcessEnv): EnvWarning[] {
  // flurry_port too: names are case-sensitive.
  const unknown = Object.keys(env).filter((k) => k.toUpperCase().startsWith('FLURRY_') && !KNOWN_ENV.includes(k));
  return unknown.sort().map((name) => {
    const suggestion = closestName(name.toUpperCase(), KNOWN_ENV, 'FLURRY_'.length);
    const shown = clip(name);
    const hint =
      suggestion !== undefined ? `did you mean ${suggestion}?` : 'flurry serve --help lists the FLURRY_* variables.';
    return { variable: shown, suggestion, message: `${shown} is not a flurry setting and is ignored; ${hint}` };
  });
}

/** The flags `flurry serve` accepts (every setting, `--config`, `--help`). */
export function serveFlagSpecs(): FlagSpecs {
  return {
    ...Object.fromEntries(SETTINGS.map((s) => [s.flag, { type: s.type === 'bool' ? 'boolean' : 'string' }])),
    [CONFIG_FLAG]: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  };
}

/** The text of `flurry serve --help`: usage, then every setting with its flag, variable, allowed values and default. */
export function serveHelp(): string {
  const lines = [
    'Usage: flurry serve [settings]',
    '',
    'Serves IDs over HTTP (and optionally Thrift). Each setting comes from its flag, else its',
    'FLURRY_* environment variable, else the JSON config file (--config FILE or FLURRY_CONFIG;',
    'keys as named below), else its default. Bad values stop the server with exit code 2.',
    '',
    'Settings:',
  ];
  for (const s of SETTINGS) {
    lines.push(`  --${s.flag}${s.type === 'bool' ? '' : ' VALUE'}   (${s.env}; config key "${s.key}")`);
    lines.push(`      ${s.help}`);
    lines.push(`      Allowed: ${allowedText(s)}.`);
    lines.push(`      Default: ${s.default !== undefined ? String(s.default) : (s.defaultText ?? '(none)')}`);
  }
  lines.push(
    `  --${CONFIG_FLAG} FILE   (${CONFIG_ENV})`,
    '      A JSON object of settings by key, e.g. {"port": 8080, "registry": "redis://127.0.0.1:6379/0"}.',
    '      Default: (none)',
    '',
    'Signals: SIGTERM/SIGINT stop accepting, finish in-flight requests, release the lease and exit 0.',
    '',
  );
  return lines.join('\n');
}
