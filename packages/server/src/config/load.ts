// `flurry serve`'s configuration: each value checked against its row of settings.ts, then the
// settings that depend on each other (layout, node pins, registry URL, lease timings).
import { readFileSync } from 'node:fs';
import { FlurryError, type Layout } from '@flurry/core';
import { parseRegistryUrl, redactUrl, resolveRegistryOptions, type RegistryOptions } from '@flurry/coordination';
import { parseCommandLine } from '../cli/args.js';
import { clip, serverError } from '../errors.js';
import { chooseLayout, layoutExpiredReason, parseNodePins } from '../layout-choice.js';
import { CONFIG_ENV, CONFIG_FLAG, serveFlagSpecs } from './help.js';
import {
  allowedText,
  isSettingKey,
  SETTINGS,
  type SettingDef,
  type SettingKey,
  type SettingValues,
} from './settings.js';

/** The validated configuration of one `flurry serve` process (see `flurry serve --help`). */
export interface ServeConfig extends Omit<SettingValues, 'layout' | 'fields' | 'epoch' | 'unit' | 'node'> {
  readonly layout: Layout;
  /** Node pins (`--node`); the other node fields are leased. */
  readonly node: Readonly<Record<string, number>>;
  /** Where the registry URL came from: `'default'` means `file:` was not chosen (see `container.ts`). */
  readonly registrySource: 'flag' | 'env' | 'file' | 'default';
  /** Where the config file came from, if any. */
  readonly configFile: string | undefined;
}

/** The settings that only build the layout: not fields of {@link ServeConfig}. */
const LAYOUT_PARTS: readonly SettingKey[] = ['fields', 'epoch', 'unit'];

/** The keys of {@link ServeConfig}: `startService` refuses any other with `FLURRY_E_UNKNOWN_OPTION`. */
export const SERVE_CONFIG_KEYS: readonly (keyof ServeConfig)[] = Object.freeze([
  ...SETTINGS.map((s) => s.key).filter((k): k is keyof ServeConfig & SettingKey => !LAYOUT_PARTS.includes(k)),
  'registrySource',
  'configFile',
]);

/** The setting behind each registry option. */
const REGISTRY_OPTION_SETTINGS = {
  cluster: 'cluster',
  ttlMs: 'leaseTtlMs',
  renewIntervalMs: 'leaseRenewMs',
  marginMs: 'leaseMarginMs',
  highWaterWaitMs: 'highWaterWaitMs',
  connectTimeoutMs: 'registryConnectTimeoutMs',
} as const satisfies Partial<Record<keyof RegistryOptions, SettingKey>>;

/** The registry options the settings give: the cluster, and the lease timings and connect timeout that are set. */
export function registryOptionsOf(
  config: Pick<SettingValues, (typeof REGISTRY_OPTION_SETTINGS)[keyof typeof REGISTRY_OPTION_SETTINGS]>,
): Partial<RegistryOptions> {
  const set = Object.entries(REGISTRY_OPTION_SETTINGS).map(([option, key]) => [option, config[key]]);
  return Object.fromEntries(set.filter(([, v]) => v !== undefined)) as Partial<RegistryOptions>;
}

/** A value given by a flag, a variable or the config file (`name`: the flag, the variable or the key in the file). */
interface Given {
  readonly value: unknown;
  readonly kind: 'flag' | 'env' | 'file';
  readonly name: string;
}

/**
 * Loads, merges and validates the configuration (flags > `FLURRY_*` variables > config file > defaults).
 *
 * @param now - the clock the layout's end of life is checked against (`FLURRY_E_LAYOUT_EXPIRED`).
 * @throws FlurryError `FLURRY_E_CONFIG` naming the setting, value, source and what is allowed
 * (a setting the offline commands share: the code they give); `FLURRY_E_USAGE` for an unknown flag.
 */
