// The one table of `flurry serve` settings: each row's key is the config-file key, from which its flag
// and `FLURRY_*` variable follow; parsing, validation messages and `--help` are derived from it.
interface Common {
  readonly help: string;
  /** What values are allowed, when the type's own wording is not enough. */
  readonly allowed?: string;
  /** The default as `--help` shows it when the component that uses the setting holds the default. */
  readonly defaultText?: string;
  /** Hide the value in errors and logs. */
  readonly secret?: boolean;
  /** A refused value's code when the offline commands share the flag (else `FLURRY_E_CONFIG`). */
  readonly code?: string;
}

/** The definition of one setting (one row of the table); a string is 1 to 4096 characters. */
export type SettingDef = Common &
  (
    | {
        readonly type: 'int';
        readonly min: number;
        readonly max: number;
        readonly unit?: 'ms';
        readonly note?: string;
        readonly default?: number;
      }
    | { readonly type: 'bool'; readonly default: boolean }
    | { readonly type: 'string'; readonly pattern?: RegExp; readonly default?: string }
    | { readonly type: 'choice'; readonly choices: readonly string[]; readonly default?: string }
  );

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const PORT = { type: 'int', min: 0, max: 65535 } as const;
/** An on/off setting, off by default. */
const SWITCH = { type: 'bool', default: false } as const;

