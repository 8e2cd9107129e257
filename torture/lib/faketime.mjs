// libfaketime for clock steps inside running processes. A child started with `env(file)`
// reads its wall-clock offset from `file` on every call (FAKETIME_NO_CACHE=1); monotonic
// time stays real (FAKETIME_DONT_FAKE_MONOTONIC=1), as it does when NTP or an operator
// steps a real machine's clock. Offsets are relative to real time, in seconds: "+0",
// "-0.010", "+3600". Several processes sharing one file see the same machine-wide step.
import { existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';

/**
 * Where Debian's `faketime` package puts libfaketime.
 * @example if (existsSync(LIB)) …
 */
export const LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/**
 * True when libfaketime is installed.
 * @example if (!available()) row.fail('apt-get install faketime');
 */
export function available() {
  return existsSync(LIB);
}

/**
 * Environment for a child whose wall clock follows the offset in `file`.
 * @example spawn(process.execPath, ['child.mjs'], { env: env('/tmp/clock') });
 */
export function env(file, base = process.env) {
  return {
    ...base,
    LD_PRELOAD: LIB,
    FAKETIME_TIMESTAMP_FILE: file,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    DONT_FAKE_MONOTONIC: '1',
  };
}

/**
 * Formats an offset in ms as libfaketime's relative form, e.g. -10 → "-0.010".
 * @example formatOffset(-10); // '-0.010'
 */
export function formatOffset(ms) {
  const sign = ms < 0 ? '-' : '+';
  const abs = Math.round(Math.abs(ms));
  return `${sign}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, '0')}`;
}

/**
 * Sets the offset (ms, relative to real time) atomically (write + rename).
 * @example setOffset('/tmp/clock', -3_600_000); // every child on this file: one hour back
 */
export function setOffset(file, ms) {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, formatOffset(ms) + '\n');
  renameSync(tmp, file);
}

/**
 * The offset (ms, relative to real time) a child on `file` runs under now (0 when the file is missing or
 * unreadable): the inverse of `setOffset`.
 * @example setOffset('/tmp/clock', -1_011); readOffset('/tmp/clock'); // -1011
 */
export function readOffset(file) {
  try {
    const ms = Math.round(Number(readFileSync(file, 'utf8').trim()) * 1000);
    return Number.isFinite(ms) ? ms : 0;
  } catch {
    return 0;
  }
}
