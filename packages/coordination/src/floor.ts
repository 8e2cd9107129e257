/** The floor a new holder issues above and the wait for the clock (docs/node-ids.md, "High-water marks and floors"). */
import { ErrorCode, FlurryError, type Clock } from '@flurry/core';
import type { Claim } from './driver.js';
import type { ResolvedRegistryOptions } from './options.js';

/** The floor a new holder must issue above: the mark, plus `unreportedMs` after an unclean release. */
export function claimFloor(claim: Pick<Claim, 'highWaterMs' | 'releasedCleanly'>, unreportedMs: number): number {
  if (!(claim.highWaterMs > 0)) return 0;
  return claim.releasedCleanly ? claim.highWaterMs : claim.highWaterMs + unreportedMs;
}

/** The longest a previous holder may have issued unreported: ttl (static: renewal interval) + margin. */
export function unreportedWindow(opts: ResolvedRegistryOptions, staticIds: boolean): number {
  return (staticIds ? opts.renewIntervalMs : opts.ttlMs) + opts.marginMs;
}

/** Longest single timer of a floor wait: a stepped clock is noticed within this. */
const FLOOR_SLICE_MS = 50;

/** A layout's time grid: ticks of `unitMs` counted from `epochMs` (Unix ms). */
export interface TickGrid {
  readonly epochMs: number;
  readonly unitMs: number;
}

export function tickGridOf(layout: object): TickGrid | undefined {
  const { epochMs, unitMs } = layout as Partial<TickGrid>;
  if (typeof unitMs !== 'number' || !(unitMs > 0) || !Number.isFinite(unitMs)) return undefined;
  if (typeof epochMs !== 'number' || !Number.isFinite(epochMs)) return undefined;
  return { epochMs, unitMs };
}

/** When issuing may start above `floorMs`, how far `now` is behind it, and the first tick's start. */
export function floorTarget(
  floorMs: number,
  tick: TickGrid | undefined,
): { reached(now: number): boolean; behind(now: number): number; startMs: number | undefined } {
  if (tick === undefined || !(floorMs > 0))
    return { reached: (now) => now > floorMs, behind: (now) => floorMs - now + 1, startMs: undefined };
  const startMs = tick.epochMs + (Math.floor((floorMs - tick.epochMs) / tick.unitMs) + 1) * tick.unitMs;
  return { reached: (now) => now >= startMs, behind: (now) => startMs - now, startMs };
}

/**
 * Waits on timers (so renewals go on) until the clock is past `floorMs` (with `tick`: until the first tick above it
 * starts); `FLURRY_E_CLOCK_BEHIND_HIGH_WATER` at once when that would take over `maxWaitMs`, or when it has not got
 * there after `maxWaitMs`. `during` runs between the slices (renewals; may throw to abort); `what` names the waiter.
 */
export async function waitForFloor(
  clock: Clock,
  floorMs: number,
  maxWaitMs: number,
  opts: { during?: () => Promise<void> | void; what?: string; tick?: TickGrid } = {},
): Promise<void> {
  const target = floorTarget(floorMs, opts.tick);
  let now = clock.now();
  if (target.reached(now)) return;
  const behind = target.behind(now);
  const of = opts.what ? ` of ${opts.what}` : '';
  const after =
    target.startMs === undefined
      ? iso(floorMs)
      : `${iso(floorMs)}, i.e. from the ${opts.tick!.unitMs} ms tick starting at ${iso(target.startMs)}`;
  const behindError = (still: string, tail: string, waited?: Record<string, number>): FlurryError => {
    const behindMs = Math.ceil(target.behind(now));
    return new FlurryError(
      ErrorCode.CLOCK_BEHIND_HIGH_WATER,
      `The clock (${iso(now)}) is ${still}${behindMs} ms behind the high-water mark${of} (IDs must be after ${after})${tail} Fix the clock (NTP) or raise highWaterWaitMs.`,
      { behindMs, notBeforeMs: floorMs, nowMs: now, highWaterWaitMs: maxWaitMs, ...waited },
    );
  };
  if (behind > maxWaitMs) {
    const tail = `, more than the ${maxWaitMs} ms allowed (highWaterWaitMs): a previous holder of this node ID issued IDs up to then.`;
    throw behindError('', tail);
  }
  const delay = (ms: number): Promise<void> => clock.delay?.(ms) ?? new Promise<void>((r) => setTimeout(r, ms));
  const monoStart = clock.monotonic();
  const realStart = performance.now();
  for (;;) {
    const slice = Math.max(1, Math.min(FLOOR_SLICE_MS, Math.ceil(target.behind(now))));
    await delay(slice);
    now = clock.now();
    if (target.reached(now)) return;
    // Real time bounds the wait too, for a clock that does not move on its own.
    const waited = Math.max(clock.monotonic() - monoStart, performance.now() - realStart);
    if (waited > maxWaitMs + FLOOR_SLICE_MS) {
      const waitedMs = Math.round(waited);
      const tail = ` after waiting ${waitedMs} ms (highWaterWaitMs ${maxWaitMs}); it was stepped back or does not advance.`;
      throw behindError('still ', tail, { waitedMs });
    }
    if (opts.during) await opts.during();
  }
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
