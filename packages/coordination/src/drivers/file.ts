/** The file registry: leases for the processes of one machine, in a directory (docs/node-ids.md, "File internals"). */
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
import { allNodeIds, jsonObject, preferredSlot, slotNumbers } from './common.js';
import {
  describeHolder,
  expiresIn,
  GEN_RE,
  genName,
  holderOf,
  parseLeaseRecord,
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
  /** `'async'` (default) or `'sync'`: unbounded direct calls, granted only on a local disk (docs/node-ids.md). */
  io?: FileIo;
}

const FILE_DRIVER_OPTION_NAMES = optionNames<FileDriverOptions>({ clock: true, time: true, timeoutMs: true, io: true });

export type { FileClaim } from './file-record.js';

const PROBE_BATCH = 16;

class FileDriver implements RegistryDriver {
  readonly kind = 'file';
  readonly url: string;
  readonly time: LeaseTimeSource;
  steps: FileSteps = fileSteps('async');
  private closed = false;
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

  private async own(claim: Claim): Promise<{ dir: string; gen: number; r: ReadResult }> {
    await this.opened();
    const { dir, gen } = claim as Partial<FileClaim>;
    if (typeof dir !== 'string' || typeof gen !== 'number') {
      throw registryError('LEASE_LOST', `${this.url}: the claim was not made by this file registry`, { url: this.url });
    }
    return { dir, gen, r: await this.read(dir, gen) };
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
    const { dir, gen, r } = await this.own(claim);
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
    const { dir, gen, r } = await this.own(claim);
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

  /** The live holders of one namespace (timing: docs/node-ids.md, "Listing holders"). */
  async holders(namespace: string): Promise<HolderRecord[]> {
    await this.opened();
    const slotsDir = path.join(this.nsDir(namespace), 'slots');
    try {
      const names = await this.orMissing(() => this.steps.list(slotsDir, this.timeoutMs), [], '', true);
      const out = await Promise.all(
        slotNumbers(names).map(async (slot) => {
          const dir = path.join(slotsDir, String(slot));
          for (const g of (await this.gens(dir, true)).reverse()) {
            const r = await this.read(dir, g, true);
            // A corrupt current record lists no holder: the next claim reports it.
            if (r.kind === 'corrupt') return undefined;
            if (r.kind === 'ok' && r.rec.state !== 'aborted') return holderOf(slot, r.rec, this.time, this.clock);
          }
          return undefined;
        }),
      );
      return out.filter((h): h is HolderRecord => h !== undefined);
    } catch (e) {
      throw this.ioError(e, `list the holders of "${namespace}"`);
    }
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
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
    return expiresIn(rec, this.time, this.clock) <= 0;
  }

  free(r: ReadResult): boolean {
    return r.kind === 'ok' && (r.rec.state === 'released' || this.expired(r.rec));
  }

  /** What `step` gives, or `missing` when its file or directory does not exist; other failures: {@link ioError}. */
  private async orMissing<T, M>(step: () => Promise<T>, missing: M, doing: string, raw: boolean): Promise<T | M> {
    try {
      return await step();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return missing;
      throw raw ? e : this.ioError(e, doing);
    }
  }

  private readText(file: string, raw = false): Promise<string | undefined> {
    return this.orMissing(() => this.steps.readText(file, this.timeoutMs), undefined, `read ${file}`, raw);
  }

  /** One generation's record; `raw`: a failure other than a missing file is thrown as it came. */
  async read(dir: string, gen: number, raw = false): Promise<ReadResult> {
    const text = await this.readText(path.join(dir, genName(gen)), raw);
    return text === undefined ? { kind: 'missing' } : parseLeaseRecord(text, gen);
  }

  /** The generations in `dir`, ascending (`raw`: as {@link read}). */
  async gens(dir: string, raw = false): Promise<number[]> {
    const names = await this.orMissing(() => this.steps.list(dir, this.timeoutMs), [], `list ${dir}`, raw);
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
    return registryError(
      'UNREACHABLE',
      `${url}: cannot ${doing}: ${err.message}. ${advice} with --registry file:/path`,
      { url, dir: root, errno: err.code, ...(err.code === 'ETIMEDOUT' ? { timeoutMs: this.timeoutMs } : {}) },
      e,
    );
  }
}

/** The holder of a slot whose highest of `gens` is a live lease, or undefined (free, empty or unclear). */
async function heldBy(store: FileDriver, dir: string, gens?: number[]): Promise<string | undefined> {
  gens ??= await store.gens(dir);
  if (!gens.length) return undefined;
  const top = await store.read(dir, gens[gens.length - 1]);
  return top.kind === 'ok' && top.rec.state !== 'aborted' && !store.free(top)
    ? describeHolder(top.rec, store.time)
    : undefined;
}

async function tryClaim(
  store: FileDriver,
  dir: string,
  slot: number,
  req: ClaimRequest,
  exists: boolean,
): Promise<FileClaim | { held: string }> {
  if (!exists) {
    try {
      await makeDirLevels(dir, store.timeoutMs, store.steps);
    } catch (e) {
      throw store.ioError(e, `create ${dir}`);
    }
  }
  for (let attempt = 0; attempt < 8; attempt++) {
    const gens = await store.gens(dir);
    const highest = gens.length ? gens[gens.length - 1] : 0;
    const held = await heldBy(store, dir, gens); // fast path: the highest generation is a live lease
    if (held !== undefined) return { held };
    let mark = await store.readHw(dir);
    let prev: { gen: number; rec: LeaseRecord } | undefined;
    for (let i = gens.length - 1; i >= 0; i--) {
      const r = await store.read(dir, gens[i]);
      if (r.kind === 'missing') continue;
      if (r.kind === 'corrupt' && !prev)
        return { held: `corrupt record ${genName(gens[i])} (${r.why}); remove ${dir} once no process uses it` };
      if (r.kind === 'corrupt') continue;
      if (r.rec.highWaterMs > mark) mark = r.rec.highWaterMs;
      if (!prev && r.rec.state !== 'aborted') prev = { gen: gens[i], rec: r.rec };
    }
    if (prev && !store.free({ kind: 'ok', rec: prev.rec })) return { held: describeHolder(prev.rec, store.time) };
    const gen = highest + 1;
    const token = `${gen}.${randomHex(12)}`;
    const now = store.clock.now();
    const rec: LeaseRecord = {
      v: 1,
      gen,
      slot,
      state: 'held',
      holder: req.holder,
      token,
      boot: store.time.boot,
      expiresMono: store.time.monotonic() + req.ttlMs,
      expiresAtMs: now + req.ttlMs,
      highWaterMs: mark,
      updatedAtMs: now,
      claimedAtMs: now,
    };
    const tmp = path.join(dir, `.new-${process.pid}-${randomHex(6)}`);
    try {
      await store.steps.writeNew(tmp, JSON.stringify(rec) + '\n', store.timeoutMs, true);
      await store.steps.link(tmp, path.join(dir, genName(gen)), store.timeoutMs);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue; // another process made this generation: look again
      throw store.ioError(e, `create ${path.join(dir, genName(gen))}`);
    } finally {
      await store.steps.unlink(tmp, store.timeoutMs).catch(() => undefined);
    }
    let releasedCleanly = true; // also with only aborted generations: they never issued; the history is in `hw`
    if (prev) {
      // Dekker: we wrote (our generation), now read the previous lease again.
      const again = await store.read(dir, prev.gen);
      if (again.kind !== 'ok' || again.rec.token !== prev.rec.token || !store.free(again)) {
        await store.writeRecord(dir, { ...rec, state: 'aborted', updatedAtMs: store.clock.now() });
        return {
          held: again.kind === 'ok' ? describeHolder(again.rec, store.time) : `a racing claim of slot ${slot}`,
        };
      }
      releasedCleanly = again.rec.state === 'released';
      if (again.rec.highWaterMs > mark) {
        mark = again.rec.highWaterMs;
        await store.writeRecord(dir, { ...rec, highWaterMs: mark });
      }
      for (const g of gens) {
        if (g >= prev.gen) break;
        await store.steps.unlink(path.join(dir, genName(g)), store.timeoutMs).catch(() => undefined);
      }
    }
    return { slot, token, highWaterMs: mark, releasedCleanly, dir, gen };
  }
  return { held: `slot ${slot} is contended by other claimers` };
}

/** Claims a free slot: the preferred one, then existing slot directories (held ones skipped), then fresh ones. */
async function claimFileSlot(store: FileDriver, req: ClaimRequest): Promise<FileClaim> {
  if (!Number.isInteger(req.slots) || req.slots < 1)
    throw registryError('OPTION', `slots must be a positive integer; got ${req.slots}`, { slots: req.slots });
  const slotsDir = path.join(store.nsDir(req.namespace), 'slots');
  let existing: Set<number>;
  try {
    await makeDirLevels(slotsDir, store.timeoutMs, store.steps);
    existing = new Set((await store.steps.list(slotsDir, store.timeoutMs)).filter((n) => /^\d+$/.test(n)).map(Number));
  } catch (e) {
    throw store.ioError(e, `create ${slotsDir}`);
  }
  const held: { slot: number; holder: string }[] = [];
  const visit = async (slot: number, holder?: string): Promise<FileClaim | undefined> => {
    const dir = path.join(slotsDir, String(slot));
    const r = holder !== undefined ? { held: holder } : await tryClaim(store, dir, slot, req, existing.has(slot));
    return 'held' in r ? void held.push({ slot, holder: r.held }) : r;
  };
  const pref = preferredSlot(req);
  const first = pref === undefined ? undefined : await visit(pref);
  if (first) return first;
  // Existing slot directories first (recycling), in order; then fresh ones.
  const sorted = [...existing].filter((s) => s < req.slots && s !== pref).sort((a, b) => a - b);
  // Read-only look-ahead, PROBE_BATCH slots at a time: only the slots not visibly held get the full protocol.
  for (let i = 0; i < sorted.length; i += PROBE_BATCH) {
    const batch = sorted.slice(i, i + PROBE_BATCH);
    const dirs = batch.map((slot) => path.join(slotsDir, String(slot)));
    const holders = await Promise.all(dirs.map((dir) => heldBy(store, dir).catch(() => undefined)));
    for (let k = 0; k < batch.length; k++) {
      const c = await visit(batch[k], holders[k]);
      if (c) return c;
    }
  }
  for (let s = 0; s < req.slots; s++) {
    const c = existing.has(s) || s === pref ? undefined : await visit(s);
    if (c) return c;
  }
  const list = held
    .slice(0, 10)
    .map((h) => `slot ${h.slot}: ${h.holder}`)
    .join('; ');
  throw registryError(
    'EXHAUSTED',
    `${allNodeIds(req.slots).join(` of "${req.namespace}" in ${store.url} `)} held (${held.length} held): ${list}${held.length > 10 ? `; … ${held.length - 10} more` : ''}. ` +
      "Stop a holder, wait for crashed holders' leases to expire, or use a layout with more node bits.",
    { url: store.url, namespace: req.namespace, slots: req.slots, held: held.length, holders: held.slice(0, 100) },
  );
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
    throw optionError(
      'io',
      `io must be 'async' (each step bounded by timeoutMs) or 'sync' (for a short-lived process); got ${JSON.stringify(io)}. Leave it out for 'async'.`,
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
