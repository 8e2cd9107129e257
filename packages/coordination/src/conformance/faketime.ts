/**
 * libfaketime for clock steps inside running processes. A child started with `faketimeEnv(file)`
 * reads its wall-clock offset from `file` on every call (FAKETIME_NO_CACHE=1); monotonic time
 * stays real (FAKETIME_DONT_FAKE_MONOTONIC=1), as it does when NTP or an operator steps a real
 * machine's clock. Offsets are relative to real time, in seconds in the file ("+0", "-0.010",
 * "+3600"), in ms here. Several processes sharing one file see the same machine-wide step.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** Where Debian's `faketime` package puts libfaketime. */
export const LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** True when libfaketime is installed. */
export const faketimeAvailable = (): boolean => existsSync(LIB);

/** Environment for a child whose wall clock follows the offset in `file`. */
export function faketimeEnv(file: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    LD_PRELOAD: LIB,
    FAKETIME_TIMESTAMP_FILE: file,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    DONT_FAKE_MONOTONIC: '1',
  };
}

/** Sets the offset (ms, relative to real time) atomically (write + rename), e.g. -10 as "-0.010". */
export function setOffset(file: string, ms: number): void {
  const abs = Math.round(Math.abs(ms));
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${ms < 0 ? '-' : '+'}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, '0')}\n`);
  renameSync(tmp, file);
}

/** The offset (ms) a child on `file` runs under now (0 when the file is missing or unreadable): `setOffset`'s inverse. */
export function readOffset(file: string): number {
  try {
    const ms = Math.round(Number(readFileSync(file, 'utf8').trim()) * 1000);
    return Number.isFinite(ms) ? ms : 0;
  } catch {
    return 0;
  }
}
