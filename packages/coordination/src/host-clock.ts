/**
 * Host-wide monotonic time for leases shared by processes of one machine.
 *
 * Lease files must not expire by wall time: an NTP step forward would expire a live
 * holder's lease early and let a second process take its node ID while the first still
 * issues. `process.hrtime` reads the kernel's CLOCK_MONOTONIC on Linux, which is one
 * clock for every process of the host (since boot) and never steps; `performance.now()`,
 * which holders use for their fencing deadlines, runs on the same clock. A reboot resets
 * it, so lease records carry the boot ID and a record from another boot is expired (its
 * processes are gone).
 *
 * CLOCK_MONOTONIC does not count time the host spends suspended (laptop lid, VM pause).
 * For lease files that is consistent: every holder on the host is suspended with it, so
 * no record expires under a sleeping holder. The holders' leases also carry a wall-clock
 * deadline (see `lease.ts`), which does pass across a long suspend: they fence
 * themselves on resume and re-acquire (usually the same slot, whose record is still
 * theirs) — conservative for the file registry, and what a network registry, whose TTL
 * ran on during the suspend, needs.
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
