/**
 * The options of `createClient`, their defaults, and their validation: every bad value is
 * a `FLURRY_E_CLIENT_CONFIG` error at construction naming the option, the value and what
 * is allowed.
 */
import { assertKnownOptions, optionNames, systemClock, type Clock, type UnknownOptionError } from '@flurry/core';
import { clientError } from './errors.js';
import type { Strategy } from './server-pool.js';

/** Prefetch settings. */
export interface PrefetchOptions {
  /** Most IDs held in the buffer, 1 to 1,000,000; default 10,000. */
  size?: number;
  /** Refill when fewer than this many are held (plus requested), 0 to size − 1; default 30% of size. */
  lowWater?: number;
  /** IDs fetched longer ago than this (ms, from when the request was sent) are discarded, not handed out; ≥ 1 or Infinity; default 5,000. */
  maxAgeMs?: number;
  /**
   * Scale the buffer to the observed consumption rate (default true): the buffer aims at
   * about one second of consumption (at most half of `maxAgeMs`), between 64 IDs and
   * `size`, and `lowWater` scales with it; at high rates the refill starts early enough to
   * cover twice the observed request time. False: always fill to `size`.
   */
  adaptive?: boolean;
  /** Most IDs asked of a server in one request, 1 to 10,000 (the service's default maximum); default 10,000. */
  maxBatch?: number;
}

/**
 * Options of `createClient`. Only `servers` is required; every other option has a default
 * (shown below), and an unknown or out-of-range one throws `FLURRY_E_CLIENT_CONFIG`
 * naming it and what is allowed.
 */
export interface ClientOptions {
  /**
   * Base URLs of the Flurry servers (`http:` or `https:`, optionally with a path prefix): an array of at least
   * one, no duplicates, or a single URL string (the same as an array of that one).
   */
  servers: readonly string[] | string;
  /** Bearer token, when the servers require one. */
  token?: string;
  /** Deadline of each request in ms, 1 to 600,000; default 2,000. */
  timeoutMs?: number;
  /** Prefetching (see {@link PrefetchOptions}). */
  prefetch?: PrefetchOptions;
  /** How to choose a server: `round-robin` (default) or `least-latency`. */
  strategy?: Strategy;
  /** Backoff of a failed server: first delay and cap, ms; defaults 100 and 10,000. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Clock for buffer ages, backoff and rates (`monotonic()`); default the system clock. */
  clock?: Clock;
}

/** Validated options with defaults filled in. */
export type ClientSettings = ReturnType<typeof resolveOptions>;

/** The largest count the service's batch route takes by default. */
export const SERVICE_MAX_BATCH = 10_000;

/**
 * The keys of {@link ClientOptions}; any other key is refused with `FLURRY_E_CLIENT_CONFIG` naming the closest
 * valid one (as are unknown keys of `prefetch` and `backoff`).
 */
export const CLIENT_OPTION_NAMES = optionNames<ClientOptions>({
  servers: true,
  token: true,
  timeoutMs: true,
  prefetch: true,
  strategy: true,
  backoff: true,
  clock: true,
});
const PREFETCH_OPTION_NAMES = optionNames<PrefetchOptions>({
  size: true,
  lowWater: true,
  maxAgeMs: true,
  adaptive: true,
  maxBatch: true,
});
const BACKOFF_OPTION_NAMES = optionNames<NonNullable<ClientOptions['backoff']>>({ initialMs: true, maxMs: true });
/** Unknown client options keep the client's code, `FLURRY_E_CLIENT_CONFIG`. */
const configError: UnknownOptionError = (message, details) => clientError('CONFIG', message, details);

/**
 * Validates `opts` and fills in defaults.
 *
 * @throws FlurryError `FLURRY_E_CLIENT_CONFIG`
 */
