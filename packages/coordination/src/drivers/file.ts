/**
 * The embedded file registry: node-ID leases for the processes of one machine, in a
 * directory. The link protocol (generations, Dekker write-then-read, monotonic expiry):
 * docs/node-ids.md ("File internals"); the claim is in file-claim.ts, each file-system step
 * in file-steps.ts.
 */
import path from 'node:path';
import { assertKnownOptions, FlurryError, optionNames, randomHex, type Clock } from '@flurry/core';
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { optionError, registryError } from '../errors.js';
import {
  fileSteps,
  fileSystemType,
  localFileSystem,
  writeFileAtomicWithin,
  type FileIo,
  type FileSteps,
} from '../file-steps.js';
import { hostMonotonicMs, timeSourceFor, type LeaseTimeSource } from '../host-clock.js';
import { makeDirLevels } from '../state-dir.js';
import { claimFileSlot, type FileSlotStore } from './file-claim.js';
import { jsonObject } from './common.js';
import {
  GEN_RE,
  genName,
  isKernelBoot,
  parseLeaseRecord,
  readFileHolders,
  SEGMENT_RE,
  type FileClaim,
  type LeaseRecord,
  type ReadResult,
} from './file-record.js';

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

/** The keys of {@link FileDriverOptions}. */
const FILE_DRIVER_OPTION_NAMES = optionNames<FileDriverOptions>({
  clock: true,
  time: true,
  timeoutMs: true,
  io: true,
});

export type { FileClaim } from './file-record.js';

class FileDriver implements RegistryDriver, FileSlotStore {
  readonly kind = 'file';
  readonly url: string;
  private closed = false;
  readonly time: LeaseTimeSource;
  /** The file-system steps in use: `async` until {@link ioReady} grants the `sync` mode asked for. */
  steps: FileSteps = fileSteps('async');
  /** The one look at the directory's file system that decides the mode (when `sync` was asked for). */
  private granting: Promise<void> | undefined;

  constructor(
    private readonly root: string,
    readonly clock: Clock,
    time: LeaseTimeSource | undefined,
    readonly timeoutMs: number,
    private readonly askedIo: FileIo,
  ) {
    this.url = `file:${root}`;
    this.time = time ?? timeSourceFor(clock);
  }

  /** The mode the steps run in: `sync` only when asked for and granted (a local disk). */
  get io(): FileIo {
    return this.steps.io;
  }

