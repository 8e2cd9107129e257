/**
 * Process-wide node claims across threads: an exclusive `mkdirSync` under `os.tmpdir()/flurry-claims-<pid>-<start>`
 * (`<start>`: a reused pid sees no stale claims), the last tick in `<key>.last` on release; in memory where no temp
 * directory is writable. See docs/clocks.md (one generator per node ID).
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';
import { ErrorCode, FlurryError } from '../errors.js';
import { memoryClaim, type NodeClaim } from './memory-claims.js';

export type { NodeClaim };

const PREFIX = 'flurry-claims-';
let rootDir: string | null | undefined;
const held = new Map<string, { release(lastTick: number): void; lastTick: () => number }>();

/** `f()`, or undefined when it throws (the best-effort reads and removals below). */
function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

function processStart(): string {
  const stat = attempt(() => readFileSync('/proc/self/stat', 'utf8')) ?? ''; // '' where it is not Linux
  // Field 22 (starttime), counted after the command name, which may contain spaces.
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  return start && /^\d+$/.test(start) ? start : '0';
}

function root(): string | null {
  if (rootDir !== undefined) return rootDir;
  rootDir = null;
  const name = `${PREFIX}${process.pid}-${processStart()}`;
  // os.tmpdir() throws where the runtime refuses to say (Deno without --allow-env).
  for (const base of [attempt(tmpdir), '/dev/shm']) {
    if (base === undefined) continue;
    const dir = join(base, name);
    // Not `recursive: true`: Node's recursive mkdir spins forever on some pseudo file systems (a TMPDIR under /proc).
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') continue; // read-only or missing: try the next place
    }
    rootDir = dir;
    if (isMainThread) sweepDeadProcesses(base);
    process.once('exit', () => {
      try {
        for (const h of [...held.values()]) h.release(h.lastTick());
        if (isMainThread) removeClaimsDir(dir);
      } catch {
        /* best effort at exit: the directory is named after this process, so no other process reads it */
      }
    });
    return dir;
  }
  return null;
}

/** Removes one claim directory: two calls, not `rmSync(recursive)` (whose module costs a CLI start over 1 ms). */
function removeClaim(path: string): void {
  attempt(() => unlinkSync(join(path, 'thread'))); // not written yet if the claimer failed between mkdir and write
  try {
    rmdirSync(path);
  } catch {
    rmSync(path, { recursive: true, force: true });
  }
}

function removeClaimsDir(dir: string): void {
  try {
    for (const name of readdirSync(dir)) {
      if (name.endsWith('.last')) unlinkSync(join(dir, name));
      else removeClaim(join(dir, name));
    }
    rmdirSync(dir);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

function sweepDeadProcesses(base: string): void {
  for (const name of attempt(() => readdirSync(base)) ?? []) {
    const m = /^flurry-claims-(\d+)-\d+$/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') rmSync(join(base, name), { recursive: true, force: true });
    }
  }
}

/** Claims a node ID space in this process (`FLURRY_E_NODE_IN_USE` if held); `lastTick` is read at an unclean exit. */
export function claimNode(key: string, describe: string, lastTick: () => number): NodeClaim {
  const dir = root();
  const inUse = (holder?: string) =>
    new FlurryError(
      ErrorCode.NODE_IN_USE,
      `Another live generator in this process (${holder === undefined || holder === String(threadId) ? 'in this thread' : holder === '0' ? 'in the main thread' : `in worker thread ${holder}`}) already issues IDs as ${describe}; two would repeat IDs. Share one generator, use a SharedGenerator across worker threads, give each generator its own node ID (e.g. from a registry lease), or close() the other first. (A worker ended with worker.terminate() cannot run its cleanup, so close() its generators before terminating it.)`,
      { node: describe, key, holderThreadId: holder === undefined ? threadId : Number(holder) },
    );
  if (dir === null) return memoryClaim(key, inUse);
  const path = join(dir, key);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // '?' while the holder is between its mkdir and writing its thread id.
    throw inUse(attempt(() => readFileSync(join(path, 'thread'), 'utf8')) ?? '?');
  }
  writeFileSync(join(path, 'thread'), String(threadId));
  const text = attempt(() => readFileSync(`${path}.last`, 'utf8').trim()) ?? ''; // '' for the first holder here
  const previousTick = text !== '' ? Number(text) : Number.NEGATIVE_INFINITY;
  let released = false;
  const release = (tick: number) => {
    if (released) return;
    released = true;
    held.delete(key);
    const last = Math.max(previousTick, Number.isFinite(tick) ? tick : previousTick);
    if (Number.isFinite(last)) writeFileSync(`${path}.last`, String(last));
    removeClaim(path);
  };
  held.set(key, { release, lastTick });
  return { key, previousTick, release };
}