/** Every setting by config-file key, in `--help` order. */
const DEFS = {
  host: {
    type: 'string',
    pattern: /^(?:[A-Za-z0-9.:_-]{1,253}|\[[0-9A-Fa-f:.]+\])$/,
    default: '127.0.0.1',
    allowed: 'an IP address or host name to listen on',
    help: 'HTTP listen address (0.0.0.0 for every interface).',
  },
  port: {
    ...PORT,
    note: '0 = any free port, logged at start-up',
    default: 8080,
    help: 'HTTP listen port.',
  },
  layout: {
    type: 'choice',
    code: 'FLURRY_E_LAYOUT_UNKNOWN_PRESET',
    choices: ['twitter', 'leaf', 'discord', 'sonyflake', 'instagram', 'js53'],
    defaultText: 'twitter',
    help: 'Bit layout preset (or use fields).',
  },
  fields: {
    type: 'string',
    code: 'FLURRY_E_LAYOUT_SPEC',
    defaultText: '(none: the preset)',
    allowed: 'a field list such as timestamp:41,datacenter:5,worker:5,sequence:12 (at most 64 bits)',
    help: 'Custom layout, most significant field first; replaces layout.',
  },
  epoch: {
    type: 'string',
    code: 'FLURRY_E_LAYOUT_EPOCH',
    defaultText: "(the preset's epoch)",
    allowed: 'an ISO date (2020-01-01T00:00:00Z) or Unix milliseconds, from 1970 and not in the future',
    help: 'Epoch of the timestamp field.',
  },
  unit: {
    type: 'choice',
    code: 'FLURRY_E_LAYOUT_UNIT',
    choices: ['1ms', '10ms', '1s'],
    defaultText: "(the preset's unit, 1ms for fields)",
    help: 'Time unit of the timestamp field.',
  },
  node: {
    type: 'string',
    code: 'FLURRY_E_NODE_OUT_OF_RANGE',
    defaultText: '(none: every node field is leased)',
    allowed: 'FIELD=VALUE pairs separated by commas, e.g. datacenter=1',
    help: 'Pin node fields by hand; the registry still leases the result.',
  },
  registry: {
    type: 'string',
    code: 'FLURRY_E_REGISTRY_URL',
    default: 'file:',
    allowed:
      'a registry URL: file:, file:/dir, zookeeper://h:p/path, zookeeper+leaf://h:p/path, etcd://h:p/prefix, redis://h:p/db, static:N, k8s:',
    help: 'Where node-ID leases come from.',
  },
  cluster: {
    type: 'string',
    code: 'FLURRY_E_REGISTRY_OPTION',
    pattern: /^[A-Za-z0-9_.-]{1,64}$/,
    default: 'default',
    allowed: '1 to 64 characters from A-Z a-z 0-9 _ . -',
    help: 'Cluster name: node IDs are unique within it.',
  },
  leaseTtlMs: {
    type: 'int',
    min: 100,
    max: 3_600_000,
    unit: 'ms',
    defaultText: '10000',
    help: 'Lease time-to-live: how long a silent holder keeps its node ID.',
  },
  leaseRenewMs: {
    type: 'int',
    min: 10,
    max: 3_600_000,
    defaultText: '(a third of the TTL)',
    allowed: 'an integer from 10 to (TTL - margin) / 2 (ms)',
    help: 'Lease renewal interval.',
  },
  leaseMarginMs: {
    type: 'int',
    min: 0,
    max: 3_600_000,
    defaultText: '(the smaller of 1000 and a fifth of the TTL)',
    allowed: 'an integer from 0 to half the TTL (ms)',
    help: 'Safety margin taken off the lease deadline.',
  },
  highWaterWaitMs: {
    type: 'int',
    min: 0,
    max: 600_000,
    unit: 'ms',
    defaultText: '5000',
    help: "How long start-up may wait for the clock to pass the node's high-water mark.",
  },
  registryConnectTimeoutMs: {
    type: 'int',
    min: 100,
    max: 120_000,
    unit: 'ms',
    defaultText: '5000',
    help: 'How long connecting to the registry engine (ZooKeeper, etcd, Redis) and each of its operations may take.',
  },
  onExhausted: {
    type: 'choice',
    choices: ['wait', 'borrow'],
    defaultText: 'borrow',
    help: 'When a tick runs out of sequence numbers (batch load): borrow ticks up to 1 s ahead of the clock (full rate), or wait for the next tick (timestamps never ahead of real time).',
  },
  onClockBackwards: {
    type: 'choice',
    choices: ['tolerate', 'wait', 'throw'],
    defaultText: 'tolerate',
    help: 'What to do when the wall clock steps back (tolerate: continue in the last tick, borrowing up to 1 s ahead).',
  },
  sequenceStart: {
    type: 'choice',
    choices: ['zero', 'random'],
    defaultText: 'zero',
    help: 'Start each tick at 0, or at a small random value so id % N stays even at low load.',
  },
  thriftPort: {
    ...PORT,
    defaultText: '(off; Twitter used 7609)',
    help: "Serve Twitter Snowflake's Thrift API on this port.",
  },
  memcachedPort: {
    ...PORT,
    note: '0 = any free port, logged at start-up',
    defaultText: '(off; memcached uses 11211)',
    help: 'Serve IDs over the memcached protocol (katsubushi-compatible: get KEY) on this port.',
  },
  memcachedIdleTimeoutMs: {
    type: 'int',
    min: 0,
    max: 86_400_000,
    unit: 'ms',
    note: '0 = never',
    default: 600_000,
    help: 'Close a memcached connection idle this long.',
  },
  grpcPort: {
    ...PORT,
    defaultText: '(off; 0 picks a free port)',
    help: 'Serve gRPC, gRPC-Web and Connect (flurry.v1.IdService, health, reflection) on this port.',
  },
  tlsCert: {
    type: 'string',
    defaultText: '(none: plain HTTP)',
    allowed: 'the path of a PEM certificate chain (with --tls-key)',
    help: 'Serve HTTPS on --port and gRPC over TLS (h2 by ALPN) on --grpc-port with this certificate; re-read on SIGHUP.',
  },
  tlsKey: {
    type: 'string',
    defaultText: '(none)',
    allowed: 'the path of the PEM private key of --tls-cert',
    help: 'The private key of --tls-cert (PEM); re-read on SIGHUP.',
  },
  token: {
    type: 'string',
    secret: true,
    pattern: /^[\x21-\x7e]{16,512}$/,
    defaultText: '(none: no authentication)',
    allowed: 'a bearer token of 16 to 512 printable ASCII characters without spaces',
    help: 'Require "Authorization: Bearer TOKEN" on the ID routes (prefer the variable: flags show in ps).',
  },
  authHealth: {
    ...SWITCH,
    help: 'Require the token on /healthz, /readyz and /metrics too.',
  },
  console: {
    type: 'choice',
    choices: ['auto', 'on', 'off'],
    default: 'auto',
    help: 'The web console at / (read-only): auto = on when a token is set or the host is loopback, off otherwise (see docs/console.md).',
  },
  maxBatch: {
    type: 'int',
    min: 1,
    max: 1_000_000,
    default: 10_000,
    help: 'Largest count of GET /v1/ids.',
  },
  maxUrlBytes: {
    type: 'int',
    min: 64,
    max: 16_384,
    default: 4096,
    help: 'Longest request target (path + query); longer is 414.',
  },
  maxBodyBytes: {
    type: 'int',
    min: 0,
    max: 1_048_576,
    default: 1024,
    help: 'Largest request body accepted (the API reads none); larger is 413.',
  },
  publicKey: {
    type: 'string',
    secret: true,
    defaultText: '(none: public IDs off)',
    allowed: 'a key printed by "flurry key new" (several separated by commas for rotation)',
    help: 'Enable /v1/public-ids with this key.',
  },
  publicKeyFile: {
    type: 'string',
    defaultText: '(none)',
    allowed: 'the path of a file holding the keyring (keys separated by new lines or commas; # comments)',
    help: 'Read the public-ID keyring from a file (used when publicKey is not set).',
  },
  // Segment mode (flurry serve --sequences; docs/segments.md).
  sequences: {
    type: 'string',
    secret: true,
    defaultText: '(none: segment mode off)',
    allowed: "a store URL: postgres://…, mysql://… (Leaf's leaf_alloc table), redis://… (see docs/segments.md)",
    help: 'Serve segment mode (/v1/sequences/{key}, Leaf /api/segment/get/{key}) from this store.',
  },
  autoCreate: {
    ...SWITCH,
    help: 'Segment mode: create an unknown key on first use (off: an unknown key is 404).',
  },
  allowVolatileStore: {
    ...SWITCH,
    help: 'Segment mode: accept a Redis without appendonly yes + appendfsync always (it can repeat numbers after a crash).',
  },
  sequenceMaxStep: {
    type: 'int',
    min: 1,
    max: 2_147_483_647,
    default: 1_000_000,
    help: 'Segment mode: the largest step the adaptive step asks for (Leaf: 1,000,000); the stored step is the floor.',
  },
  sequenceTargetMs: {
    type: 'int',
    min: 1000,
    max: 86_400_000,
    default: 900_000,
    help: 'Segment mode: how long a segment should last at the observed rate (Leaf: 15 min); the step adapts to it.',
  },
  logLevel: {
    type: 'choice',
    choices: LOG_LEVELS,
    default: 'info',
    help: 'Log level (JSON lines on stdout; requests are logged at debug).',
  },
  allowRoot: {
    ...SWITCH,
    help: 'Allow running as root (refused otherwise).',
  },
  shutdownTimeoutMs: {
    type: 'int',
    min: 0,
    max: 600_000,
    unit: 'ms',
    default: 10_000,
    help: 'On SIGTERM, how long in-flight requests may take before connections are cut.',
  },
  workers: {
    type: 'string',
    pattern: /^(?:auto|[1-9][0-9]{0,2})$/,
    default: '1',
    allowed: 'a number of processes from 1 to 999, or auto (one per core: os.availableParallelism())',
    help: 'Worker processes (node:cluster) sharing the ports, each with its own node-ID lease; 1 = one process.',
  },
} as const satisfies Record<string, SettingDef>;