  /** Before the first operation: grants `sync` on a local disk; never fails (else the steps stay `async`). */
  private ioReady(timeoutMs = this.timeoutMs): Promise<void> {
    if (this.askedIo !== 'sync') return Promise.resolve();
    this.granting ??= (async () => {
      let dir = this.root;
      for (let depth = 0; depth < 256; depth++) {
        try {
          if (localFileSystem(await fileSystemType(dir, timeoutMs)) !== undefined) this.steps = fileSteps('sync');
          return;
        } catch (e) {
          const up = path.dirname(dir);
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || up === dir) return;
          dir = up;
        }
      }
    })();
    return this.granting;
  }

  /** Refuses a closed registry, then {@link ioReady}. */
  private async opened(): Promise<void> {
    if (this.closed) throw registryError('CLOSED', `the file registry ${this.url} was closed`, { url: this.url });
    await this.ioReady();
  }

  nsDir(namespace: string): string {
    const parts = namespace.split('/');
    if (!parts.length || parts.some((p) => !SEGMENT_RE.test(p) || p === '.' || p === '..')) {
      throw registryError(
        'OPTION',
        `namespace "${namespace}" is invalid: segments of A-Z a-z 0-9 _ . - separated by "/"`,
        { namespace },
      );
    }
    return path.join(this.root, ...parts);
  }

  private expired(rec: LeaseRecord): boolean {
    if (rec.boot === this.time.boot) return this.time.monotonic() >= rec.expiresMono;
    if (isKernelBoot(rec.boot) && isKernelBoot(this.time.boot)) return true; // another boot: its processes are gone
    return this.clock.now() >= rec.expiresAtMs; // no shared monotonic clock: fall back to wall time
  }

  free(r: ReadResult): boolean {
    return r.kind === 'ok' && (r.rec.state === 'released' || this.expired(r.rec));
  }

  /** Creates the directory, grants `sync` if asked, and proves it can hold a registry (write, link, remove). */
  async check(): Promise<void> {
    const deadline = hostMonotonicMs() + this.timeoutMs;
    const left = (): number => Math.max(1, Math.ceil(deadline - hostMonotonicMs()));
    const probe = path.join(this.root, `.probe-${process.pid}-${randomHex(6)}`);
    try {
      await makeDirLevels(this.root, left());
      await this.ioReady(left());
      await writeFileAtomicWithin(this.steps, probe, 'flurry\n', left(), false);
      await this.steps.link(probe, `${probe}.link`, left());
      await this.steps.unlink(`${probe}.link`, left());
      await this.steps.unlink(probe, left());
    } catch (e) {
      throw this.ioError(e, `use the directory ${this.root} for a registry`);
    }
  }

  /** What `step` gives, or `missing` when its file or directory does not exist; other failures: {@link ioError}. */
  private async orMissing<T, M>(step: () => Promise<T>, missing: M, doing: string): Promise<T | M> {
    try {
      return await step();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return missing;
      throw this.ioError(e, doing);
    }
  }

  private readText(file: string): Promise<string | undefined> {
    return this.orMissing(() => this.steps.readText(file, this.timeoutMs), undefined, `read ${file}`);
  }

  async read(dir: string, gen: number): Promise<ReadResult> {
    const text = await this.readText(path.join(dir, genName(gen)));
    return text === undefined ? { kind: 'missing' } : parseLeaseRecord(text, gen);
  }

  async gens(dir: string): Promise<number[]> {
    const names = await this.orMissing(() => this.steps.list(dir, this.timeoutMs), [], `list ${dir}`);
    return names.flatMap((n) => GEN_RE.exec(n)?.slice(1, 2).map(Number) ?? []).sort((a, b) => a - b);
  }

  async readHw(dir: string): Promise<number> {
    const v = jsonObject(await this.readText(path.join(dir, 'hw'))).highWaterMs;
    return typeof v === 'number' && Number.isFinite(v) ? v : 0;
  }

  writeRecord(dir: string, rec: LeaseRecord): Promise<void> {
    return writeFileAtomicWithin(
      this.steps,
      path.join(dir, genName(rec.gen)),
      JSON.stringify(rec) + '\n',
      this.timeoutMs,
    );
  }

  /** `FLURRY_E_REGISTRY_UNREACHABLE` for a failed file-system step, with advice by cause; coded errors pass. */
  ioError(e: unknown, doing: string): Error {
    const err = e as NodeJS.ErrnoException;
    if (err instanceof FlurryError) return err;
    const { url, root } = this;
    const advice =
      err.code === 'ETIMEDOUT'
        ? `Check the mount holding ${root} or choose another directory`
        : err.code === 'EACCES' || err.code === 'EPERM' || err.code === 'EROFS'
          ? 'Give this user write access to the directory or choose another'
          : 'Choose a directory on a local, writable file system';
    const details = {
      url,
      dir: root,
      errno: err.code,
      ...(err.code === 'ETIMEDOUT' ? { timeoutMs: this.timeoutMs } : {}),
    };
    return registryError(
      'UNREACHABLE',
      `${url}: cannot ${doing}: ${err.message}. ${advice} with --registry file:/path`,
      details,
      e,
    );
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    await this.opened();
    return claimFileSlot(this, req);
  }

  private own(claim: Claim): { dir: string; gen: number } {
    const c = claim as Partial<FileClaim>;
    if (typeof c.dir !== 'string' || typeof c.gen !== 'number') {
      throw registryError('LEASE_LOST', `${this.url}: the claim was not made by this file registry`, { url: this.url });
    }
    return { dir: c.dir, gen: c.gen };
  }

  /** True when a generation above `gen` exists that is not aborted (or cannot be read). */
  private async superseded(dir: string, gen: number): Promise<boolean> {
    for (const g of await this.gens(dir)) {
      if (g <= gen) continue;
      const r = await this.read(dir, g);
      if (r.kind === 'ok' && r.rec.state === 'aborted') continue;
      return true;
    }
    return false;
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    await this.opened();
    const { dir, gen } = this.own(claim);
    const r = await this.read(dir, gen);
    const lost = (why: string): Error =>
      registryError('LEASE_LOST', `the lease of slot ${claim.slot} in ${this.url} is no longer ours: ${why}`, {
        url: this.url,
        slot: claim.slot,
      });
    if (r.kind !== 'ok' || r.rec.token !== claim.token) throw lost('its record is gone or belongs to another holder');
    if (r.rec.state !== 'held') throw lost(`it was ${r.rec.state}`);
    if (this.expired(r.rec)) throw lost('it expired');
    const now = this.clock.now();
    const rec: LeaseRecord = {
      ...r.rec,
      expiresMono: this.time.monotonic() + opts.ttlMs,
      expiresAtMs: now + opts.ttlMs,
      highWaterMs: Math.max(r.rec.highWaterMs, Number.isFinite(opts.highWaterMs) ? opts.highWaterMs : 0),
      updatedAtMs: now,
    };
    try {
      await this.writeRecord(dir, rec);
    } catch (e) {
      throw this.ioError(e, `write ${path.join(dir, genName(gen))}`);
    }
    // Dekker: we wrote, now look for a taker.
    if (await this.superseded(dir, gen)) throw lost('another process took it over after it expired');
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    await this.opened();
    const { dir, gen } = this.own(claim);
    const r = await this.read(dir, gen);
    if (r.kind !== 'ok' || r.rec.token !== claim.token || r.rec.state !== 'held') return;
    if (await this.superseded(dir, gen)) return;
    const mark = Math.max(r.rec.highWaterMs, Number.isFinite(opts.highWaterMs) ? opts.highWaterMs : 0);
    try {
      const hw = await this.readHw(dir);
      if (mark > hw)
        await writeFileAtomicWithin(
          this.steps,
          path.join(dir, 'hw'),
          JSON.stringify({ highWaterMs: mark, at: new Date(this.clock.now()).toISOString() }) + '\n',
          this.timeoutMs,
        );
      await this.writeRecord(dir, { ...r.rec, state: 'released', highWaterMs: mark, updatedAtMs: this.clock.now() });
    } catch (e) {
      throw this.ioError(e, `release slot ${claim.slot}`);
    }
  }

  async holders(namespace: string): Promise<HolderRecord[]> {
    await this.opened();
    try {
      return await readFileHolders(this.nsDir(namespace), {
        time: this.time,
        clock: this.clock,
        timeoutMs: this.timeoutMs,
        steps: this.steps,
      });
    } catch (e) {
      throw this.ioError(e, `list the holders of "${namespace}"`);
    }
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** Opens the file registry in `dir` (created on first claim). */
export function createFileDriver(dir: string, opts: FileDriverOptions): RegistryDriver {
  assertKnownOptions(opts, FILE_DRIVER_OPTION_NAMES, 'createFileDriver options');
  if (typeof dir !== 'string' || !path.isAbsolute(dir)) {
    throw registryError(
      'URL_INVALID',
      `the file registry needs an absolute directory; got ${JSON.stringify(dir)} (use file:/abs/dir or file: for the default)`,
      { dir },
    );
  }
  const timeoutMs = opts.timeoutMs ?? 5000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw optionError('timeoutMs', `timeoutMs must be an integer from 1 to 600000 ms; got ${String(timeoutMs)}`);
  }
  const io = opts.io ?? 'async';
  if (io !== 'async' && io !== 'sync') {
    throw registryError(
      'OPTION',
      `io must be 'async' (each step bounded by timeoutMs) or 'sync' (for a short-lived process); got ${JSON.stringify(io)}. Leave it out for 'async'.`,
      { option: 'io' },
    );
  }
  return new FileDriver(path.normalize(dir), opts.clock, opts.time, timeoutMs, io);
}

/**
 * {@link createFileDriver}, then creates the directory and proves it can hold a registry, every
 * step bounded by `timeoutMs` (`FLURRY_E_REGISTRY_UNREACHABLE` instead of hanging on a hung mount).
 *
 * @example
 * ```ts
 * const driver = await openFileDriver('/var/lib/flurry/registry', { clock: systemClock, timeoutMs: 5000 });
 * const forCli = await openFileDriver('/var/lib/flurry/registry', { clock: systemClock, io: 'sync' });
 * ```
 */
export async function openFileDriver(dir: string, opts: FileDriverOptions): Promise<RegistryDriver> {
  const driver = createFileDriver(dir, opts) as FileDriver;
  await driver.check();
  return driver;
}
