/**
 * The settings of `flurry serve`: one table ({@link SETTINGS}) names each setting's flag,
 * `FLURRY_*` variable, config-file key, default and allowed values. {@link loadServeConfig}
 * merges flags > environment > config file (JSON) > defaults and validates every value at
 * start-up: a bad value is a `FLURRY_E_CONFIG` error naming the setting, the value, where it
 * came from and what is allowed (the CLI exits 2 with it). {@link serveHelp} prints the
 * table for `flurry serve --help`.
 *
 * @example
 * ```ts
 * const config = loadServeConfig(['--port', '9000'], process.env);
 * config.port;     // 9000
 * config.registry; // 'file:' unless FLURRY_REGISTRY or the config file says otherwise
 * ```
 */
import { readFileSync } from 'node:fs';
import { FlurryError, type Layout } from '@flurry/core';
import { parseRegistryUrl, redactUrl, resolveRegistryOptions } from '@flurry/coordination';
import { parseCommandLine, type FlagSpecs } from './cli/args.js';
import { serverError } from './errors.js';
import { chooseLayout, parseNodePins } from './layout-choice.js';

/**
 * The validated configuration of one `flurry serve` process.
 *
 * @example
 * ```ts
 * const config: ServeConfig = loadServeConfig(['--port', '0'], process.env);
 * ```
 */
export interface ServeConfig {
  readonly host: string;
  readonly port: number;
  readonly layout: Layout;
  /** Node pins (`--node`): fields fixed by hand; the rest are leased. */
  readonly node: Readonly<Record<string, number>>;
  readonly registry: string;
  /** Where the registry URL came from: `'default'` means `file:` was not chosen (see `container.ts`). */
  readonly registrySource: 'flag' | 'env' | 'file' | 'default';
  readonly cluster: string;
  readonly leaseTtlMs: number | undefined;
  readonly leaseRenewMs: number | undefined;
  readonly leaseMarginMs: number | undefined;
  readonly highWaterWaitMs: number | undefined;
  readonly registryConnectTimeoutMs: number | undefined;
  readonly onExhausted: 'wait' | 'borrow' | undefined;
  readonly onClockBackwards: 'tolerate' | 'wait' | 'throw' | undefined;
  readonly sequenceStart: 'zero' | 'random' | undefined;
  readonly thriftPort: number | undefined;
  readonly token: string | undefined;
  readonly authHealth: boolean;
  readonly maxBatch: number;
  readonly maxUrlBytes: number;
  readonly maxBodyBytes: number;
  readonly publicKey: string | undefined;
  readonly publicKeyFile: string | undefined;
  readonly logLevel: LogLevel;
  readonly allowRoot: boolean;
  readonly shutdownTimeoutMs: number;
  /** Where the config file came from, if any. */
  readonly configFile: string | undefined;
}

/**
 * pino's levels.
 *
 * @example
 * ```ts
 * const level: LogLevel = 'info';
 * ```
 */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

type Kind = 'string' | 'int' | 'bool';
type Source = { kind: 'flag' | 'env' | 'file' | 'default'; name: string };

/**
 * One setting of `flurry serve`.
 *
 * @example
 * ```ts
 * const port: SettingDef | undefined = SETTINGS.find((s) => s.key === 'port');
 * ```
 */
