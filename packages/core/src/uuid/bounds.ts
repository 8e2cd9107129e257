/** The smallest and largest UUIDv7 of a Unix millisecond, for range scans (docs/sql.md, "UUIDv7 columns"). */
import { ErrorCode, FlurryError } from '../errors.js';
import { MAX_UNIX_MS as MAX_MS } from './format.js';

function hexMs(ms: number, what: string): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_MS) {
    throw new FlurryError(
      ErrorCode.TIME_OUT_OF_RANGE,
      `${what} (Unix ms ${String(ms)}) is outside what a UUIDv7 holds: whole Unix ms from 0 to ${MAX_MS} (1970-01-01T00:00:00.000Z to 10889-08-02T05:31:50.655Z). Give a time in that range.`,
      { value: String(ms), min: 0, max: MAX_MS },
    );
  }
  const h = ms.toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}`;
}

/** The smallest UUIDv7 of the Unix millisecond `ms`, canonical (`FLURRY_E_TIME_OUT_OF_RANGE` outside 0 … 2^48 − 1). */
export function uuidMinAt(ms: number, what = 'the time'): string {
  return `${hexMs(ms, what)}-7000-8000-000000000000`;
}

/** The largest UUIDv7 of the Unix millisecond `ms`, canonical (`FLURRY_E_TIME_OUT_OF_RANGE` outside 0 … 2^48 − 1). */
export function uuidMaxAt(ms: number, what = 'the time'): string {
  return `${hexMs(ms, what)}-7fff-bfff-ffffffffffff`;
}
