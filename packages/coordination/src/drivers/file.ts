/** The file registry: leases for the processes of one machine, in a directory (docs/node-ids.md, "File internals"). */
import path from 'node:path';
import { assertKnownOptions, optionNames, randomHex, type Clock } from '@flurry/core';
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { optionError, registryError } from '../errors.js';
import { fileSteps, fileSystemType, localFileSystem, writeFileAtomicWithin, type FileIo } from '../file-steps.js';
import { hostMonotonicMs, timeSourceFor, type LeaseTimeSource } from '../host-clock.js';
import { makeDirLevels } from '../state-dir.js';
import { claimFileSlot, FileSlots } from './file-claim.js';
import { genName, type FileClaim, type LeaseRecord } from './file-record.js';

/** Options of {@link createFileDriver}. */
export interface FileDriverOptions {
  /** Wall clock for the informational expiry and timestamps; a `ManualClock` also drives expiry. */
  clock: Clock;
  /** Overrides the time source (default: the host clock, or the ManualClock's monotonic time). */
  time?: LeaseTimeSource;
  /** The longest one file-system step may take (`FLURRY_E_REGISTRY_UNREACHABLE` beyond); default 5000 ms. */
  timeoutMs?: number;
  /** `'async'` (default) or `'sync'`: unbounded direct calls, granted only on a local disk (docs/node-ids.md). */
  io?: FileIo;
}

const FILE_DRIVER_OPTION_NAMES = optionNames<FileDriverOptions>({ clock: true, time: true, timeoutMs: true, io: true });

export type { FileClaim } from './file-record.js';

class FileDriver extends FileSlots implements RegistryDriver {
  readonly kind = 'file';
  private closed = false;
  private granting: Promise<void> | undefined;

  constructor(
    root: string,
    clock: Clock,
    time: LeaseTimeSource | undefined,
    timeoutMs: number,
    private readonly askedIo: FileIo,
  ) {
    super(root, clock, time ?? timeSourceFor(clock), timeoutMs);
  }

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

  private async opened(): Promise<void> {
    if (this.closed) throw registryError('CLOSED', `the file registry ${this.url} was closed`, { url: this.url });
    await this.ioReady();
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
      return await this.readHolders(namespace);
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

/** {@link createFileDriver}, then creates the directory and proves it can hold a registry, each step bounded. */
export async function openFileDriver(dir: string, opts: FileDriverOptions): Promise<RegistryDriver> {
  const driver = createFileDriver(dir, opts) as FileDriver;
  await driver.check();
  return driver;
}
