/** `flurry serve`'s flags and `--help` text, both derived from the settings table. */
import type { FlagSpecs } from '../cli/args.js';
import { CONFIG_ENV } from './env-hints.js';
import { allowedText, SETTINGS } from './settings.js';

/** The flag naming the config file (not a setting in the file). */
export const CONFIG_FLAG = 'config';

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
  );
  lines.push(
    '',
    'Signals: SIGTERM/SIGINT stop accepting, finish in-flight requests, release the lease and exit 0.',
    '',
  );
  return lines.join('\n');
}