export interface SettingDef {
  /** Config-file key and field of {@link ServeConfig} (or of the layout choice). */
  readonly key: string;
  /** Command-line flag without `--`. */
  readonly flag: string;
  /** Environment variable. */
  readonly env: string;
  readonly kind: Kind;
  /** The default value as shown in `--help` and docs/service-api.md. */
  readonly defaultText: string;
  /** What values are allowed, as shown in errors and `--help`. */
  readonly allowed: string;
  /** One line on what it does. */
  readonly help: string;
  /** Hide the value in errors and logs (secrets). */
  readonly secret?: boolean;
  /** Integer bounds for `int` settings. */
  readonly min?: number;
  readonly max?: number;
  /** Allowed values for enumerated string settings. */
  readonly choices?: readonly string[];
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Every setting, in `--help` order.
 *
 * @example
 * ```ts
 * SETTINGS.find((s) => s.key === 'port')?.env; // 'FLURRY_PORT'
 * ```
 */
export const SETTINGS: readonly SettingDef[] = Object.freeze([
  {
    key: 'host',
    flag: 'host',
    env: 'FLURRY_HOST',
    kind: 'string',
    defaultText: '127.0.0.1',
    allowed: 'an IP address or host name to listen on',
    help: 'HTTP listen address (0.0.0.0 for every interface).',
  },
  {
    key: 'port',
    flag: 'port',
    env: 'FLURRY_PORT',
    kind: 'int',
    min: 0,
    max: 65535,
    defaultText: '8080',
    allowed: 'an integer from 0 to 65535 (0 = any free port, logged at start-up)',
    help: 'HTTP listen port.',
  },
  {
    key: 'layout',
    flag: 'layout',
    env: 'FLURRY_LAYOUT',
    kind: 'string',
    choices: ['twitter', 'leaf', 'discord', 'sonyflake', 'instagram', 'js53'],
    defaultText: 'twitter',
    allowed: 'one of twitter, leaf, discord, sonyflake, instagram, js53',
    help: 'Bit layout preset (or use fields).',
  },
  {
    key: 'fields',
    flag: 'fields',
    env: 'FLURRY_FIELDS',
    kind: 'string',
    defaultText: '(none: the preset)',
    allowed: 'a field list such as timestamp:41,datacenter:5,worker:5,sequence:12 (at most 64 bits)',
    help: 'Custom layout, most significant field first; replaces layout.',
  },
  {
    key: 'epoch',
    flag: 'epoch',
    env: 'FLURRY_EPOCH',
    kind: 'string',
    defaultText: "(the preset's epoch)",
    allowed: 'an ISO date (2020-01-01T00:00:00Z) or Unix milliseconds, not in the future',
    help: 'Epoch of the timestamp field.',
  },
  {
    key: 'unit',
    flag: 'unit',
    env: 'FLURRY_UNIT',
    kind: 'string',
    choices: ['1ms', '10ms', '1s'],
    defaultText: "(the preset's unit, 1ms for fields)",
    allowed: 'one of 1ms, 10ms, 1s',
    help: 'Time unit of the timestamp field.',
  },
  {
    key: 'node',
    flag: 'node',
    env: 'FLURRY_NODE',
    kind: 'string',
    defaultText: '(none: every node field is leased)',
    allowed: 'FIELD=VALUE pairs separated by commas, e.g. datacenter=1',
    help: 'Pin node fields by hand; the registry still leases the result.',
  },
  {
    key: 'registry',
    flag: 'registry',
    env: 'FLURRY_REGISTRY',
    kind: 'string',
    defaultText: 'file:',
    allowed:
      'a registry URL: file:, file:/dir, zookeeper://h:p/path, zookeeper+leaf://h:p/path, etcd://h:p/prefix, redis://h:p/db, static:N, k8s:',
    help: 'Where node-ID leases come from.',
  },
  {
    key: 'cluster',
    flag: 'cluster',
    env: 'FLURRY_CLUSTER',
    kind: 'string',
    defaultText: 'default',
    allowed: '1 to 64 characters from A-Z a-z 0-9 _ . -',
    help: 'Cluster name: node IDs are unique within it.',
  },
  {
    key: 'leaseTtlMs',
    flag: 'lease-ttl-ms',
    env: 'FLURRY_LEASE_TTL_MS',
    kind: 'int',
    min: 100,
    max: 3_600_000,
    defaultText: '10000',
    allowed: 'an integer from 100 to 3600000 (ms)',
    help: 'Lease time-to-live: how long a silent holder keeps its node ID.',
  },
  {
    key: 'leaseRenewMs',
    flag: 'lease-renew-ms',
    env: 'FLURRY_LEASE_RENEW_MS',
    kind: 'int',
    min: 10,
    max: 3_600_000,
    defaultText: '(a third of the TTL)',
    allowed: 'an integer from 10 to (TTL - margin) / 2 (ms)',
    help: 'Lease renewal interval.',
  },
  {
    key: 'leaseMarginMs',
    flag: 'lease-margin-ms',
    env: 'FLURRY_LEASE_MARGIN_MS',
    kind: 'int',
    min: 0,
    max: 3_600_000,
    defaultText: '(the smaller of 1000 and a fifth of the TTL)',
    allowed: 'an integer from 0 to half the TTL (ms)',
    help: 'Safety margin taken off the lease deadline.',
  },
  {
    key: 'highWaterWaitMs',
    flag: 'high-water-wait-ms',
    env: 'FLURRY_HIGH_WATER_WAIT_MS',
    kind: 'int',
    min: 0,
    max: 600_000,
    defaultText: '5000',
    allowed: 'an integer from 0 to 600000 (ms)',
    help: "How long start-up may wait for the clock to pass the node's high-water mark.",
  },
  {
    key: 'registryConnectTimeoutMs',
    flag: 'registry-connect-timeout-ms',
    env: 'FLURRY_REGISTRY_CONNECT_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    max: 120_000,
    defaultText: '5000',
    allowed: 'an integer from 100 to 120000 (ms)',
    help: 'How long connecting to the registry engine (ZooKeeper, etcd, Redis) and each of its operations may take.',
  },
  {
    key: 'onExhausted',
    flag: 'on-exhausted',
    env: 'FLURRY_ON_EXHAUSTED',
    kind: 'string',
    choices: ['wait', 'borrow'],
    defaultText: 'borrow',
    allowed: 'wait or borrow',
    help: 'When a tick runs out of sequence numbers (batch load): borrow ticks up to 1 s ahead of the clock (full rate), or wait for the next tick (timestamps never ahead of real time).',
  },
  {
    key: 'onClockBackwards',
    flag: 'on-clock-backwards',
    env: 'FLURRY_ON_CLOCK_BACKWARDS',
    kind: 'string',
    choices: ['tolerate', 'wait', 'throw'],
    defaultText: 'tolerate',
    allowed: 'tolerate, wait or throw',
    help: 'What to do when the wall clock steps back (tolerate: continue in the last tick, borrowing up to 1 s ahead).',
  },
  {
    key: 'sequenceStart',
    flag: 'sequence-start',
    env: 'FLURRY_SEQUENCE_START',
    kind: 'string',
    choices: ['zero', 'random'],
    defaultText: 'zero',
    allowed: 'zero or random',
    help: 'Start each tick at 0, or at a small random value so id % N stays even at low load.',
  },
  {
    key: 'thriftPort',
    flag: 'thrift-port',
    env: 'FLURRY_THRIFT_PORT',
    kind: 'int',
    min: 0,
    max: 65535,
    defaultText: '(off; Twitter used 7609)',
    allowed: 'an integer from 0 to 65535',
    help: "Serve Twitter Snowflake's Thrift API on this port.",
  },
  {
    key: 'token',
    flag: 'token',
    env: 'FLURRY_TOKEN',
    kind: 'string',
    secret: true,
    defaultText: '(none: no authentication)',
    allowed: 'a bearer token of 16 to 512 printable ASCII characters without spaces',
    help: 'Require "Authorization: Bearer TOKEN" on the ID routes (prefer the variable: flags show in ps).',
  },
  {
    key: 'authHealth',
    flag: 'auth-health',
    env: 'FLURRY_AUTH_HEALTH',
    kind: 'bool',
    defaultText: 'false',
    allowed: 'true or false (1/0, yes/no)',
    help: 'Require the token on /healthz, /readyz and /metrics too.',
  },
  {
    key: 'maxBatch',
    flag: 'max-batch',
    env: 'FLURRY_MAX_BATCH',
    kind: 'int',
    min: 1,
    max: 1_000_000,
    defaultText: '10000',
    allowed: 'an integer from 1 to 1000000',
    help: 'Largest count of GET /v1/ids.',
  },
  {
    key: 'maxUrlBytes',
    flag: 'max-url-bytes',
    env: 'FLURRY_MAX_URL_BYTES',
    kind: 'int',
    min: 64,
    max: 16_384,
    defaultText: '4096',
    allowed: 'an integer from 64 to 16384',
    help: 'Longest request target (path + query); longer is 414.',
  },
  {
    key: 'maxBodyBytes',
    flag: 'max-body-bytes',
    env: 'FLURRY_MAX_BODY_BYTES',
    kind: 'int',
    min: 0,
    max: 1_048_576,
    defaultText: '1024',
    allowed: 'an integer from 0 to 1048576',
    help: 'Largest request body accepted (the API reads none); larger is 413.',
  },
  {
    key: 'publicKey',
    flag: 'public-key',
    env: 'FLURRY_PUBLIC_KEY',
    kind: 'string',
    secret: true,
    defaultText: '(none: public IDs off)',
    allowed: 'a key printed by "flurry key new" (several separated by commas for rotation)',
    help: 'Enable /v1/public-ids with this key.',
  },
  {
    key: 'publicKeyFile',
    flag: 'public-key-file',
    env: 'FLURRY_PUBLIC_KEY_FILE',
    kind: 'string',
    defaultText: '(none)',
    allowed: 'the path of a file holding the keyring (keys separated by new lines or commas; # comments)',
    help: 'Read the public-ID keyring from a file (used when publicKey is not set).',
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    env: 'FLURRY_LOG_LEVEL',
    kind: 'string',
    choices: LOG_LEVELS,
    defaultText: 'info',
    allowed: LOG_LEVELS.join(', '),
    help: 'Log level (JSON lines on stdout; requests are logged at debug).',
  },
  {
    key: 'allowRoot',
    flag: 'allow-root',
    env: 'FLURRY_ALLOW_ROOT',
    kind: 'bool',
    defaultText: 'false',
    allowed: 'true or false (1/0, yes/no)',
    help: 'Allow running as root (refused otherwise).',
  },
  {
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout-ms',
    env: 'FLURRY_SHUTDOWN_TIMEOUT_MS',
    kind: 'int',
    min: 0,
    max: 600_000,
    defaultText: '10000',
    allowed: 'an integer from 0 to 600000 (ms)',
    help: 'On SIGTERM, how long in-flight requests may take before connections are cut.',
  },
] satisfies SettingDef[]);

/** The flag of the config file itself (not a setting in the file). */
const CONFIG_FLAG = 'config';
const CONFIG_ENV = 'FLURRY_CONFIG';

/**
 * The flags `flurry serve` accepts (every setting, `--config`, `--help`).
 *
 * @example
 * ```ts
 * serveFlagSpecs()['port']; // { type: 'string' }
 * ```
 */
export function serveFlagSpecs(): FlagSpecs {
  const spec: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const s of SETTINGS) spec[s.flag] = { type: s.kind === 'bool' ? 'boolean' : 'string' };
  spec[CONFIG_FLAG] = { type: 'string' };
  spec['help'] = { type: 'boolean', short: 'h' };
  return spec;
}

