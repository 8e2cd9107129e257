/** The local state directory and the per-host cache of the slot this host held last. */
import { mkdirSync, readFileSync, renameSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { randomHex } from '@flurry/core';
import { errno, fileSteps, writeNewSync, type FileSteps } from './file-steps.js';
import { hostMonotonicMs } from './host-clock.js';

/** `$XDG_STATE_HOME/flurry` when set (and absolute), else `~/.local/state/flurry`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'flurry');
  return path.join(homedir(), '.local', 'state', 'flurry');
}

/** Writes a file atomically: a temporary file beside it, flushed, then renamed over it. */
export function writeFileAtomic(file: string, data: string, fsync = true): void {
  const tmp = `${file}.tmp-${process.pid}-${randomHex(4)}`;
  writeNewSync(tmp, data, fsync);
  renameSync(tmp, file);
}

type LevelStep = { readonly kind: 'stat' | 'mkdir'; readonly path: string };
type LevelAnswer = { readonly stats?: Stats; readonly error?: NodeJS.ErrnoException };

/** The walk of both runners below: stat up to an existing level (at most 256), then mkdir down. */
function* levelSteps(dir: string): Generator<LevelStep, void, LevelAnswer> {
  const missing: string[] = [];
  let p = path.resolve(dir);
  for (let depth = 0; depth < 256; depth++) {
    const { stats, error } = yield { kind: 'stat', path: p };
    // ENOTDIR: some level above is a file; walking up finds and names it.
    if (error !== undefined && error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
    if (stats !== undefined) {
      if (!stats.isDirectory()) throw errno('ENOTDIR', `${p} is not a directory`);
      break;
    }
    missing.push(p);
    const up = path.dirname(p);
    if (up === p) break;
    p = up;
  }
  for (const level of missing.reverse()) {
    const { error } = yield { kind: 'mkdir', path: level };
    if (error === undefined) continue;
    if (error.code === 'EEXIST') {
      const again = yield { kind: 'stat', path: level };
      if (again.error !== undefined) throw again.error;
      if (again.stats?.isDirectory()) continue;
      throw errno('ENOTDIR', `${level} is not a directory`);
    }
    if (error.code === 'ENOENT')
      throw errno(
        'ENOENT',
        `cannot create ${level} although its parent exists: this file system does not let directories be created there`,
      );
    throw error;
  }
}

/** Creates `dir` a level at a time (a recursive `mkdir` loops forever on /proc), all within `timeoutMs`. */
export async function makeDirLevels(
  dir: string,
  timeoutMs: number,
  steps: FileSteps = fileSteps('async'),
): Promise<void> {
  const deadline = hostMonotonicMs() + timeoutMs;
  const left = (): number => Math.max(1, Math.ceil(deadline - hostMonotonicMs()));
  const walk = levelSteps(dir);
  for (let next = walk.next(); !next.done;) {
    const { kind, path: p } = next.value;
    const step = kind === 'stat' ? steps.stat(p, left()) : steps.mkdir(p, left()).then(() => undefined);
    const answer: LevelAnswer = await step.then(
      (stats) => ({ stats }),
      (error: NodeJS.ErrnoException) => ({ error }),
    );
    next = walk.next(answer);
  }
}

/** The synchronous form of {@link makeDirLevels}, without a time limit. */
export function makeDirLevelsSync(dir: string): void {
  const steps = levelSteps(dir);
  for (let next = steps.next(); !next.done;) {
    const { kind, path: p } = next.value;
    let answer: LevelAnswer;
    try {
      answer = kind === 'stat' ? { stats: statSync(p) } : (mkdirSync(p, 0o755), {});
    } catch (e) {
      answer = { error: e as NodeJS.ErrnoException };
    }
    next = steps.next(answer);
  }
}

/** cyrb53: a 53-bit string hash (public domain, bryc). */
function cyrb53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** 24 hex digits naming a slot-cache file (a hint: a collision costs one probe; no `node:crypto` at CLI start). */
function hash96(text: string): string {
  return (
    cyrb53(text, 0).toString(16).padStart(14, '0') + cyrb53(text, 0x9e3779b9).toString(16).padStart(14, '0')
  ).slice(0, 24);
}

/** The cached last slot per registry URL, namespace and slot count; failures are ignored. */
export class SlotCache {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = path.join(stateDir, 'slots');
  }

  private file(url: string, namespace: string, slots: number): string {
    return path.join(this.dir, `${hash96(`${url}\n${namespace}\n${slots}`)}.json`);
  }

  read(url: string, namespace: string, slots: number): number | undefined {
    try {
      const v = JSON.parse(readFileSync(this.file(url, namespace, slots), 'utf8')) as { slot?: unknown };
      return typeof v.slot === 'number' && Number.isInteger(v.slot) && v.slot >= 0 && v.slot < slots
        ? v.slot
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** Remembers the slot; returns false (and changes nothing) when the directory is not writable. */
  write(url: string, namespace: string, slots: number, slot: number): boolean {
    try {
      makeDirLevelsSync(this.dir);
      writeFileAtomic(
        this.file(url, namespace, slots),
        JSON.stringify({ url, namespace, slots, slot, at: new Date().toISOString() }) + '\n',
        false,
      );
      return true;
    } catch {
      return false;
    }
  }
}
