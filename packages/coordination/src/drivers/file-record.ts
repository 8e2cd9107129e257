/** The file registry's lease records and the holders they show (docs/node-ids.md, "File internals" and "Listing holders"). */
import type { Clock } from '@flurry/core';
import type { Claim, HolderInfo, HolderRecord } from '../driver.js';
import type { LeaseTimeSource } from '../host-clock.js';

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
function isKernelBoot(b: unknown): boolean {
  return typeof b === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(b);
}

/** Ms until `rec` expires (≤ 0: expired; NaN: unknown, not expired): monotonic on the same boot, else wall time. */
export function expiresIn(rec: LeaseRecord, time: LeaseTimeSource, clock: Clock): number {
  if (rec.boot === time.boot) return rec.expiresMono - time.monotonic();
  if (isKernelBoot(rec.boot) && isKernelBoot(time.boot)) return -Infinity; // another boot: its processes are gone
  return rec.expiresAtMs - clock.now(); // no shared monotonic clock: fall back to wall time
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

/** The {@link HolderRecord} of a slot's current record, undefined when it is not a live lease. */
export function holderOf(
  slot: number,
  rec: LeaseRecord,
  time: LeaseTimeSource,
  clock: Clock,
): HolderRecord | undefined {
  const expiresInMs = expiresIn(rec, time, clock);
  if (rec.state !== 'held' || !(expiresInMs > 0)) return undefined;
  const sameBoot = rec.boot === time.boot;
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
}