/**
 * Loads, merges and validates the configuration (flags > `FLURRY_*` variables > config
 * file > defaults).
 *
 * @throws FlurryError `FLURRY_E_CONFIG` naming the setting, value, source and what is allowed;
 * `FLURRY_E_USAGE` for an unknown flag.
 * @example
 * ```ts
 * loadServeConfig(['--layout', 'leaf'], { FLURRY_PORT: '9000' }).port; // 9000
 * ```
 */
export function loadServeConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ServeConfig {
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

  const raw: Record<string, { value: unknown; source: Source }> = {};
  for (const s of SETTINGS) {
    const fromFlag = parsed.values[s.flag];
    if (fromFlag?.length)
      raw[s.key] = {
        value: s.kind === 'bool' ? true : fromFlag[fromFlag.length - 1],
        source: { kind: 'flag', name: '--' + s.flag },
      };
    else if (env[s.env] !== undefined && env[s.env] !== '')
      raw[s.key] = { value: env[s.env], source: { kind: 'env', name: s.env } };
    else if (Object.prototype.hasOwnProperty.call(file, s.key))
      raw[s.key] = { value: file[s.key], source: { kind: 'file', name: `"${s.key}" in ${configPath}` } };
  }

  const v: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const r = raw[s.key];
    if (r !== undefined) v[s.key] = coerce(s, r.value, r.source);
  }

  let layout: Layout;
  try {
    layout = chooseLayout({
      layout: v.layout as string | undefined,
      fields: v.fields as string | undefined,
      epoch: v.epoch as string | undefined,
      unit: v.unit as string | undefined,
    });
  } catch (err) {
    const key = raw.fields
      ? 'fields'
      : raw.epoch && isEpochError(err)
        ? 'epoch'
        : raw.unit && isUnitError(err)
          ? 'unit'
          : raw.fields
            ? 'fields'
            : 'layout';
    const r = raw[key];
    throw configError(
      key,
      r?.value ?? '(default)',
      r?.source ?? { kind: 'default', name: 'default' },
      describe(err),
      err,
    );
  }

  let node: Record<string, number> = {};
  if (v.node !== undefined) {
    try {
      node = parseNodePins([v.node as string], layout);
    } catch (err) {
      throw configError('node', raw.node.value, raw.node.source, describe(err), err);
    }
  }

  const cluster = (v.cluster as string | undefined) ?? 'default';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(cluster)) throw configError('cluster', cluster, raw.cluster.source);
  const token = v.token as string | undefined;
  if (token !== undefined && !/^[\x21-\x7e]{16,512}$/.test(token)) throw configError('token', token, raw.token.source);
  const host = (v.host as string | undefined) ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(host) && !/^\[[0-9A-Fa-f:.]+\]$/.test(host))
    throw configError('host', host, raw.host.source);
  const registry = (v.registry as string | undefined) ?? 'file:';
  try {
    parseRegistryUrl(registry);
  } catch (err) {
    throw configError(
      'registry',
      registry,
      raw.registry?.source ?? { kind: 'default', name: 'default' },
      `${SETTINGS_BY_KEY.registry.allowed} (${describe(err)})`,
      err,
    );
  }

  // The registries' own rules for the lease timings (renewal at most (TTL − margin)/2, …).
  const ttl = v.leaseTtlMs as number | undefined;
  const timing: Record<string, string> = {
    ttlMs: 'leaseTtlMs',
    renewIntervalMs: 'leaseRenewMs',
    marginMs: 'leaseMarginMs',
    highWaterWaitMs: 'highWaterWaitMs',
  };
  try {
    resolveRegistryOptions({
      cluster: (v.cluster as string | undefined) ?? 'default',
      ttlMs: ttl,
      renewIntervalMs: v.leaseRenewMs as number | undefined,
      marginMs: v.leaseMarginMs as number | undefined,
      highWaterWaitMs: v.highWaterWaitMs as number | undefined,
    });
  } catch (err) {
    const option = err instanceof FlurryError ? String(err.details.option ?? '') : '';
    const key = timing[option] ?? (option === 'cluster' ? 'cluster' : 'leaseTtlMs');
    const r = raw[key] ?? raw.leaseTtlMs;
    throw configError(
      key,
      r?.value ?? '(default)',
      r?.source ?? { kind: 'default', name: 'default' },
      describe(err),
      err,
    );
  }

  return Object.freeze({
    host,
    port: (v.port as number | undefined) ?? 8080,
    layout,
    node: Object.freeze(node),
    registry,
    registrySource: raw.registry?.source.kind ?? 'default',
    cluster,
    leaseTtlMs: ttl,
    leaseRenewMs: v.leaseRenewMs as number | undefined,
    leaseMarginMs: v.leaseMarginMs as number | undefined,
    highWaterWaitMs: v.highWaterWaitMs as number | undefined,
    registryConnectTimeoutMs: v.registryConnectTimeoutMs as number | undefined,
    onExhausted: v.onExhausted as ServeConfig['onExhausted'],
    onClockBackwards: v.onClockBackwards as ServeConfig['onClockBackwards'],
    sequenceStart: v.sequenceStart as ServeConfig['sequenceStart'],
    thriftPort: v.thriftPort as number | undefined,
    token,
    authHealth: (v.authHealth as boolean | undefined) ?? false,
    maxBatch: (v.maxBatch as number | undefined) ?? 10_000,
    maxUrlBytes: (v.maxUrlBytes as number | undefined) ?? 4096,
    maxBodyBytes: (v.maxBodyBytes as number | undefined) ?? 1024,
    publicKey: v.publicKey as string | undefined,
    publicKeyFile: v.publicKeyFile as string | undefined,
    logLevel: ((v.logLevel as string | undefined) ?? 'info') as LogLevel,
    allowRoot: (v.allowRoot as boolean | undefined) ?? false,
    shutdownTimeoutMs: (v.shutdownTimeoutMs as number | undefined) ?? 10_000,
    configFile: configPath,
  });
}

