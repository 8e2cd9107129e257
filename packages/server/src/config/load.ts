/**
 * Loading `flurry serve`'s configuration: flags > `FLURRY_*` variables > config file (JSON)
 * > the table's defaults, each value coerced and checked against its row of the settings
 * table (settings.ts), then the settings that depend on each other (the layout, node pins,
 * the registry URL, the lease timings). A bad value is a `FLURRY_E_CONFIG` error naming the
 * setting, the value, where it came from and what is allowed (the CLI exits 2 with it).
 */
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

/**
 * The validated configuration of one `flurry serve` process: every setting of the table
 * (see `flurry serve --help`), the layout built from `layout`/`fields`/`epoch`/`unit`, the
 * node pins, and where the registry URL and the config file came from.
 */
export interface ServeConfig extends Omit<SettingValues, 'layout' | 'fields' | 'epoch' | 'unit' | 'node'> {
  readonly layout: Layout;
  /** Node pins (`--node`): fields fixed by hand; the rest are leased. */
  readonly node: Readonly<Record<string, number>>;
  /** Where the registry URL came from: `'default'` means `file:` was not chosen (see `container.ts`). */
  readonly registrySource: 'flag' | 'env' | 'file' | 'default';
  /** Where the config file came from, if any. */
  readonly configFile: string | undefined;
}

/** The settings that only build the layout: not fields of {@link ServeConfig}. */
const LAYOUT_PARTS: readonly SettingKey[] = ['fields', 'epoch', 'unit'];

/**
 * The keys of {@link ServeConfig}, derived from the settings table: `startService` refuses any other key
 * (a hand-built config with `clustr`) with `FLURRY_E_UNKNOWN_OPTION` naming the closest valid one.
 */
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

/** Where a value came from: `name` is the flag, the variable or the key in the file. */
interface Source {
  readonly kind: 'flag' | 'env' | 'file' | 'default';
  readonly name: string;
}
const DEFAULT_SOURCE: Source = { kind: 'default', name: 'default' };

/** A value as given (before coercion) and where it came from. */
interface Given {
  readonly value: unknown;
  readonly source: Source;
}

/**
 * Loads, merges and validates the configuration (flags > `FLURRY_*` variables > config
 * file > defaults).
 *
 * @param now - the clock the layout's end of life is checked against (a layout whose time has
 * run out is refused with `FLURRY_E_LAYOUT_EXPIRED`).
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
  const configFlag = parsed.values[CONFIG_FLAG];
  const configPath = configFlag?.length ? String(configFlag[configFlag.length - 1]) : env[CONFIG_ENV] || undefined;
  const file = configPath === undefined ? {} : readConfigFile(configPath, configFlag?.length ? '--config' : CONFIG_ENV);

  // Where each setting comes from: its flag, else its variable, else the file.
  const given: Partial<Record<SettingKey, Given>> = {};
  for (const s of SETTINGS) {
    const fromFlag = parsed.values[s.flag];
    const fromEnv = env[s.env];
    if (fromFlag?.length)
      given[s.key] = {
        value: s.type === 'bool' ? true : fromFlag[fromFlag.length - 1],
        source: { kind: 'flag', name: '--' + s.flag },
      };
    else if (fromEnv !== undefined && fromEnv !== '')
      given[s.key] = { value: fromEnv, source: { kind: 'env', name: s.env } };
    else if (Object.prototype.hasOwnProperty.call(file, s.key))
      given[s.key] = { value: file[s.key], source: { kind: 'file', name: `"${s.key}" in ${configPath}` } };
  }
  const values = coerceAll(given);
  // The checks behind a setting's own: a refusal names the setting as given.
  const checked = <T>(key: SettingKey, check: () => T): T => {
    try {
      return check();
    } catch (err) {
      throw configError(key, values[key], given[key]?.source ?? DEFAULT_SOURCE, { cause: err });
    }
  };
  const layout = buildLayout(values, given, now());
  const pins = values.node;
  const node = pins === undefined ? {} : checked('node', () => parseNodePins([pins], layout));
  checked('registry', () => parseRegistryUrl(values.registry));
  checkLeaseTimings(values, given);

  const { layout: _layout, fields: _fields, epoch: _epoch, unit: _unit, node: _node, ...rest } = values;
  return Object.freeze({
    ...rest,
    layout,
    node: Object.freeze(node),
    registrySource: given.registry?.source.kind ?? 'default',
    configFile: configPath,
  });
}

/** Every setting's value: coerced and checked against its row, or the row's default. */
function coerceAll(given: Partial<Record<SettingKey, Given>>): SettingValues {
  const out: Partial<Record<SettingKey, unknown>> = {};
  for (const s of SETTINGS) {
    const g = given[s.key];
    out[s.key] = g === undefined ? s.default : coerce(s.key, s, g);
  }
  // Each value was checked against its row's type (or is the row's default).
  return out as SettingValues;
}

