/** The file registry's file-system steps, `async` (each bounded) or `sync`: docs/node-ids.md ("`file:` — one machine"). */
import fs, { constants, type Stats } from 'node:fs';
import { randomHex } from '@flurry/core';

/** How the file registry runs its file-system steps (see the module comment). */
export type FileIo = 'async' | 'sync';

/** One file-system step each, bounded by `timeoutMs` in the `async` mode; Node's errno errors, or `ETIMEDOUT`. */
export interface FileSteps {
  readonly io: FileIo;
  readText(file: string, timeoutMs: number): Promise<string>;
  list(dir: string, timeoutMs: number): Promise<string[]>;
  stat(p: string, timeoutMs: number): Promise<Stats>;
  /** Creates one directory (mode 0755); its parent must exist. */
  mkdir(p: string, timeoutMs: number): Promise<void>;
  /** A hard link `to` for `from`; fails with `EEXIST` if `to` exists (the registry's atomic create). */
  link(from: string, to: string, timeoutMs: number): Promise<void>;
  rename(from: string, to: string, timeoutMs: number): Promise<void>;
  unlink(p: string, timeoutMs: number): Promise<void>;
  /** Creates a new file (fails with `EEXIST` if it exists), writes `data` and, with `fsync`, flushes it. */
  writeNew(file: string, data: string, timeoutMs: number, fsync: boolean): Promise<void>;
}

export function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

type Done<T> = (err: NodeJS.ErrnoException | null, value: T) => void;

/** One asynchronous step, or `ETIMEDOUT` naming it after `timeoutMs` (it cannot be cancelled; its late result is dropped). */
function bounded<T>(what: string, timeoutMs: number, start: (done: Done<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(errno('ETIMEDOUT', `${what} did not finish within ${timeoutMs} ms (the file system does not answer)`)),
      timeoutMs,
    );
    start((err, value) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(value);
    });
  });
}

const ignore = (): void => undefined;

const asyncSteps: FileSteps = {
  io: 'async',
  readText: (file, ms) => bounded<string>(`read ${file}`, ms, (done) => fs.readFile(file, 'utf8', done)),
  list: (dir, ms) => bounded<string[]>(`list ${dir}`, ms, (done) => fs.readdir(dir, done)),
  stat: (p, ms) => bounded<Stats>(`stat ${p}`, ms, (done) => fs.stat(p, done)),
  mkdir: (p, ms) => bounded<void>(`mkdir ${p}`, ms, (done) => fs.mkdir(p, 0o755, (e) => done(e, undefined))),
  link: (from, to, ms) => bounded<void>(`link ${to}`, ms, (done) => fs.link(from, to, (e) => done(e, undefined))),
  rename: (from, to, ms) =>
    bounded<void>(`rename ${from} to ${to}`, ms, (done) => fs.rename(from, to, (e) => done(e, undefined))),
  unlink: (p, ms) => bounded<void>(`remove ${p}`, ms, (done) => fs.unlink(p, (e) => done(e, undefined))),
  async writeNew(file, data, ms, fsync) {
    const fd = await bounded<number>(`create ${file}`, ms, (done) => fs.open(file, 'wx', 0o644, done));
    try {
      await bounded<void>(`write ${file}`, ms, (done) => fs.writeFile(fd, data, (e) => done(e, undefined)));
      if (fsync) await bounded<void>(`flush ${file}`, ms, (done) => fs.fdatasync(fd, (e) => done(e, undefined)));
    } catch (e) {
      fs.close(fd, ignore);
      fs.unlink(file, ignore);
      throw e;
    }
    await bounded<void>(`close ${file}`, ms, (done) => fs.close(fd, (e) => done(e, undefined)));
  },
};

/** Opens a file for reading without blocking (a FIFO would block `open` until a writer comes) and checks its type. */
function readRegularFile(file: string): string {
  const fd = fs.openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile())
      throw errno('EFTYPE', `${file} is not a regular file (a registry holds only directories and regular files)`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** A synchronous step's result or error as a settled promise. */
const direct = <T>(step: () => T): Promise<T> => new Promise<T>((resolve) => resolve(step()));

/** Creates a new file (`wx`), writes `data` and, with `fsync`, flushes it; removes it when that fails. */
export function writeNewSync(file: string, data: string, fsync: boolean): void {
  const fd = fs.openSync(file, 'wx', 0o644);
  try {
    fs.writeFileSync(fd, data);
    if (fsync) fs.fdatasyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    try {
      fs.unlinkSync(file);
    } catch {
      /* the write failed; the temporary file may be gone already */
    }
    throw e;
  }
  fs.closeSync(fd);
}

const syncSteps: FileSteps = {
  io: 'sync',
  readText: (file) => direct(() => readRegularFile(file)),
  list: (dir) => direct(() => fs.readdirSync(dir)),
  stat: (p) => direct(() => fs.statSync(p)),
  mkdir: (p) => direct(() => void fs.mkdirSync(p, 0o755)),
  link: (from, to) => direct(() => fs.linkSync(from, to)),
  rename: (from, to) => direct(() => fs.renameSync(from, to)),
  unlink: (p) => direct(() => fs.unlinkSync(p)),
  writeNew: (file, data, _ms, fsync) => direct(() => writeNewSync(file, data, fsync)),
};

export function fileSteps(io: FileIo): FileSteps {
  return io === 'sync' ? syncSteps : asyncSteps;
}

/** Writes a file atomically with the given steps: a new temporary file beside it, flushed, renamed over it. */
export async function writeFileAtomicWithin(
  steps: FileSteps,
  file: string,
  data: string,
  timeoutMs: number,
  fsync = true,
): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${randomHex(4)}`;
  await steps.writeNew(tmp, data, timeoutMs, fsync);
  try {
    await steps.rename(tmp, file, timeoutMs);
  } catch (e) {
    void steps.unlink(tmp, timeoutMs).catch(ignore);
    throw e;
  }
}

/** Linux `statfs` types on a local disk or in memory: the `sync` mode cannot wait on a network or a user-space server there. */
const LOCAL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0xef53, 'ext2/3/4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0x2fc12fc1, 'zfs'],
  [0xf2f52010, 'f2fs'],
  [0xca451a4e, 'bcachefs'],
  [0x3153464a, 'jfs'],
  [0x52654973, 'reiserfs'],
  [0x01021994, 'tmpfs'],
  [0x858458f6, 'ramfs'],
  [0x794c7630, 'overlayfs'],
]);

/** The name of a local disk or memory file system for a Linux `statfs` type, or undefined (any other). */
export function localFileSystem(type: number, platform: NodeJS.Platform = process.platform): string | undefined {
  return platform === 'linux' ? LOCAL_FILE_SYSTEMS.get(type >>> 0) : undefined;
}

/** The `statfs` type of the file system holding `dir`, as one bounded step. */
export function fileSystemType(dir: string, timeoutMs: number): Promise<number> {
  return bounded<number>(`statfs ${dir}`, timeoutMs, (done) => fs.statfs(dir, (e, s) => done(e, e ? 0 : s.type)));
}