const SETTINGS_BY_KEY: Readonly<Record<string, SettingDef>> = Object.freeze(
  Object.fromEntries(SETTINGS.map((s) => [s.key, s])),
);

function coerce(s: SettingDef, value: unknown, source: Source): unknown {
  if (s.kind === 'bool') {
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string') {
      const t = value.trim().toLowerCase();
      if (t === 'true' || t === '1' || t === 'yes') return true;
      if (t === 'false' || t === '0' || t === 'no') return false;
    }
    throw configError(s.key, value, source);
  }
  if (s.kind === 'int') {
    let n: number;
    if (typeof value === 'number') n = value;
    else if (typeof value === 'string' && /^\s*[0-9]{1,16}\s*$/.test(value)) n = Number(value);
    else throw configError(s.key, value, source);
    if (!Number.isSafeInteger(n) || n < (s.min ?? 0) || n > (s.max ?? Number.MAX_SAFE_INTEGER))
      throw configError(s.key, value, source);
    return n;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) throw configError(s.key, value, source);
  if (s.choices && !s.choices.includes(value)) throw configError(s.key, value, source);
  return value;
}

function readConfigFile(file: string, via: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw serverError(
      'CONFIG',
      `setting config (from ${via}): cannot read the config file "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'}); give the path of a readable JSON file`,
      { setting: 'config', value: file },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw serverError(
      'CONFIG',
      `setting config (from ${via}): the config file "${file}" is not valid JSON (${(err as Error).message}); it must be one JSON object such as {"port": 8080}`,
      { setting: 'config', value: file },
    );
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw serverError(
      'CONFIG',
      `setting config (from ${via}): the config file "${file}" must hold one JSON object such as {"port": 8080}`,
      { setting: 'config', value: file },
    );
  }
  const keys = new Set(SETTINGS.map((s) => s.key));
  for (const k of Object.keys(json)) {
    if (!keys.has(k)) {
      throw serverError(
        'CONFIG',
        `config file "${file}" has the unknown key "${clip(k)}"; allowed keys: ${[...keys].join(', ')}`,
        { setting: clip(k), file },
      );
    }
  }
  return json as Record<string, unknown>;
}

