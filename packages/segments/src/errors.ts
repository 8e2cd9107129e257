/** Coded errors of segment mode (`STORE_UNAVAILABLE` is the service's 503 with `Retry-After`: `details.retryAfterMs`). */
import { FlurryError, loadClient } from '@flurry/core';

/** The codes of `@flurry/segments`; what each means: docs/segments.md#errors. */
export const SequenceErrorCode = {
  URL_INVALID: 'FLURRY_E_SEQUENCE_URL',
  CLIENT_MISSING: 'FLURRY_E_SEQUENCE_CLIENT_MISSING',
  AUTH: 'FLURRY_E_SEQUENCE_AUTH',
  STORE_UNAVAILABLE: 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE',
  STORE_VOLATILE: 'FLURRY_E_SEQUENCE_STORE_VOLATILE',
  STORE_CORRUPT: 'FLURRY_E_SEQUENCE_STORE_CORRUPT',
  KEY_INVALID: 'FLURRY_E_SEQUENCE_KEY_INVALID',
  KEY_UNKNOWN: 'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
  KEY_EXISTS: 'FLURRY_E_SEQUENCE_KEY_EXISTS',
  COUNT: 'FLURRY_E_SEQUENCE_COUNT',
  OPTION: 'FLURRY_E_SEQUENCE_OPTION',
  FORMAT: 'FLURRY_E_SEQUENCE_FORMAT',
  NUMBER_UNSAFE: 'FLURRY_E_SEQUENCE_NUMBER_UNSAFE',
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
  o: Record<'store' | 'engine' | 'cause' | 'connecting', string> & Partial<Record<'key' | 'skipped' | 'stage', string>>,
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

/** @internal Loads a store's npm client (an optional peer dependency); `FLURRY_E_SEQUENCE_CLIENT_MISSING` if missing. */
export function loadStoreClient<M>(
  engine: 'postgres' | 'mysql' | 'redis',
  store: string,
  load: () => Promise<M>,
): Promise<M> {
  return loadClient(engine, `the ${engine} store (${store})`, load, (message, pkg, err) =>
    sequenceError('CLIENT_MISSING', message, { package: pkg, store }, err),
  );
}
