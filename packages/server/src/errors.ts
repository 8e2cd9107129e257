// Every error a caller of the service or the CLI sees is a FlurryError with a stable code, and
// each code maps to exactly one HTTP status (httpStatusOf).
import { FlurryError } from '@flurry/core/errors';

/** The codes of the service and the CLI (docs/service-api.md#errors, docs/operations.md#troubleshooting-by-error-code). */
export const ServerErrorCode = {
  CONFIG: 'FLURRY_E_CONFIG',
  USAGE: 'FLURRY_E_USAGE',
  RUN_AS_ROOT: 'FLURRY_E_RUN_AS_ROOT',
  LISTEN: 'FLURRY_E_LISTEN',
  WORKERS_NODE_IDS: 'FLURRY_E_WORKERS_NODE_IDS',
  NOT_FOUND: 'FLURRY_E_NOT_FOUND',
  METHOD_NOT_ALLOWED: 'FLURRY_E_METHOD_NOT_ALLOWED',
  UNAUTHORIZED: 'FLURRY_E_UNAUTHORIZED',
  BODY_TOO_LARGE: 'FLURRY_E_BODY_TOO_LARGE',
  URL_TOO_LONG: 'FLURRY_E_URL_TOO_LONG',
  HEADERS_TOO_LARGE: 'FLURRY_E_HEADERS_TOO_LARGE',
  BAD_REQUEST: 'FLURRY_E_BAD_REQUEST',
  BATCH_COUNT: 'FLURRY_E_BATCH_COUNT',
  QUERY: 'FLURRY_E_QUERY',
  UUID_FORMAT: 'FLURRY_E_UUID_FORMAT',
  PUBLIC_IDS_DISABLED: 'FLURRY_E_PUBLIC_IDS_DISABLED',
  PUBLIC_DECODE_DISABLED: 'FLURRY_E_PUBLIC_DECODE_DISABLED',
  UNAVAILABLE: 'FLURRY_E_UNAVAILABLE',
  TLS_UNTRUSTED: 'FLURRY_E_TLS_UNTRUSTED',
  INTERNAL: 'FLURRY_E_INTERNAL',
  SQL_GENERATOR: 'FLURRY_E_SQL_GENERATOR',
  SQL_NODE_IN_USE: 'FLURRY_E_SQL_NODE_IN_USE',
} as const;

/** `s` cut to `max` characters and an ellipsis (names and values shown in messages). */
export const clip = (s: string, max = 80): string => (s.length > max ? s.slice(0, max) + '…' : s);

/** Union of the service's error code strings. */
export type ServerErrorCodeValue = (typeof ServerErrorCode)[keyof typeof ServerErrorCode];

/** Creates a service/CLI error. */
export function serverError(
  code: keyof typeof ServerErrorCode,
  message: string,
  details: Record<string, unknown> = {},
): FlurryError {
  return new FlurryError(ServerErrorCode[code], message, details);
}

/** Each status and the codes answered with it (`FLURRY_E_` left off): the service's, then the core's and segment mode's. */
const STATUS_OF: ReadonlyArray<readonly [number, string]> = [
  [400, 'BAD_REQUEST BATCH_COUNT QUERY'],
  [401, 'UNAUTHORIZED'],
  [403, 'PUBLIC_DECODE_DISABLED'],
  [404, 'NOT_FOUND PUBLIC_IDS_DISABLED SEQUENCE_KEY_UNKNOWN'],
  [405, 'METHOD_NOT_ALLOWED'],
  [409, 'SEQUENCE_KEY_EXISTS'],
  [413, 'BODY_TOO_LARGE'],
  [414, 'URL_TOO_LONG'],
  [431, 'HEADERS_TOO_LARGE'],
  [500, 'INTERNAL'],
  // Core and segment mode: bad input, and a layout that cannot be built (GET /v1/layouts/explain).
  [400, 'ID_NEGATIVE ID_TOO_WIDE ID_MALFORMED CODEC_UNKNOWN INVALID_OPTION TIME_OUT_OF_RANGE BOUNDS_NOT_CONTIGUOUS'],
  [400, 'PUBLIC_ID_CHECKSUM PUBLIC_ID_UNKNOWN_KEY PUBLIC_ID_MALFORMED PUBLIC_ID_WRONG_KEY'],
  [400, 'UUID_FORMAT UUID_MALFORMED UUID_VERSION UUID_VARIANT'],
  [400, 'LAYOUT_TOO_WIDE LAYOUT_FIELD_WIDTH LAYOUT_MISSING_FIELD LAYOUT_FIELD_NAME LAYOUT_EPOCH LAYOUT_UNIT'],
  [400, 'LAYOUT_UNKNOWN_PRESET LAYOUT_SPEC'],
  [400, 'SEQUENCE_KEY_INVALID SEQUENCE_COUNT SEQUENCE_FORMAT SEQUENCE_OPTION SEQUENCE_NUMBER_UNSAFE'],
  // Not ready, or the generator refuses to issue right now (fenced, clock, capacity).
  [503, 'UNAVAILABLE LEASE_EXPIRED LEASE_LOST CLOCK_BACKWARDS CLOCK_BEFORE_EPOCH CLOCK_BEHIND_HIGH_WATER'],
  [503, 'SEQUENCE_EXHAUSTED LAYOUT_EXPIRED GENERATOR_CLOSED SEQUENCE_STORE_UNAVAILABLE'],
];
const STATUS = new Map(
  STATUS_OF.flatMap(([status, codes]) => codes.split(' ').map((c) => ['FLURRY_E_' + c, status] as const)),
);

/** The HTTP status for an error: its code's (registry and segment-store errors 503), else 500. */
export function httpStatusOf(err: unknown): number {
  if (!(err instanceof FlurryError)) return 500;
  return STATUS.get(err.code) ?? (/^FLURRY_E_(REGISTRY|SEQUENCE)/.test(err.code) ? 503 : 500);
}

/** True for errors that mean "the generator may not issue right now, try again soon" (503 with `Retry-After`). */
export function isRetryable(err: unknown): boolean {
  return httpStatusOf(err) === 503;
}

/** Codes that mean "the input was bad": fixing it is the remedy, restarting will not help. */
const BAD_INPUT =
  /^FLURRY_E_(USAGE|CONFIG|TLS_UNTRUSTED|RUN_AS_ROOT|LAYOUT_|NODE_OUT_OF_RANGE|ID_|CODEC_UNKNOWN|INVALID_OPTION|TIME_OUT_OF_RANGE|BOUNDS_NOT_CONTIGUOUS|PUBLIC_|UUID_|REGISTRY_(URL|OPTION|STATIC_NODE|AUTH|CLIENT_MISSING|VOLATILE)$|SEQUENCE_(?!EXHAUSTED$|STORE_UNAVAILABLE$|CLOSED$))/;

/** Codes that mean "an engine or store did not answer": an outage, which passes by itself. */
const OUTAGE: ReadonlySet<string> = new Set(['FLURRY_E_REGISTRY_UNREACHABLE', 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE']);

/** What the CLI's exit code and the service's start follow: `bad-input` (exit 2, stop), `outage` (exit 1, retry), `other`. */
export function failureKind(err: unknown): 'bad-input' | 'outage' | 'other' {
  if (!(err instanceof FlurryError)) return 'other';
  if (OUTAGE.has(err.code)) return 'outage';
  return BAD_INPUT.test(err.code) ? 'bad-input' : 'other';
}
