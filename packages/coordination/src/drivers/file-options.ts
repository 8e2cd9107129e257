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
  /**
   * The longest one file-system step (a mkdir, read, write, flush, rename) may take before the operation fails
   * with `FLURRY_E_REGISTRY_UNREACHABLE` naming the directory: a hung mount must not hang the caller. Default
   * 5000 ms (`openRegistry` passes its `connectTimeoutMs`).
   */
  timeoutMs?: number;
  /**
   * How the file-system steps run (file-steps.ts). `'sync'`: as synchronous calls on the calling thread, about ten
   * times faster for one claim in a fresh process but without `timeoutMs` and blocking the event loop meanwhile:
   * for a short-lived process with nothing else to serve (the CLI's `next`). Granted at the driver's first
   * operation only when the directory is on a local disk file system (ext4, xfs, btrfs, tmpfs, …, by `statfs`);
   * on NFS, SMB, FUSE or anything unknown the steps stay `'async'`. Default `'async'`.
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

/** The keys of {@link FileDriverOptions}. @example `FILE_DRIVER_OPTION_NAMES // ['clock', 'time', 'timeoutMs', 'io']` */
export const FILE_DRIVER_OPTION_NAMES = optionNames<FileDriverOptions>({
  clock: true,
  time: true,
  timeoutMs: true,
  io: true,
});
