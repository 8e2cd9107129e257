// The options of `createClient`, their defaults and their validation (FLURRY_E_CLIENT_CONFIG).
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
  /** Scale the buffer to the consumption rate (default true; docs/client.md, "Prefetching"); false: always fill to `size`. */
  adaptive?: boolean;
  /** Most IDs asked of a server in one request, 1 to 10,000 (the service's default maximum); default 10,000. */
  maxBatch?: number;
}

/** Options of `createClient`; only `servers` is required. */
export interface ClientOptions {
  /** Base URLs of the servers (`http:`/`https:`, optionally with a path prefix): one string or a list without duplicates. */
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

/** The largest count the service's batch route takes by default. */
const SERVICE_MAX_BATCH = 10_000;

const NAMES = {
  client: optionNames<ClientOptions>({
    servers: true,
    token: true,
    timeoutMs: true,
    prefetch: true,
    strategy: true,
    backoff: true,
    clock: true,
  }),
  prefetch: optionNames<PrefetchOptions>({
    size: true,
    lowWater: true,
    maxAgeMs: true,
    adaptive: true,
    maxBatch: true,
  }),
  backoff: optionNames<NonNullable<ClientOptions['backoff']>>({ initialMs: true, maxMs: true }),
};
const configError: UnknownOptionError = (message, details) => clientError('CONFIG', message, details);
function fail(message: string, details?: Record<string, unknown>): never {
  throw clientError('CONFIG', message, details);
}

/** Validates `opts` and fills in defaults; throws `FLURRY_E_CLIENT_CONFIG`. */
export function resolveOptions(opts: ClientOptions) {
  if (opts === null || typeof opts !== 'object')
    fail('createClient needs an options object, e.g. createClient({ servers: ["http://127.0.0.1:8080"] })');
  assertKnownOptions(opts, NAMES.client, 'createClient options', configError);
  const servers = parseServers(opts.servers);
  const token = opts.token;
  if (token !== undefined && (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))) {
    fail(
      'token must be a non-empty string of visible ASCII characters (it is sent as "Authorization: Bearer <token>")',
      { option: 'token' },
    );
  }
  const timeoutMs = int('timeoutMs', opts.timeoutMs, 2_000, 1, 600_000);
  const p = section('prefetch', opts.prefetch, '{ size: 10000, lowWater: 3000 }');
  const size = int('prefetch.size', p.size, 10_000, 1, 1_000_000);
  const lowWater = int(
    'prefetch.lowWater',
    p.lowWater,
    Math.floor(size * 0.3),
    0,
    size - 1,
    `0 to prefetch.size − 1 (${size - 1})`,
  );
  const maxAgeMs = p.maxAgeMs ?? 5_000;
  if (typeof maxAgeMs !== 'number' || Number.isNaN(maxAgeMs) || maxAgeMs < 1) {
    const value = String(maxAgeMs);
    const option = 'prefetch.maxAgeMs';
    fail(`${option} must be a number of milliseconds ≥ 1 (or Infinity); got ${value}`, { option, value });
  }
  const adaptive = p.adaptive ?? true;
  if (typeof adaptive !== 'boolean')
    fail(`prefetch.adaptive must be true or false; got ${String(adaptive)}`, { option: 'prefetch.adaptive' });
  const maxBatch = int('prefetch.maxBatch', p.maxBatch, SERVICE_MAX_BATCH, 1, SERVICE_MAX_BATCH);
  const strategy = opts.strategy ?? 'round-robin';
  if (strategy !== 'round-robin' && strategy !== 'least-latency') {
    const got = JSON.stringify(String(strategy));
    fail(`strategy must be "round-robin" or "least-latency"; got ${got}`, { option: 'strategy' });
  }
  const b = section('backoff', opts.backoff, '{ initialMs: 100, maxMs: 10000 }');
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
  if (typeof clock !== 'object' || typeof clock?.monotonic !== 'function' || typeof clock.now !== 'function')
    fail('clock must be a Clock from @flurry/core (with now() and monotonic())', { option: 'clock' });
  return {
    servers,
    token,
    timeoutMs,
    prefetch: { size, lowWater, maxAgeMs, adaptive, maxBatch },
    strategy,
    backoff: { initialMs, maxMs },
    clock,
  };
}

/** `opts[name]`: an object (`{}` when absent) with known keys only. */
function section<K extends 'prefetch' | 'backoff'>(
  name: K,
  v: ClientOptions[K],
  example: string,
): NonNullable<ClientOptions[K]> {
  const o = v ?? {};
  if (o === null || typeof o !== 'object') fail(`${name} must be an object such as ${example}`, { option: name });
  assertKnownOptions(o, NAMES[name], `createClient options.${name}`, configError);
  return o;
}

function parseServers(given: unknown): URL[] {
  // A single URL string is a list of one; its messages name `servers` rather than `servers[0]`.
  const single = typeof given === 'string';
  const list: unknown = single ? [given] : given;
  if (!Array.isArray(list) || list.length === 0)
    fail('servers must hold at least one URL: an array such as ["http://127.0.0.1:8080"] or one URL string', {
      option: 'servers',
    });
  const seen = new Set<string>();
  return list.map((raw: unknown, at) => {
    const option = single ? 'servers' : `servers[${at}]`;
    if (typeof raw !== 'string') fail(`${option} must be a URL string; got ${typeof raw}`, { option });
    const bad = (why: string): never => fail(`${option} ${JSON.stringify(raw)} ${why}`, { option, value: raw });
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return bad('is not a URL; write it like "http://10.0.0.1:8080"');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') bad('must use http: or https:');
    if (url.search || url.hash || url.username || url.password) {
      bad('must not carry a query, a fragment or credentials (use the token option)');
    }
    const key = url.href.replace(/\/+$/, '');
    if (seen.has(key)) bad('is listed twice');
    seen.add(key);
    return url;
  });
}

function int(name: string, v: unknown, dflt: number, min: number, max: number, allowed = `${min} to ${max}`): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- shows whatever the caller passed, as JavaScript prints it
    const value = String(v);
    fail(`${name} must be an integer from ${allowed}; got ${value}`, { option: name, value, min, max });
  }
  return v;
}
