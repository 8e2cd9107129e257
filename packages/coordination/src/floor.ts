/**
 * The high-water floor: the wall-clock time a new holder of a slot must issue above
 * ({@link claimFloor}), the layout's time grid that decides where issuing may start
 * ({@link TickGrid}), and the asynchronous wait until the clock gets there
 * ({@link waitForFloor}). docs/node-ids.md ("High-water marks and floors", "Waiting for
 * the floor") explains why.
 */
import { ErrorCode, FlurryError, type Clock } from '@flurry/core';
import type { Claim } from './driver.js';
import type { ResolvedRegistryOptions } from './options.js';

/**
 * The floor a new holder must issue above, given what the driver returned:
 * the mark itself after a clean release, else the mark plus the longest time the previous
 * holder may have issued unreported (`unreportedMs`: ttl + margin; for static IDs, which
 * never expire, the renewal interval + margin).
 */
export function claimFloor(claim: Pick<Claim, 'highWaterMs' | 'releasedCleanly'>, unreportedMs: number): number {
  if (!(claim.highWaterMs > 0)) return 0;
  return claim.releasedCleanly ? claim.highWaterMs : claim.highWaterMs + unreportedMs;
}

/**
 * The longest time a previous holder may have issued without reporting it: ttl + margin
 * (for static IDs, which never expire, the renewal interval + margin).
 */
export function unreportedWindow(opts: ResolvedRegistryOptions, staticIds: boolean): number {
  return (staticIds ? opts.renewIntervalMs : opts.ttlMs) + opts.marginMs;
}

/** Longest single timer of a floor wait: a stepped clock is noticed within this. */
const FLOOR_SLICE_MS = 50;

/** Options of {@link waitForFloor}. */
export interface FloorWaitOptions {
  /**
   * Called between the timer slices of the wait (at most every 50 ms); may do async work
   * (e.g. renew the claim being waited on) or throw to abort the wait.
   */
  during?: () => Promise<void> | void;
  /** Names what is waiting, for the error message, e.g. `'slot 3 of orders at file:/var/lib/flurry'`. */
  what?: string;
  /**
   * The time grid of the layout that will issue above the floor (a core `Layout` has
   * both fields). A generator issues only from the first tick whose start lies above the
   * floor, so with it the wait lasts until `clock.now()` reaches that tick's start
   * (`epochMs + (⌊(floorMs − epochMs) / unitMs⌋ + 1) × unitMs`) instead of just past the
   * floor: for a 10 ms unit up to 10 ms longer.
   */
  tick?: TickGrid;
}

/** A layout's time grid: ticks of `unitMs` counted from `epochMs` (Unix ms). */
export interface TickGrid {
  readonly epochMs: number;
  readonly unitMs: number;
}

/** The layout's time grid when it has one (a core `Layout`), else undefined. */
export function tickGridOf(layout: object): TickGrid | undefined {
  const { epochMs, unitMs } = layout as Partial<TickGrid>;
  if (typeof unitMs !== 'number' || !(unitMs > 0) || !Number.isFinite(unitMs)) return undefined;
  if (typeof epochMs !== 'number' || !Number.isFinite(epochMs)) return undefined;
  return { epochMs, unitMs };
}

/**
 * What waiting for `floorMs` means: `reached(now)` once issuing may start, `behind(now)`
 * how many ms are still missing (the `behindMs` of the errors), `startMs` the start of
 * the first tick above the floor (undefined without a grid).
 */
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
 * Waits asynchronously — with timers, never blocking the event loop, so lease renewals
 * keep running — until `clock.now()` is past `floorMs` (with `opts.tick`: until it reached
 * the start of the first tick above `floorMs`). Throws
 * `FLURRY_E_CLOCK_BEHIND_HIGH_WATER` at once when that would take longer than `maxWaitMs`
 * (the message and `details.behindMs` say how far behind the clock is), or when the clock
 * has not passed the floor after `maxWaitMs` (+50 ms of timer slack) of waiting.
 *
 * It waits in slices of at most 50 ms, each with the clock's own `delay` when it has one
 * (a core `ManualClock` yields to the event loop and advances itself: fake time passes
 * instantly, as everywhere in Flurry's tests), else on real timers.
 */
export async function waitForFloor(
  clock: Clock,
  floorMs: number,
  maxWaitMs: number,
  opts: FloorWaitOptions = {},
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
  if (behind > maxWaitMs) {
    throw new FlurryError(
      ErrorCode.CLOCK_BEHIND_HIGH_WATER,
      `The clock (${iso(now)}) is ${Math.ceil(behind)} ms behind the high-water mark${of} (IDs must be after ${after}), ` +
        `more than the ${maxWaitMs} ms allowed (highWaterWaitMs): a previous holder of this node ID issued IDs up to then. Fix the clock (NTP) or raise highWaterWaitMs.`,
      { behindMs: Math.ceil(behind), notBeforeMs: floorMs, nowMs: now, highWaterWaitMs: maxWaitMs },
    );
  }
  const delay = clock.delay ? (ms: number) => clock.delay!(ms) : realDelay;
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
      throw new FlurryError(
        ErrorCode.CLOCK_BEHIND_HIGH_WATER,
        `The clock (${iso(now)}) is still ${Math.ceil(target.behind(now))} ms behind the high-water mark${of} (IDs must be after ${after}) after waiting ${Math.round(waited)} ms (highWaterWaitMs ${maxWaitMs}); it was stepped back or does not advance. Fix the clock (NTP) or raise highWaterWaitMs.`,
        {
          behindMs: Math.ceil(target.behind(now)),
          notBeforeMs: floorMs,
          nowMs: now,
          highWaterWaitMs: maxWaitMs,
          waitedMs: Math.round(waited),
        },
      );
    }
    if (opts.during) await opts.during();
  }
}

/** Waits `ms` on a real timer. */
function realDelay(ms: number): Promise<void> {
  return new Promise<void>((r) => setTimeout(r, ms));
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
