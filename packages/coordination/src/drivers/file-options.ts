/** The options of the file registry driver and the claim it hands out (file.ts is the driver). */
import { optionNames, type Clock } from '@flurry/core';
import type { Claim } from '../driver.js';
import type { FileIo } from '../file-steps.js';
import type { LeaseTimeSource } from '../host-clock.js';

/** Options of {@link createFileDriver}. */
export interface FileDriverOptions {
  /** Wall clock for the informational expiry and timestamps; a `ManualClock` also drives expiry. */
  clock: Clock;
  /** Overrides the time source (default: the host clock, or the ManualClock's monotonic time). */
  time?: LeaseTimeSource;
  /** The longest one file-system step may take (`FLURRY_E_REGISTRY_UNREACHABLE` beyond); default 5000 ms. */
  timeoutMs?: number;
  /**
   * `'async'` (default) or `'sync'`: direct calls, faster in a fresh process but unbounded and
   * blocking, granted only on a local disk file system (docs/node-ids.md, "`file:` — one machine").
   */
  io?: FileIo;
}

/** A claim made by the file driver (the manager passes it back unchanged). */
export interface FileClaim extends Claim {
  /** The slot's directory. */
  readonly dir: string;
  /** The lease generation. */
  readonly gen: number;
}

/** The keys of {@link FileDriverOptions}. */
export const FILE_DRIVER_OPTION_NAMES = optionNames<FileDriverOptions>({
  clock: true,
  time: true,
  timeoutMs: true,
  io: true,
});