export function loadServeConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  now: () => number = Date.now,
): ServeConfig {
  const parsed = parseCommandLine(argv, serveFlagSpecs());
  if (parsed.positionals.length > 0) {
    throw serverError(
      'USAGE',
      `flurry serve takes no arguments; got "${clip(parsed.positionals[0])}". Settings are flags, e.g. --port 8080. See flurry serve --help.`,
    );
  }
  const configFlag = parsed.values[CONFIG_FLAG]?.at(-1);
  const configPath = configFlag !== undefined ? String(configFlag) : env[CONFIG_ENV] || undefined;
  const file =
    configPath === undefined ? {} : readConfigFile(configPath, configFlag !== undefined ? '--config' : CONFIG_ENV);

  const given: Partial<Record<SettingKey, Given>> = {};
  const out: Partial<Record<SettingKey, unknown>> = {};
  for (const s of SETTINGS) {
    const fromFlag = parsed.values[s.flag]?.at(-1);
    const fromEnv = env[s.env];
    if (fromFlag !== undefined)
      given[s.key] = { value: s.type === 'bool' ? true : fromFlag, kind: 'flag', name: '--' + s.flag };
    else if (fromEnv !== undefined && fromEnv !== '') given[s.key] = { value: fromEnv, kind: 'env', name: s.env };
    else if (Object.prototype.hasOwnProperty.call(file, s.key))
      given[s.key] = { value: file[s.key], kind: 'file', name: `"${s.key}" in ${configPath}` };
    const g = given[s.key];
    out[s.key] = g === undefined ? s.default : coerce(s.key, s, g);
  }
  const values = out as SettingValues;
  const checked = <T>(key: SettingKey, check: () => T): T => {
    try {
      return check();
    } catch (err) {
      throw configError(key, given[key], { cause: err });
    }
  };
  const layout = buildLayout(values, given, now());
  const pins = values.node;
  const node = pins === undefined ? {} : checked('node', () => parseNodePins([pins], layout));
  checked('registry', () => parseRegistryUrl(values.registry));
  // The registries' own rules for the lease timings (renewal at most (TTL − margin)/2, …).
  try {
    resolveRegistryOptions(registryOptionsOf(values));
  } catch (err) {
    const option = err instanceof FlurryError ? String(err.details.option) : '';
    const key: SettingKey = REGISTRY_OPTION_SETTINGS[option as keyof typeof REGISTRY_OPTION_SETTINGS] ?? 'leaseTtlMs';
    throw configError(key, given[key] ?? given.leaseTtlMs, { cause: err });
  }

  const { layout: _layout, fields: _fields, epoch: _epoch, unit: _unit, node: _node, ...rest } = values;
  return Object.freeze({
    ...rest,
    layout,
    node: Object.freeze(node),
    registrySource: given.registry?.kind ?? 'default',
    configFile: configPath,
  });
}

function coerce(key: SettingKey, s: SettingDef, g: Given): number | boolean | string {
  const value = g.value;
  const str = typeof value === 'string' ? value : undefined;
  if (s.type === 'bool') {
    if (typeof value === 'boolean') return value;
    const t = str?.trim().toLowerCase();
    if (t === 'true' || t === '1' || t === 'yes') return true;
    if (t === 'false' || t === '0' || t === 'no') return false;
  } else if (s.type === 'int') {
    const n =
      typeof value === 'number' ? value : str !== undefined && /^\s*[0-9]{1,16}\s*$/.test(str) ? Number(str) : NaN;
    if (Number.isSafeInteger(n) && n >= s.min && n <= s.max) return n;
  } else if (str && str.length <= 4096) {
    if (s.type === 'choice' ? s.choices.includes(str) : (s.pattern?.test(str) ?? true)) return str;
  }
  throw configError(key, g);
}

