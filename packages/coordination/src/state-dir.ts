/**
 * The local state directory and the small per-host cache of "the slot this host held
 * last" (Leaf keeps its worker ID in a local file the same way), so a restarted process
 * asks for its old node ID first.
 *
 * @example
 * ```ts
 * defaultStateDir();                       // '/home/me/.local/state/flurry'
 * const cache = new SlotCache(defaultStateDir());
 * cache.write('file:/tmp/r', 'orders', 1024, 7);
 * cache.read('file:/tmp/r', 'orders', 1024); // 7
 * ```
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * `$XDG_STATE_HOME/flurry` when set (and absolute), else `~/.local/state/flurry`.
 *
 * @example
 * ```ts
 * process.env.XDG_STATE_HOME = '/var/lib/app';
 * defaultStateDir(); // '/var/lib/app/flurry'
 * ```
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'flurry');
  return path.join(homedir(), '.local', 'state', 'flurry');
}

/**
 * Writes a file atomically: a temporary file beside it, flushed, then renamed over it.
 *
 * @example
 * ```ts
 * writeFileAtomic('/tmp/x.json', '{"a":1}');
 * ```
 */
export function writeFileAtomic(file: string, data: string, fsync = true): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, data);
    if (fsync) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/**
 * The cached last slot per registry URL, namespace and slot count; failures are ignored.
 *
 * @example
 * ```ts
 * new SlotCache(defaultStateDir()).read('file:', 'orders', 1024);
 * ```
 */
export class SlotCache {
  /** Directory holding the cache files (`<stateDir>/slots`). */
  readonly dir: string;

  /**
   * @example
   * ```ts
   * const cache = new SlotCache('/var/lib/flurry');
   * ```
   */
  constructor(stateDir: string) {
    this.dir = path.join(stateDir, 'slots');
  }

  private file(url: string, namespace: string, slots: number): string {
    const h = createHash('sha256').update(`${url}\n${namespace}\n${slots}`).digest('hex').slice(0, 24);
    return path.join(this.dir, `${h}.json`);
  }

  /**
   * The slot cached for this registry and namespace, or undefined.
   *
   * @example
   * ```ts
   * cache.read('file:/tmp/r', 'orders', 1024); // 7 or undefined
   * ```
   */
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

  /**
   * Remembers the slot; returns false (and changes nothing) when the directory is not writable.
   *
   * @example
   * ```ts
   * cache.write('file:/tmp/r', 'orders', 1024, 7); // true
   * ```
   */
  write(url: string, namespace: string, slots: number, slot: number): boolean {
    try {
      mkdirSync(this.dir, { recursive: true });
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
