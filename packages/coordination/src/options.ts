/** The options every registry shares; defaults and why: docs/node-ids.md ("Lease timing: defaults and limits"). */
import { hostname } from 'node:os';
import { assertKnownOptions, optionNames, randomHex, systemClock, type Clock, type FlurryLogger } from '@flurry/core';
import type { FileIo } from './file-steps.js';
import type { HolderInfo } from './driver.js';
import { FLURRY_VERSION } from './version.js';
import { optionError } from './errors.js';
import { HOLDER_FIELD_TYPES } from './drivers/common.js';

export type { FlurryLogger as RegistryLogger } from '@flurry/core';

/** Options of `openRegistry()` (see docs/architecture.md, "Coordination API contract"). */
export interface RegistryOptions {
  /** Cluster name, the top of the namespace; default `'default'`; `[A-Za-z0-9_.-]{1,64}`. */
  cluster?: string;
  /** Lease time-to-live in ms; default 10 000; 100 … 3 600 000. */
  ttlMs?: number;
  /** Renewal interval in ms; default ttl/3; 10 … (ttl − margin)/2. */
  renewIntervalMs?: number;
  /** Safety margin subtracted from the fencing deadline; default min(1000, ttl/5); 0 … ttl/2. */
  marginMs?: number;
  /** How long a new holder may wait for its clock to pass the floor; default 5000; 0 … 600 000. */
  highWaterWaitMs?: number;
  /** Core clock; deadlines use `clock.monotonic()`. Default `systemClock`. */
  clock?: Clock;
  /** Overrides of the holder identity (hostname, pid, address). The `id` is always made unique. */
  holder?: Partial<HolderInfo>;
  /** Where renewal failures and re-acquisitions are logged. */
  logger?: FlurryLogger;
  /** Local state directory (the last slot held, static marks); default `$XDG_STATE_HOME/flurry`. */
  stateDir?: string;
  /** Renew in the background (default true); `false`: only `lease.renewNow()` renews (tests). */
  autoRenew?: boolean;
  /** How long connecting to an engine may take; default 5000 ms; 100 … 120 000. An extension. */
  connectTimeoutMs?: number;
  /** The file registry's file-system steps: `'async'` (default, bounded) or `'sync'` (see `FileDriverOptions.io`). */
  fileIo?: FileIo;
}

// A misspelt `cluster` is refused, not defaulted.
const REGISTRY_OPTION_NAMES = optionNames<RegistryOptions>({
  cluster: true,
  ttlMs: true,
  renewIntervalMs: true,
  marginMs: true,
  highWaterWaitMs: true,
  clock: true,
  holder: true,
  logger: true,
  stateDir: true,
  autoRenew: true,
  connectTimeoutMs: true,
  fileIo: true,
});

/** Options of `Registry.acquire`. */
export interface AcquireOptions {
  /** Node fields fixed by configuration, e.g. `{ datacenter: 1 }` (a `datacenter` field defaults to 0). */
  pin?: Record<string, number>;
}

/** {@link RegistryOptions} with every default filled in and validated. */
export type ResolvedRegistryOptions = Readonly<
  Required<Omit<RegistryOptions, 'logger' | 'stateDir'>> & Pick<RegistryOptions, 'logger' | 'stateDir'>
>;

const CLUSTER_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** What each timing option's range means, for the message of a value outside it. */
const RANGE_WHY = {
  ttlMs: 'the lease time-to-live',
  marginMs: 'at most half the TTL',
  renewIntervalMs: 'at most (ttl − margin)/2 so that a failed renewal is retried before the deadline',
  highWaterWaitMs: "the longest wait for the clock to pass the previous holder's mark",
  connectTimeoutMs: 'the longest wait for the engine',
};

