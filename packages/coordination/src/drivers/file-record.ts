/**
 * The on-disk format of the file registry (file.ts has the protocol):
 *
 * ```
 * <dir>/<cluster>[/<field>-<value>…]/slots/<slot>/
 *   g0000000007.lease   one file per lease *generation* of the slot (JSON: holder, token,
 *                       state held|released|aborted, expiry on the host's monotonic clock
 *                       and boot ID, expiry in wall ms (informational), high-water mark,
 *                       the holder's wall clock at its claim and at its last write)
 *   hw                  the slot's high-water mark, kept across releases
 * ```
 *
 * @example
 * ```ts
 * const r = parseLeaseRecord(await readFile(path.join(dir, genName(7)), 'utf8'), 7);
 * if (r.kind === 'ok') console.log(describeHolder(r.rec, time));
 * ```
 */
import type { HolderInfo } from '../driver.js';
import type { LeaseTimeSource } from '../host-clock.js';

/**
 * One lease generation's record.
 *
 * @example
 * ```ts
 * if (rec.state === 'held' && rec.boot === time.boot && time.monotonic() < rec.expiresMono) console.log('live');
 * ```
 */
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

/**
 * A record read back: ok, missing, or corrupt (with why).
 *
 * @example
 * ```ts
 * const r: ReadResult = parseLeaseRecord(text, 7);
 * ```
 */
export type ReadResult = { kind: 'ok'; rec: LeaseRecord } | { kind: 'missing' } | { kind: 'corrupt'; why: string };

/**
 * A generation file's name: `g` + 10 digits + `.lease`.
 *
 * @example
 * ```ts
 * GEN_RE.exec('g0000000007.lease')?.[1]; // '0000000007'
 * ```
 */
export const GEN_RE = /^g(\d{10})\.lease$/;

/**
 * One namespace segment as a directory name.
 *
 * @example
 * ```ts
 * SEGMENT_RE.test('datacenter-1'); // true
 * ```
 */
export const SEGMENT_RE = /^[A-Za-z0-9_.-]{1,80}$/;

/**
 * The file name of a generation.
 *
 * @example
 * ```ts
 * genName(7); // 'g0000000007.lease'
 * ```
 */
export function genName(gen: number): string {
  return `g${String(gen).padStart(10, '0')}.lease`;
}

/**
 * Whether a boot ID is the kernel's (a UUID), so that two of them can be compared.
 *
 * @example
 * ```ts
 * isKernelBoot('3f1c…'); // false
 * ```
 */
export function isKernelBoot(b: unknown): boolean {
  return typeof b === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(b);
}

/**
 * Parses a generation file's text.
 *
 * @example
 * ```ts
 * parseLeaseRecord('not json', 7).kind; // 'corrupt'
 * ```
 */
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

/**
 * A holder as exhaustion messages show it.
 *
 * @example
 * ```ts
 * describeHolder(rec, time); // 'web-1:42:9f… (host web-1, pid 42, expires in 812 ms)'
 * ```
 */
export function describeHolder(rec: LeaseRecord, time: LeaseTimeSource): string {
  const h = rec.holder ?? ({} as HolderInfo);
  const left =
    rec.boot === time.boot ? `, expires in ${Math.max(0, Math.round(rec.expiresMono - time.monotonic()))} ms` : '';
  return `${h.id ?? '?'} (host ${h.hostname ?? '?'}, pid ${h.pid ?? '?'}${h.address ? `, ${h.address}` : ''}${left})`;
}