export function resolveOptions(opts: ClientOptions) {
  if (opts === null || typeof opts !== 'object') {
    throw clientError(
      'CONFIG',
      'createClient needs an options object, e.g. createClient({ servers: ["http://127.0.0.1:8080"] })',
    );
  }
  assertKnownOptions(opts, CLIENT_OPTION_NAMES, 'createClient options', configError);
  const servers = parseServers(opts.servers);

  const token = opts.token;
  if (token !== undefined && (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))) {
    throw clientError(
      'CONFIG',
      'token must be a non-empty string of visible ASCII characters (it is sent as "Authorization: Bearer <token>")',
      { option: 'token' },
    );
  }
  const timeoutMs = int('timeoutMs', opts.timeoutMs, 2_000, 1, 600_000);

  const p = section('prefetch', opts.prefetch, '{ size: 10000, lowWater: 3000 }', PREFETCH_OPTION_NAMES);
  const size = int('prefetch.size', p.size, 10_000, 1, 1_000_000);
  const lowWater = int(
    'prefetch.lowWater',
    p.lowWater,
    Math.floor(size * 0.3),
    0,
    size - 1,
    `0 to prefetch.size − 1 (${size - 1})`,
  );
  let maxAgeMs = 5_000;
  if (p.maxAgeMs !== undefined) {
    if (typeof p.maxAgeMs !== 'number' || Number.isNaN(p.maxAgeMs) || p.maxAgeMs < 1) {
      throw clientError(
        'CONFIG',
        `prefetch.maxAgeMs must be a number of milliseconds ≥ 1 (or Infinity); got ${String(p.maxAgeMs)}`,
        { option: 'prefetch.maxAgeMs', value: String(p.maxAgeMs) },
      );
    }
    maxAgeMs = p.maxAgeMs;
  }
  if (p.adaptive !== undefined && typeof p.adaptive !== 'boolean') {
    throw clientError('CONFIG', `prefetch.adaptive must be true or false; got ${String(p.adaptive)}`, {
      option: 'prefetch.adaptive',
    });
  }
  const maxBatch = int('prefetch.maxBatch', p.maxBatch, SERVICE_MAX_BATCH, 1, SERVICE_MAX_BATCH);

  const strategy = opts.strategy ?? 'round-robin';
  if (strategy !== 'round-robin' && strategy !== 'least-latency') {
    throw clientError(
      'CONFIG',
      `strategy must be "round-robin" or "least-latency"; got ${JSON.stringify(String(strategy))}`,
      { option: 'strategy' },
    );
  }
  const b = section('backoff', opts.backoff, '{ initialMs: 100, maxMs: 10000 }', BACKOFF_OPTION_NAMES);
  const initialMs = int('backoff.initialMs', b.initialMs, 100, 1, 600_000);
  const maxMs = int(
    'backoff.maxMs',
    b.maxMs,
    Math.max(10_000, initialMs),
    initialMs,
    3_600_000,
    `${initialMs} (backoff.initialMs) to 3600000`,
  );

  const clock = opts.clock ?? systemClock;
  if (typeof clock !== 'object' || typeof clock?.monotonic !== 'function' || typeof clock.now !== 'function') {
    throw clientError('CONFIG', 'clock must be a Clock from @flurry/core (with now() and monotonic())', {
      option: 'clock',
    });
  }
  return {
    servers,
    token,
    timeoutMs,
    prefetch: { size, lowWater, maxAgeMs, adaptive: p.adaptive ?? true, maxBatch },
    strategy,
    backoff: { initialMs, maxMs },
    clock,
  };
}

/** `opts[name]`: an object (`{}` when absent) with known keys only. */
function section<T extends object>(name: string, v: T | undefined, example: string, names: readonly string[]): T {
  const o = v ?? ({} as T);
  if (o === null || typeof o !== 'object') {
    throw clientError('CONFIG', `${name} must be an object such as ${example}`, { option: name });
  }
  assertKnownOptions(o, names, `createClient options.${name}`, configError);
  return o;
}

function parseServers(given: unknown): URL[] {
  // A single URL string is a list of one; its messages name `servers` rather than `servers[0]`.
  const single = typeof given === 'string';
  const list: unknown = single ? [given] : given;
  if (!Array.isArray(list) || list.length === 0) {
    throw clientError(
      'CONFIG',
      'servers must hold at least one URL: an array such as ["http://127.0.0.1:8080"] or one URL string',
      { option: 'servers' },
    );
  }
  const seen = new Set<string>();
  return list.map((raw: unknown, at) => {
    const option = single ? 'servers' : `servers[${at}]`;
    if (typeof raw !== 'string')
      throw clientError('CONFIG', `${option} must be a URL string; got ${typeof raw}`, { option });
    const bad = (why: string): Error =>
      clientError('CONFIG', `${option} ${JSON.stringify(raw)} ${why}`, { option, value: raw });
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('is not a URL; write it like "http://10.0.0.1:8080"');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('must use http: or https:');
    if (url.search || url.hash || url.username || url.password) {
      throw bad('must not carry a query, a fragment or credentials (use the token option)');
    }
    const key = url.href.replace(/\/+$/, '');
    if (seen.has(key)) throw bad('is listed twice');
    seen.add(key);
    return url;
  });
}

function int(name: string, v: unknown, dflt: number, min: number, max: number, allowed = `${min} to ${max}`): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- shows whatever the caller passed, as JavaScript prints it
    const got = String(v);
    throw clientError('CONFIG', `${name} must be an integer from ${allowed}; got ${got}`, {
      option: name,
      value: got,
      min,
      max,
    });
  }
  return v;
}
