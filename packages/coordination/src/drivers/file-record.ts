/** The file registry's lease records and `holders()` (docs/node-ids.md, "File internals" and "Listing holders"). */
import path from 'node:path';
import type { Clock } from '@flurry/core';
import type { Claim, HolderInfo, HolderRecord } from '../driver.js';
import type { FileSteps } from '../file-steps.js';
import type { LeaseTimeSource } from '../host-clock.js';
import { slotNumbers } from './common.js';

export interface LeaseRecord {
  v: 1;
  gen: number;
  slot: number;
  state: 'held' | 'released' | 'aborted';
  holder: HolderInfo;
  token: string;
  boot: string;
  expiresMono: number;
  expiresAtMs: number;
  highWaterMs: number;
  /** The holder's wall clock at its last write (claim, renewal, release). */
  updatedAtMs: number;
  /** The holder's wall clock at its claim (absent in records of older versions). */
  claimedAtMs?: number;
}

export type ReadResult = { kind: 'ok'; rec: LeaseRecord } | { kind: 'missing' } | { kind: 'corrupt'; why: string };

export const GEN_RE = /^g(\d{10})\.lease$/;

export const SEGMENT_RE = /^[A-Za-z0-9_.-]{1,80}$/;

export function genName(gen: number): string {
  return `g${String(gen).padStart(10, '0')}.lease`;
}

/** Whether a boot ID is the kernel's (a UUID), so that two of them can be compared. */
export function isKernelBoot(b: unknown): boolean {
  return typeof b === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(b);
}

export function parseLeaseRecord(text: string, gen: number): ReadResult {
  try {
    const rec = JSON.parse(text) as LeaseRecord;
    if (rec.v !== 1 || rec.gen !== gen || typeof rec.token !== 'string' || typeof rec.expiresMono !== 'number') {
      return { kind: 'corrupt', why: 'unexpected fields' };
    }
    return { kind: 'ok', rec };
  } catch (e) {
    return { kind: 'corrupt', why: (e as Error).message };
  }
}

export function describeHolder(rec: LeaseRecord, time: LeaseTimeSource): string {
  const h = rec.holder ?? ({} as HolderInfo);
  const left =
    rec.boot === time.boot ? `, expires in ${Math.max(0, Math.round(rec.expiresMono - time.monotonic()))} ms` : '';
  return `${h.id ?? '?'} (host ${h.hostname ?? '?'}, pid ${h.pid ?? '?'}${h.address ? `, ${h.address}` : ''}${left})`;
}

/** A claim made by the file driver (the manager passes it back unchanged). */
export interface FileClaim extends Claim {
  readonly dir: string;
  readonly gen: number;
}

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
