/** The Leaf driver's local side: Leaf's worker-ID cache file and the host lock of one `ip:port`. */
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { makeDirLevelsSync, writeFileAtomic } from '../state-dir.js';
import { hostname } from 'node:os';
import path from 'node:path';
import { randomHex } from '@flurry/core';
import { registryError } from '../errors.js';
import { jsonObject } from './common.js';

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

export function leafCacheFile(cacheDir: string, name: string, port: string): string {
  return path.join(cacheDir, ...name.split('/'), 'leafconf', port, 'workerID.properties');
}

/** Reads a cache file of Leaf (`workerID=N`) or Flurry (plus `flurry.highWaterMs`); nothing when missing or unreadable. */
export function readLeafCache(file: string): { workerId?: number; highWaterMs?: number } {
  const props = new Map<string, string>();
  for (const line of (readText(file) ?? '').split(/\r?\n/)) {
    const m = /^([^#!=:\s][^=:\s]*)\s*[=:\s]\s*(.*)$/.exec(line.trim());
    if (m) props.set(m[1], m[2].trim());
  }
  const number = (v = ''): number | undefined => (/^\d+$/.test(v) ? Number(v) : undefined);
  return { workerId: number(props.get('workerID')), highWaterMs: number(props.get('flurry.highWaterMs')) };
}

export function writeLeafCache(file: string, workerId: number, highWaterMs: number): void {
  makeDirLevelsSync(path.dirname(file));
  writeFileAtomic(file, `workerID=${workerId}\nflurry.highWaterMs=${Math.floor(highWaterMs)}\n`, false);
}

/** Process start time from /proc (Linux), to tell a live holder from a reused pid. */
function processStart(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function holderAlive(pid: number, host: string | undefined, start: string | undefined): boolean {
  if (host !== undefined && host !== hostname()) return true; // cannot check another host: assume alive
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = processStart(pid);
  return start === undefined || now === undefined || now === start;
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* already gone */
  }
}

/** The host lock of a Leaf address: write ours, then list the others; a live one makes us back off (EXHAUSTED). */
export async function acquireHostLock(dir: string, address: string, url: string) {
  makeDirLevelsSync(dir);
  const prefix = `flurry-${address.replace(/[^0-9A-Za-z.]/g, '_')}.`;
  let lastHolder: Record<string, unknown> | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
    const own = `${prefix}${process.pid}.${randomHex(6)}.lock`;
    const ownPath = path.join(dir, own);
    const since = new Date().toISOString();
    const me = { pid: process.pid, hostname: hostname(), address, start: processStart(process.pid), since };
    writeFileSync(ownPath, JSON.stringify(me), { flag: 'wx' });
    lastHolder = undefined;
    for (const f of readdirSync(dir)) {
      if (f === own || !f.startsWith(prefix) || !f.endsWith('.lock')) continue;
      const pid = Number(f.slice(prefix.length).split('.')[0]);
      // A lock being written has no JSON yet: its pid is in the name.
      const info = jsonObject<{ hostname: string; start: string }>(readText(path.join(dir, f)));
      if (Number.isSafeInteger(pid) && pid > 0 && !holderAlive(pid, info.hostname, info.start)) {
        unlinkQuietly(path.join(dir, f)); // may be removed by another process meanwhile
        continue;
      }
      lastHolder = { file: path.join(dir, f), pid, hostname: info.hostname ?? hostname() };
      break;
    }
    if (!lastHolder) return { file: ownPath, held: () => existsSync(ownPath), release: () => unlinkQuietly(ownPath) };
    unlinkSync(ownPath);
  }
  throw registryError(
    'EXHAUSTED',
    `the Leaf address ${address} is already held on this host by process ${String(lastHolder?.pid)} (lock file ${String(lastHolder?.file)}); ` +
      'two processes with one ip:port would get the same worker ID: give each process its own port, or stop the other one (delete the lock file only if that pid is not a Flurry process)',
    { url, address, held: 1, holders: [lastHolder] },
  );
}
