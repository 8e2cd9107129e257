/**
 * `holders()` of the file registry, reading its layout directly (docs/node-ids.md, "File
 * internals"; timing: "Listing holders").
 */
import path from 'node:path';
import type { Clock } from '@flurry/core';
import type { HolderRecord } from '../driver.js';
import type { LeaseTimeSource } from '../host-clock.js';
import type { FileSteps } from '../file-steps.js';
import { slotNumbers } from './common.js';
import { GEN_RE, genName, isKernelBoot, parseLeaseRecord, type LeaseRecord } from './file-record.js';

/** How {@link readFileHolders} tells time, bounds each file-system step and takes it. */
type FileHoldersOptions = { time: LeaseTimeSource; clock: Clock; timeoutMs: number; steps: FileSteps };

async function names(dir: string, o: FileHoldersOptions): Promise<string[]> {
  try {
    return await o.steps.list(dir, o.timeoutMs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** The current lease record of one slot directory (highest generation not aborted), if readable. */
async function current(dir: string, o: FileHoldersOptions): Promise<LeaseRecord | undefined> {
  const gens = (await names(dir, o))
    .map((n) => GEN_RE.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => b - a);
  for (const g of gens) {
    let text: string;
    try {
      text = await o.steps.readText(path.join(dir, genName(g)), o.timeoutMs);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed by a claimer meanwhile
      throw e;
    }
    const r = parseLeaseRecord(text, g);
    if (r.kind !== 'ok') return undefined; // corrupt: the driver reports it at the next claim
    if (r.rec.state === 'aborted') continue;
    return r.rec;
  }
  return undefined;
}

/** Lists the live holders under one namespace directory (see the module comment). */
export async function readFileHolders(nsDir: string, o: FileHoldersOptions): Promise<HolderRecord[]> {
  const slotsDir = path.join(nsDir, 'slots');
  const slots = slotNumbers(await names(slotsDir, o));
  const out = await Promise.all(
    slots.map(async (slot): Promise<HolderRecord | undefined> => {
      const rec = await current(path.join(slotsDir, String(slot)), o);
      if (!rec || rec.state !== 'held' || typeof rec.expiresMono !== 'number') return undefined;
      const sameBoot = rec.boot === o.time.boot;
      let expiresInMs: number;
      if (sameBoot) expiresInMs = rec.expiresMono - o.time.monotonic();
      else if (isKernelBoot(rec.boot) && isKernelBoot(o.time.boot))
        return undefined; // another boot: gone
      else expiresInMs = (rec.expiresAtMs ?? 0) - o.clock.now();
      if (expiresInMs <= 0) return undefined;
      const ttl =
        typeof rec.expiresAtMs === 'number' && typeof rec.updatedAtMs === 'number'
          ? rec.expiresAtMs - rec.updatedAtMs
          : null;
      return {
        slot,
        holder: rec.holder ?? {},
        heldSinceMs: typeof rec.claimedAtMs === 'number' ? rec.claimedAtMs : null,
        renewedAtMs: typeof rec.updatedAtMs === 'number' ? rec.updatedAtMs : null,
        sinceRenewalMs: sameBoot && ttl !== null ? Math.max(0, Math.round(ttl - expiresInMs)) : null,
        sinceRenewalErrorMs: sameBoot && ttl !== null ? 1 : null,
        expiresInMs: Math.round(expiresInMs),
        ttlMs: ttl,
        highWaterMs: typeof rec.highWaterMs === 'number' ? rec.highWaterMs : 0,
      };
    }),
  );
  return out.filter((h): h is HolderRecord => h !== undefined);
}