function buildLayout(v: SettingValues, given: Partial<Record<SettingKey, Given>>, nowMs: number): Layout {
  if (given.layout && given.fields) {
    throw configError('fields', given.fields, {
      code: 'FLURRY_E_USAGE',
      reason: `layout is set too (${JSON.stringify(v.layout)} from ${given.layout.name}); give either a preset or a field list, not both`,
    });
  }
  // The setting to blame: a field list, else the epoch or unit given (the one the error names), else the preset.
  const blame = (code?: string): SettingKey =>
    LAYOUT_PARTS.find(
      (k) => given[k] && (k === 'fields' || code === undefined || code === `FLURRY_E_LAYOUT_${k.toUpperCase()}`),
    ) ?? 'layout';
  let layout: Layout;
  try {
    layout = chooseLayout({ layout: v.layout, fields: v.fields, epoch: v.epoch, unit: v.unit });
  } catch (err) {
    const key = blame(err instanceof FlurryError ? err.code : '');
    throw configError(key, given[key], { cause: err });
  }
  const expired = layoutExpiredReason(layout, nowMs);
  if (expired !== undefined) {
    const key = blame();
    throw configError(key, given[key], {
      code: 'FLURRY_E_LAYOUT_EXPIRED',
      reason: `${expired}, so it cannot issue IDs`,
    });
  }
  return layout;
}

function readConfigFile(file: string, via: string): Record<string, unknown> {
  const refused = (what: string): FlurryError =>
    serverError('CONFIG', `setting config (from ${via}): ${what}`, { setting: 'config', value: file });
  let text: string | undefined;
  let json: unknown;
  try {
    text = readFileSync(file, 'utf8');
    json = JSON.parse(text);
  } catch (err) {
    throw refused(
      text === undefined
        ? `cannot read the config file "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'}); give the path of a readable JSON file`
        : `the config file "${file}" is not valid JSON (${(err as Error).message}); it must be one JSON object such as {"port": 8080}`,
    );
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw refused(`the config file "${file}" must hold one JSON object such as {"port": 8080}`);
  const unknown = Object.keys(json).find((k) => !isSettingKey(k));
  if (unknown !== undefined)
    throw serverError(
      'CONFIG',
      `config file "${file}" has the unknown key "${clip(unknown)}"; allowed keys: ${SETTINGS.map((s) => s.key).join(', ')}`,
      { setting: clip(unknown), file },
    );
  return json as Record<string, unknown>;
}

/** A refused setting: its code, what was wrong (`reason`, default: from `cause`) and what is allowed; `code` to throw instead. */
function configError(
  key: SettingKey,
  g: Given | undefined,
  why: { reason?: string; cause?: unknown; code?: string } = {},
): FlurryError {
  const value = g ? g.value : '(default)';
  const s: SettingDef = SETTINGS.find((row) => row.key === key)!;
  // A registry URL may carry a password (redis://:pw@h:p/0): shown without it, like a secret.
  const safe = key === 'registry' && typeof value === 'string' ? redactUrl(value) : value;
  const shown = s.secret
    ? '(hidden)'
    : typeof safe === 'string'
      ? JSON.stringify(clip(safe))
      : clip(JSON.stringify(safe) ?? String(safe));
  const from = g?.name ?? 'the default';
  const inner = why.cause instanceof FlurryError ? why.cause : undefined;
  const code = why.code ?? (s.code !== undefined ? (inner?.code ?? s.code) : 'FLURRY_E_CONFIG');
  const reason = why.reason ?? (inner ? reasonOf(inner) : undefined);
  const what = allowedText(s).replace(/[.\s]+$/, '');
  return new FlurryError(
    code,
    `invalid setting ${key}: ${shown} (from ${from})${reason ? `: ${reason}` : ' is not allowed'}; allowed: ${what}. Fix it and start again (flurry serve --help lists every setting).`,
    {
      setting: key,
      value: s.secret ? '(hidden)' : safe,
      source: from,
      ...(inner ? { cause: inner.code } : {}),
    },
  );
}

/** What an inner error says was wrong, as one clause: its first sentence, or its range. */
function reasonOf(err: FlurryError): string {
  const { min, max } = err.details;
  if (err.code === 'FLURRY_E_REGISTRY_OPTION' && typeof min === 'number' && typeof max === 'number')
    return `with these lease settings it must be from ${min} to ${max} ms`;
  const first = err.message.split(/(?<=\.)\s+(?=[A-Z])/)[0].replace(/[.;\s]+$/, '');
  return /^[A-Z][a-z]/.test(first) ? first[0].toLowerCase() + first.slice(1) : first;
}