function coerce(key: SettingKey, s: SettingDef, { value, source }: Given): number | boolean | string {
  switch (s.type) {
    case 'bool': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string') {
        const t = value.trim().toLowerCase();
        if (t === 'true' || t === '1' || t === 'yes') return true;
        if (t === 'false' || t === '0' || t === 'no') return false;
      }
      throw configError(key, value, source);
    }
    case 'int': {
      let n: number;
      if (typeof value === 'number') n = value;
      else if (typeof value === 'string' && /^\s*[0-9]{1,16}\s*$/.test(value)) n = Number(value);
      else throw configError(key, value, source);
      if (!Number.isSafeInteger(n) || n < s.min || n > s.max) throw configError(key, value, source);
      return n;
    }
    case 'choice':
    case 'string': {
      if (typeof value !== 'string' || value.length === 0 || value.length > 4096) throw configError(key, value, source);
      if (s.type === 'choice' && !s.choices.includes(value)) throw configError(key, value, source);
      if (s.type === 'string' && s.pattern && !s.pattern.test(value)) throw configError(key, value, source);
      return value;
    }
  }
}

function buildLayout(v: SettingValues, given: Partial<Record<SettingKey, Given>>, nowMs: number): Layout {
  if (given.layout && given.fields) {
    const other = given.layout.source.kind === 'default' ? 'the default' : given.layout.source.name;
    throw configError('fields', given.fields.value, given.fields.source, {
      code: 'FLURRY_E_USAGE',
      reason: `layout is set too (${JSON.stringify(v.layout)} from ${other}); give either a preset or a field list, not both`,
    });
  }
  let layout: Layout;
  try {
    layout = chooseLayout({ layout: v.layout, fields: v.fields, epoch: v.epoch, unit: v.unit });
  } catch (err) {
    const key: SettingKey = given.fields
      ? 'fields'
      : given.epoch && hasCode(err, 'FLURRY_E_LAYOUT_EPOCH')
        ? 'epoch'
        : given.unit && hasCode(err, 'FLURRY_E_LAYOUT_UNIT')
          ? 'unit'
          : 'layout';
    throw refused(key, given[key], { cause: err });
  }
  const expired = layoutExpiredReason(layout, nowMs);
  if (expired !== undefined) {
    const key: SettingKey = given.fields ? 'fields' : given.epoch ? 'epoch' : given.unit ? 'unit' : 'layout';
    throw refused(key, given[key], { code: 'FLURRY_E_LAYOUT_EXPIRED', reason: `${expired}, so it cannot issue IDs` });
  }
  return layout;
}

/** The registries' own rules for the lease timings (renewal at most (TTL − margin)/2, …). */
function checkLeaseTimings(v: SettingValues, given: Partial<Record<SettingKey, Given>>): void {
  try {
    resolveRegistryOptions(registryOptionsOf(v));
  } catch (err) {
    const option = err instanceof FlurryError ? String(err.details.option) : '';
    const key: SettingKey = REGISTRY_OPTION_SETTINGS[option as keyof typeof REGISTRY_OPTION_SETTINGS] ?? 'leaseTtlMs';
    throw refused(key, given[key] ?? given.leaseTtlMs, { cause: err });
  }
}

function readConfigFile(file: string, via: string): Record<string, unknown> {
  const refused = (what: string): FlurryError =>
    serverError('CONFIG', `setting config (from ${via}): ${what}`, { setting: 'config', value: file });
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw refused(`cannot read the config file "${file}" (${code}); give the path of a readable JSON file`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw refused(
      `the config file "${file}" is not valid JSON (${(err as Error).message}); it must be one JSON object such as {"port": 8080}`,
    );
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw refused(`the config file "${file}" must hold one JSON object such as {"port": 8080}`);
  const record = json as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    if (!isSettingKey(k)) {
      throw serverError(
        'CONFIG',
        `config file "${file}" has the unknown key "${clip(k)}"; allowed keys: ${SETTINGS.map((s) => s.key).join(', ')}`,
        { setting: clip(k), file },
      );
    }
  }
  return record;
}

/** What went wrong beyond "not allowed", and the error behind it. */
interface Why {
  /** One sentence on what was wrong (default: from `cause`). */
  readonly reason?: string;
  /** The error that refused the value (its code is kept in `details.cause`, never in the message). */
  readonly cause?: unknown;
  /** The code to throw instead of the setting's own. */
  readonly code?: string;
}

/** {@link configError} for a value as given (or the default when not given). */
const refused = (key: SettingKey, g: Given | undefined, why: Why): FlurryError =>
  configError(key, g?.value ?? '(default)', g?.source ?? DEFAULT_SOURCE, why);

/**
 * A refused setting: one code (the setting's, shared with the offline commands, or
 * `FLURRY_E_CONFIG`), one sentence of what was wrong, one of what is allowed.
 */
function configError(key: SettingKey, value: unknown, source: Source, why: Why = {}): FlurryError {
  const s: SettingDef = SETTINGS.find((row) => row.key === key)!;
  // A registry URL may carry a password (redis://:pw@h:p/0): shown without it, like a secret.
  const safe = key === 'registry' && typeof value === 'string' ? redactUrl(value) : value;
  const shown = s.secret
    ? '(hidden)'
    : typeof safe === 'string'
      ? JSON.stringify(clip(safe))
      : clip(JSON.stringify(safe) ?? String(safe));
  const from = source.kind === 'default' ? 'the default' : source.name;
  const inner = why.cause instanceof FlurryError ? why.cause : undefined;
  // A setting the offline commands share keeps the code they give for the same mistake.
  const code = why.code ?? (s.code !== undefined ? (inner?.code ?? s.code) : 'FLURRY_E_CONFIG');
  const reason = why.reason ?? (inner ? reasonOf(inner) : undefined);
  // An embedded sentence may end with its own period: never write "..".
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

function hasCode(err: unknown, code: string): boolean {
  return err instanceof FlurryError && err.code === code;
}