function intInRange(opts: RegistryOptions, name: keyof typeof RANGE_WHY, dflt: number, lo: number, hi: number): number {
  const v = opts[name] ?? dflt;
  if (typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi) return v;
  const why = `${name} must be an integer from ${lo} to ${hi} ms (${RANGE_WHY[name]}); got ${String(v)}.`;
  throw optionError(name, `${why} Change the option or leave it out for the default.`, { value: v, min: lo, max: hi });
}

/** Applies the defaults and validates every option; throws `FLURRY_E_REGISTRY_OPTION`. */
export function resolveRegistryOptions(opts: RegistryOptions = {}): ResolvedRegistryOptions {
  assertKnownOptions(opts, REGISTRY_OPTION_NAMES, 'openRegistry options');
  assertKnownOptions(opts.holder, Object.keys(HOLDER_FIELD_TYPES), 'openRegistry options.holder');
  const cluster = opts.cluster ?? 'default';
  if (typeof cluster !== 'string' || !CLUSTER_RE.test(cluster) || cluster === '.' || cluster === '..') {
    const why = `cluster name ${JSON.stringify(cluster)} is invalid: use 1 to 64 of A-Z a-z 0-9 _ . - (not "." or "..")`;
    throw optionError('cluster', `${why}, e.g. "orders"`, { value: cluster });
  }
  const ttlMs = intInRange(opts, 'ttlMs', 10_000, 100, 3_600_000);
  const marginMs = intInRange(opts, 'marginMs', Math.min(1000, Math.floor(ttlMs / 5)), 0, Math.floor(ttlMs / 2));
  const maxRenew = Math.floor((ttlMs - marginMs) / 2);
  const renewDefault = Math.min(maxRenew, Math.max(10, Math.floor(ttlMs / 3)));
  const renewIntervalMs = intInRange(opts, 'renewIntervalMs', renewDefault, 10, Math.max(10, maxRenew));
  const highWaterWaitMs = intInRange(opts, 'highWaterWaitMs', 5000, 0, 600_000);
  const connectTimeoutMs = intInRange(opts, 'connectTimeoutMs', 5000, 100, 120_000);
  const clock = opts.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.monotonic !== 'function' || typeof clock.sleep !== 'function')
    throw optionError('clock', 'clock must be a Clock from @flurry/core (now(), monotonic(), sleep())');
  if (opts.logger !== undefined && (typeof opts.logger.warn !== 'function' || typeof opts.logger.info !== 'function'))
    throw optionError('logger', 'logger must have warn(obj, msg) and info(obj, msg) methods (a pino logger works)');
  if (opts.stateDir !== undefined && (typeof opts.stateDir !== 'string' || opts.stateDir === ''))
    throw optionError('stateDir', `stateDir must be a non-empty directory path; got ${JSON.stringify(opts.stateDir)}`);
  const fileIo = opts.fileIo ?? 'async';
  if (fileIo !== 'async' && fileIo !== 'sync') {
    const why = `fileIo must be 'async' (each file-system step bounded) or 'sync' (for a short-lived process)`;
    throw optionError('fileIo', `${why}; got ${JSON.stringify(fileIo)}. Leave it out for 'async'.`, { value: fileIo });
  }
  return {
    cluster,
    ttlMs,
    renewIntervalMs,
    marginMs,
    highWaterWaitMs,
    clock,
    holder: opts.holder ?? {},
    logger: opts.logger,
    stateDir: opts.stateDir,
    autoRenew: opts.autoRenew ?? true,
    connectTimeoutMs,
    fileIo,
  };
}

/** A fresh holder identity: hostname, pid, a random token (unique per acquire) and the version. */
export function makeHolder(overrides: Partial<HolderInfo>): HolderInfo {
  const host = overrides.hostname ?? hostname();
  const pid = overrides.pid ?? process.pid;
  const base: HolderInfo = {
    id: `${host}:${pid}:${randomHex(8)}`,
    hostname: host,
    pid,
    version: overrides.version ?? FLURRY_VERSION,
  };
  return overrides.address === undefined ? base : { ...base, address: overrides.address };
}
