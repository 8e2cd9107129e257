/** Coded errors of segment mode (`STORE_UNAVAILABLE` is the service's 503 with `Retry-After`: `details.retryAfterMs`). */
import { FlurryError, loadClient } from '@flurry/core';

/** The codes of `@flurry/segments`. */
export const SequenceErrorCode = {
  /** The store URL is malformed, names an unknown scheme or has an unknown parameter. */
  URL_INVALID: 'FLURRY_E_SEQUENCE_URL',
  /** The store's client library (an optional peer dependency: pg, mysql2, ioredis) is not installed. */
  CLIENT_MISSING: 'FLURRY_E_SEQUENCE_CLIENT_MISSING',
  /** The store refused the credentials (the password is never printed). */
  AUTH: 'FLURRY_E_SEQUENCE_AUTH',
  /** The store did not answer (refused, timed out, connection lost) and the key's buffers are empty; retry after `details.retryAfterMs`. */
  STORE_UNAVAILABLE: 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE',
  /** A Redis store without `appendonly yes` + `appendfsync always` (it can lose writes and so repeat numbers). */
  STORE_VOLATILE: 'FLURRY_E_SEQUENCE_STORE_VOLATILE',
  /** The store answered something this library cannot use (a row or value out of range, a wrong table shape). */
  STORE_CORRUPT: 'FLURRY_E_SEQUENCE_STORE_CORRUPT',
  /** A key name is empty, too long or has a character outside the allowed set. */
  KEY_INVALID: 'FLURRY_E_SEQUENCE_KEY_INVALID',
  /** The key does not exist in the store and auto-create is off. */
  KEY_UNKNOWN: 'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
  /** `create` of a key that already exists. */
  KEY_EXISTS: 'FLURRY_E_SEQUENCE_KEY_EXISTS',
  /** A count (`batch(n)`) out of its range. */
  COUNT: 'FLURRY_E_SEQUENCE_COUNT',
  /** A bad option value (a step, a start, a target duration, a time zone). */
  OPTION: 'FLURRY_E_SEQUENCE_OPTION',
  /** A serial format with an unknown placeholder, no `{seq}`, or date fields too coarse for its reset period. */
  FORMAT: 'FLURRY_E_SEQUENCE_FORMAT',
  /** A number past 2^53 - 1 was asked for as a JS `number` (use the bigint methods). */
  NUMBER_UNSAFE: 'FLURRY_E_SEQUENCE_NUMBER_UNSAFE',
  /** The sequences (or the store) were closed. */
  CLOSED: 'FLURRY_E_SEQUENCE_CLOSED',
} as const;

/** Creates a segment-mode error. */
export function sequenceError(
  code: keyof typeof SequenceErrorCode,
  message: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): FlurryError {
  return new FlurryError(SequenceErrorCode[code], message, details, cause === undefined ? undefined : { cause });
}

/**
 * @internal `STORE_UNAVAILABLE` of an operation on a store (`connecting`: how to check the engine is up; `skipped`:
 * why an allocation's range is skipped when its outcome is unknown; `stage`: where it failed, in `details`).
 */
export function storeUnavailable(
  what: string,
  o: {
    store: string;
    engine: string;
    key?: string;
    cause: string;
    connecting: string;
    skipped?: string;
    stage?: string;
  },
  err: unknown,
): FlurryError {
  const { store, key } = o;
  return sequenceError(
    'STORE_UNAVAILABLE',
    `the ${o.engine} store ${store} did not complete ${what}${key !== undefined ? ` for key "${key}"` : ''} ${o.cause}` +
      (o.skipped ? `; ${o.skipped}, so its range is skipped` : '') +
      (o.connecting
        ? `; check that ${o.connecting} runs there and is reachable from this host, then retry (an outage, not bad input)`
        : '; numbers keep coming from memory while any are buffered; retry later'),
    {
      store,
      ...(o.stage !== undefined ? { stage: o.stage } : {}),
      outcomeUnknown: o.skipped !== undefined,
      retryAfterMs: 1000,
      ...(key !== undefined ? { key } : {}),
    },
    err,
  );
}

/** @internal `KEY_UNKNOWN` of a store (`where` it was looked for). */
export function keyUnknown(key: string, where: string): FlurryError {
  return sequenceError(
    'KEY_UNKNOWN',
    `the sequence key "${key}" does not exist in ${where}; create it first ` +
      `(sequences.create or flurry sequences create), or turn autoCreate on`,
    { key },
  );
}

/** @internal `AUTH` of a store that refused the credentials. */
export function authRefused(engine: string, store: string, why = ''): FlurryError {
  const message = `the ${engine} store ${store} refused the credentials${why}; check the user and password in the URL`;
  return sequenceError('AUTH', message, { store });
}

/** @internal Loads a store's npm client
 (an optional peer dependency); `FLURRY_E_SEQUENCE_CLIENT_MISSING` if missing. */
export function loadStoreClient<M>(
  engine: 'postgres' | 'mysql' | 'redis',
  store: string,
  load: () => Promise<M>,
): Promise<M> {
  return loadClient(engine, `the ${engine} store (${store})`, load, (message, pkg, err) =>
    sequenceError('CLIENT_MISSING', message, { package: pkg, store }, err),
  );
}
