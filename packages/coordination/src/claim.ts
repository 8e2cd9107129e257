/** Claiming a slot and settling it (the floor, the clock's wait, the deadlines), for acquire() and re-acquisition. */
import type { Claim, RegistryDriver } from './driver.js';
import { TimeoutError, registryError, withTimeout } from './errors.js';
import { claimFloor, floorTarget, unreportedWindow, waitForFloor, type TickGrid } from './floor.js';
import type { ManagedLease } from './lease-types.js';
import { makeHolder, type ResolvedRegistryOptions } from './options.js';
import type { SlotCache } from './state-dir.js';

export interface LeaseContext {
  readonly driver: RegistryDriver;
  readonly opts: ResolvedRegistryOptions;
  readonly staticIds: boolean;
  readonly cache: SlotCache | undefined;
  onReleased(lease: ManagedLease): void;
}

/** Where a successful claim or renewal started, on both clocks. */
type Start = { readonly mono: number; readonly wall: number };

/** `startedAt + ttl − margin` on whichever clock `startedAt` was read (Infinity for static IDs). */
export function deadlineFrom(ctx: LeaseContext, startedAt: number): number {
  return ctx.staticIds ? Infinity : startedAt + ctx.opts.ttlMs - ctx.opts.marginMs;
}

/** What differs between a first acquisition and a re-acquisition. */
interface ClaimPlan {
  readonly namespace: string;
  readonly slots: number;
  /** The cached slot (acquire) or the one just lost (re-acquire). */
  readonly preferredSlot: number | undefined;
  readonly tick: TickGrid | undefined;
  /** Timeout of each renewal of the claim while its floor is settled. */
  readonly renewTimeoutMs: number;
  /** A floor besides the claim's own (what this process already issued); read once claimed. */
  atLeastMs(): number;
  /** False once the claim is no longer wanted (registry closed, lease released): it is given back. */
  alive(): boolean;
}

/** A claim ready to issue under, or the step that failed (`late`: the deadlines passed meanwhile) with its cause. */
export type ClaimOutcome =
  | { readonly ok: true; readonly claim: Claim; readonly floor: number; readonly start: Start }
  | {
      readonly ok: false;
      readonly step: 'claim' | 'settle' | 'late' | 'abandoned';
      readonly cause?: unknown;
      readonly slot?: number;
    };

/** Claims a slot and settles it; a failed outcome has given the claim back (never throws for a driver failure). */
export async function claimAndSettle(ctx: LeaseContext, plan: ClaimPlan): Promise<ClaimOutcome> {
  const { driver, opts } = ctx;
  const { namespace, slots, preferredSlot } = plan;
  let claim: Claim;
  let pending: Promise<Claim> | undefined;
  try {
    const holder = makeHolder(opts.holder);
    const pref = preferredSlot === undefined ? {} : { preferredSlot };
    pending = driver.claim({ namespace, slots, ttlMs: opts.ttlMs, holder, ...pref });
    claim = await withTimeout(pending, Math.max(opts.ttlMs, opts.connectTimeoutMs), 'claim');
  } catch (cause) {
    // A claim that lands after the timeout is given back, so that the slot does not stay held by nobody.
    if (cause instanceof TimeoutError)
      pending?.then((late) => driver.release(late, { highWaterMs: 0 })).catch(() => undefined);
    return { ok: false, step: 'claim', cause };
  }
  const floor = Math.max(claimFloor(claim, unreportedWindow(opts, ctx.staticIds)), plan.atLeastMs());
  const giveBack = async (step: 'settle' | 'late' | 'abandoned', cause?: unknown): Promise<ClaimOutcome> => {
    await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
    return { ok: false, step, cause, slot: claim.slot };
  };
  if (!plan.alive()) return giveBack('abandoned');
  // Record the claim-time mark, then wait (renewing) for the first tick above the floor.
  const { clock, highWaterWaitMs } = opts;
  const what = `slot ${claim.slot} of ${namespace} at ${driver.url}`;
  const renew = async (): Promise<Start> => {
    const at = { mono: clock.monotonic(), wall: clock.now() };
    const renewal = driver.renew(claim, { ttlMs: opts.ttlMs, highWaterMs: Math.max(floor, at.wall) });
    await withTimeout(renewal, plan.renewTimeoutMs, 'renewal');
    return at;
  };
  let start: Start;
  try {
    // A floor further ahead than the bound: waitForFloor throws the coded error at once, before any I/O.
    if (floorTarget(floor, plan.tick).behind(clock.now()) > highWaterWaitMs)
      await waitForFloor(clock, floor, highWaterWaitMs, { what, tick: plan.tick });
    start = await renew();
    await waitForFloor(clock, floor, highWaterWaitMs, {
      what,
      tick: plan.tick,
      during: async () => {
        const why = 'was released while waiting for the clock to pass its high-water mark';
        if (!plan.alive()) throw registryError('CLOSED', `the lease of ${what} ${why}`);
        if (clock.monotonic() - start.mono >= opts.renewIntervalMs) start = await renew();
      },
    });
  } catch (cause) {
    return giveBack('settle', cause);
  }
  if (!plan.alive()) return giveBack('abandoned');
  if (clock.monotonic() >= deadlineFrom(ctx, start.mono) || clock.now() >= deadlineFrom(ctx, start.wall))
    return giveBack('late');
  return { ok: true, claim, floor, start };
}
