/**
 * Host-wide monotonic time for the file registry: lease files expire on the kernel's
 * CLOCK_MONOTONIC (one clock for every process, never stepped by NTP) within one boot ID.
 * Why: docs/node-ids.md ("File internals").
 */
import { readFileSync } from 'node:fs';
import { randomHex, type Clock } from '@flurry/core';

let cachedBoot: string | undefined;

/**
 * Milliseconds on the host's monotonic clock (CLOCK_MONOTONIC on Linux; it stands still
 * while the host is suspended).
 */
export function hostMonotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * The kernel's boot ID (Linux), or a random ID per process elsewhere (so records from
 * other processes count as another boot and expire by their wall-clock time instead).
 */
export function bootId(): string {
  if (cachedBoot === undefined) {
    try {
      cachedBoot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || `process-${randomHex(16)}`;
    } catch {
      cachedBoot = `process-${randomHex(16)}`;
    }
  }
  return cachedBoot;
}

/** Where expiry is measured: the host's monotonic clock and boot ID, or a test clock's. */
export interface LeaseTimeSource {
  /** Monotonic ms shared by every process using the directory. */
  monotonic(): number;
  /** Identifies the monotonic clock's epoch (the boot); records from another are expired. */
  readonly boot: string;
}

/**
 * The default time source for a clock: a clock with its own monotonic epoch (a test's
 * `ManualClock`, see `Clock.monotonicEpoch`) measures expiry on its own `monotonic()`
 * under that epoch (processes in one test); any other on the host's monotonic clock and
 * boot ID.
 *
 * @example
 * ```ts
 * timeSourceFor(systemClock).boot; // the kernel boot ID
 * ```
 */
export function timeSourceFor(clock: Clock): LeaseTimeSource {
  const epoch = clock.monotonicEpoch;
  if (epoch !== undefined) return { monotonic: () => clock.monotonic(), boot: epoch };
  return { monotonic: hostMonotonicMs, boot: bootId() };
}