/** A setting's name: its config-file key and its field of {@link ServeConfig}. */
export type SettingKey = keyof typeof DEFS;

type ValueOf<D> = D extends { type: 'int' }
  ? number
  : D extends { type: 'bool' }
    ? boolean
    : D extends { choices: readonly (infer C)[] }
      ? C
      : string;

/** Every setting's typed value: `undefined` only for a setting without a default in the table. */
export type SettingValues = {
  readonly [K in SettingKey]: (typeof DEFS)[K] extends { default: unknown }
    ? ValueOf<(typeof DEFS)[K]>
    : ValueOf<(typeof DEFS)[K]> | undefined;
};

/** pino's levels. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One row of the table with its key, its flag (`leaseTtlMs` → `--lease-ttl-ms`) and its variable (`FLURRY_LEASE_TTL_MS`). */
export type Setting = SettingDef & { readonly key: SettingKey; readonly flag: string; readonly env: string };

/** Every setting, in `--help` order. */
export const SETTINGS: readonly Setting[] = Object.freeze(
  (Object.keys(DEFS) as SettingKey[]).map((key): Setting => {
    const flag = key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
    return Object.freeze({ key, flag, env: 'FLURRY_' + flag.replaceAll('-', '_').toUpperCase(), ...DEFS[key] });
  }),
);

/** Whether `name` is a setting's key (a config-file key). */
export const isSettingKey = (name: string): name is SettingKey => Object.hasOwn(DEFS, name);

/** What values are allowed, as shown in errors and `--help`. */
export function allowedText(def: SettingDef): string {
  if (def.allowed !== undefined) return def.allowed;
  if (def.type === 'int')
    return `an integer from ${def.min} to ${def.max}` + [def.unit, def.note].map((x) => (x ? ` (${x})` : '')).join('');
  if (def.type === 'choice') return `one of ${def.choices.join(', ')}`;
  return def.type === 'bool' ? 'true or false (1/0, yes/no)' : 'a non-empty string';
}