/**
 * Every `FLURRY_*` environment variable Flurry reads: each setting's variable and
 * `FLURRY_CONFIG` (`FLURRY_PUBLIC_KEY`/`FLURRY_PUBLIC_KEY_FILE`, also read by the core's
 * `keysFromEnv`, are settings).
 *
 * @example
 * ```ts
 * KNOWN_ENV.includes('FLURRY_REGISTRY'); // true
 * ```
 */
export const KNOWN_ENV: readonly string[] = Object.freeze([...SETTINGS.map((s) => s.env), CONFIG_ENV]);

/**
 * One unknown `FLURRY_*` environment variable found by {@link unknownEnvWarnings}.
 *
 * @example
 * ```ts
 * const w: EnvWarning = { variable: 'FLURRY_REGSITRY', suggestion: 'FLURRY_REGISTRY', message: '…' };
 * ```
 */
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
 *
 * @example
 * ```ts
 * unknownEnvWarnings({ FLURRY_REGSITRY: 'redis://r:6379/0' })[0].message;
 * // 'FLURRY_REGSITRY is not a flurry setting and is ignored; did you mean FLURRY_REGISTRY?'
 * ```
 */
export function unknownEnvWarnings(env: NodeJS.ProcessEnv): EnvWarning[] {
  const known = new Set(KNOWN_ENV);
  const out: EnvWarning[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.toUpperCase().startsWith('FLURRY_') || known.has(name)) continue; // flurry_port too: names are case-sensitive
    const suggestion = closestName(name, KNOWN_ENV);
    const shown = clip(name);
    out.push({
      variable: shown,
      suggestion,
      message: `${shown} is not a flurry setting and is ignored; ${suggestion !== undefined ? `did you mean ${suggestion}?` : 'flurry serve --help lists the FLURRY_* variables.'}`,
    });
  }
  return out;
}

