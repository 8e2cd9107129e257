/** The on-disk lease records of the file registry (docs/node-ids.md, "File internals"). */
import type { Claim, HolderInfo } from '../driver.js';
import type { LeaseTimeSource } from '../host-clock.js';

/** One lease generation's record. */
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

/** A record read back: ok, missing, or corrupt (with why). */
export type ReadResult = { kind: 'ok'; rec: LeaseRecord } | { kind: 'missing' } | { kind: 'corrupt'; why: string };

/** A generation file's name: `g` + 10 digits + `.lease`. */
export const GEN_RE = /^g(\d{10})\.lease$/;

/** One namespace segment as a directory name. */
export const SEGMENT_RE = /^[A-Za-z0-9_.-]{1,80}$/;

/** The file name of a generation. */
export function genName(gen: number): string {
  return `g${String(gen).padStart(10, '0')}.lease`;
}

/** Whether a boot ID is the kernel's (a UUID), so that two of them can be compared. */
export function isKernelBoot(b: unknown): boolean {
  return typeof b === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(b);
}

/** Parses a generation file's text. */
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

/** A holder as exhaustion messages show it. */
export function describeHolder(rec: LeaseRecord, time: LeaseTimeSource): string {
  const h = rec.holder ?? ({} as HolderInfo);
  const left =
    rec.boot === time.boot ? `, expires in ${Math.max(0, Math.round(rec.expiresMono - time.monotonic()))} ms` : '';
  return `${h.id ?? '?'} (host ${h.hostname ?? '?'}, pid ${h.pid ?? '?'}${h.address ? `, ${h.address}` : ''}${left})`;
}

/** A claim made by the file driver (the manager passes it back unchanged). */
export interface FileClaim extends Claim {
  /** The slot's directory. */
  readonly dir: string;
  /** The lease generation. */
  readonly gen: number;
}
