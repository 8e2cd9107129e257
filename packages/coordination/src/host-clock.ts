/** The file registry's host-wide monotonic time and boot ID: docs/node-ids.md ("File internals"). */
import { readFileSync } from 'node:fs';
import { randomHex, type Clock } from '@flurry/core';

let cachedBoot: string | undefined;

export function hostMonotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The kernel's boot ID (Linux), else a random ID per process (others' records then expire by wall time). */
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

/** Where expiry is measured: monotonic ms shared by every process, within a `boot` (records of another are expired). */
export interface LeaseTimeSource {
  monotonic(): number;
  readonly boot: string;
}

/** The time source for a clock: its own `monotonic()` under its `monotonicEpoch` (tests), else the host's. */
export function timeSourceFor(clock: Clock): LeaseTimeSource {
  const epoch = clock.monotonicEpoch;
  if (epoch !== undefined) return { monotonic: () => clock.monotonic(), boot: epoch };
  return { monotonic: hostMonotonicMs, boot: bootId() };
}