/** The candidate nearest to `name` (edit distance with transpositions), if close enough to be a typo. */
function closestName(name: string, candidates: readonly string[]): string | undefined {
  const upper = name.toUpperCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(upper, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  // Compare the part after FLURRY_: up to a third of it may differ (at least 2 edits).
  const limit = Math.max(2, Math.floor((name.length - 'FLURRY_'.length) / 3));
  return bestD <= limit ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

function configError(key: string, value: unknown, source: Source, allowed?: string, cause?: unknown): FlurryError {
  const s = SETTINGS_BY_KEY[key];
  // A registry URL may carry a password (redis://:pw@h:p/0): shown without it, like a secret.
  const safe = key === 'registry' && typeof value === 'string' ? redactUrl(value) : value;
  const shown = s?.secret
    ? '(hidden)'
    : typeof safe === 'string'
      ? JSON.stringify(clip(safe))
      : clip(JSON.stringify(safe) ?? String(safe));
  const from = source.kind === 'default' ? 'the default' : source.name;
  // An embedded message may end with its own period: never write "..".
  const what = (allowed ?? s?.allowed ?? 'see flurry serve --help').replace(/[.\s]+$/, '');
  return new FlurryError(
    'FLURRY_E_CONFIG',
    `invalid setting ${key}: ${shown} (from ${from}) is not allowed; allowed: ${what}. Fix it and start again (flurry serve --help lists every setting).`,
    {
      setting: key,
      value: s?.secret ? '(hidden)' : safe,
      source: from,
      ...(cause instanceof FlurryError ? { cause: cause.code } : {}),
    },
  );
}

function describe(err: unknown): string {
  return err instanceof FlurryError ? `${err.code}: ${err.message}` : String(err);
}
function isEpochError(err: unknown): boolean {
  return err instanceof FlurryError && err.code === 'FLURRY_E_LAYOUT_EPOCH';
}
function isUnitError(err: unknown): boolean {
  return err instanceof FlurryError && err.code === 'FLURRY_E_LAYOUT_UNIT';
}
function clip(s: string): string {
  return s.length > 80 ? s.slice(0, 80) + '…' : s;
}

/**
 * The text of `flurry serve --help`: usage, then every setting with its flag, variable,
 * allowed values and default.
 *
 * @example
 * ```ts
 * process.stdout.write(serveHelp());
 * ```
 */
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
    lines.push(`  --${s.flag}${s.kind === 'bool' ? '' : ' VALUE'}   (${s.env}; config key "${s.key}")`);
    lines.push(`      ${s.help}`);
    lines.push(`      Allowed: ${s.allowed}.`);
    lines.push(`      Default: ${s.defaultText}`);
  }
  lines.push(
    `  --config FILE   (${CONFIG_ENV})`,
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
