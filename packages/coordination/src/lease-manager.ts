/**
 * The generic lease machinery shared by every backend: it turns a {@link RegistryDriver}
 * (claim / renew / release of integer slots) into {@link ManagedLease}s of a layout's
 * node fields, renews them in the background, keeps the two fencing deadlines (monotonic
 * and wall clock) and computes the high-water floor, waiting for it before handing a
 * lease out.
 *
 * ## Fencing: two deadlines
 * At the START of every successful claim or renewal the manager reads both clocks, and
 * - `deadline     = monotonic time at that start + ttl − margin`,
 * - `wallDeadline = wall time (Unix ms) at that start + ttl − margin`.
 * The engine counts the TTL from when it receives the request, which is later than that
 * start, so the holder stops at least `margin` before anyone else can be given its node
 * ID. A generator issues only while BOTH lie ahead (`clock.monotonic() < deadline` and
 * `clock.now() < wallDeadline`); it checks before every ID, so it refuses before the first
 * one after waking up. A renewal that answers after either deadline computed from its own
 * start does not revive or extend the lease (a renewal sent before a suspend and answered
 * after it extends nothing).
 * - The monotonic deadline catches a paused process (SIGSTOP, GC pause): its monotonic
 *   clock keeps counting, so it wakes up past the deadline. It is immune to wall-clock
 *   steps: a wall clock stepped BACK (even by an hour) extends nothing, the monotonic
 *   deadline still fences on time.
 * - The wall deadline catches a suspended machine or VM (laptop lid, VM pause, live
 *   migration): on Linux the monotonic clock (`performance.now()`, CLOCK_MONOTONIC) stands
 *   still while suspended, but the engine's TTL runs on and may hand the node ID to
 *   someone else; the wall clock has jumped forward by the suspended time on resume.
 *   Trade-off: a wall clock stepped FORWARD (an NTP step, an operator) fences early by
 *   the size of the step — conservative, never unsafe. The next successful renewal reads
 *   the stepped clock at its start and lifts the wall deadline again (a step larger than
 *   `ttl − margin` loses the lease, which is then re-acquired).
 * Timers (Node's `setTimeout`) also run on the monotonic clock, so a suspend delays them:
 * the deadline timer therefore wakes at least every 250 ms while a lease is held and
 * checks both clocks, so `'lost'` fires promptly after a resume.
 *
 * ## High-water mark
 * At every renewal the holder reports `max(highest issued timestamp, wall clock now,
 * notBeforeMs)`; at a graceful release it reports `max(highest issued, notBeforeMs)` after
 * fencing itself. The next holder of the slot must issue only above
 * - the reported mark, when the previous holder released cleanly (it cannot have issued
 *   anything after reporting), or
 * - the reported mark + ttl + margin, when the previous lease expired: after its last
 *   report at wall time `w` the holder issued at most until its deadline, `ttl − margin`
 *   later on its monotonic clock, i.e. up to `w + ttl − margin` on its wall clock.
 *   The extra `2 × margin` covers a sequence-borrowing generator (its ticks may run up
 *   to `maxBorrowMs` ahead of its wall clock, so `leasedGenerator()` keeps
 *   `maxBorrowMs ≤ margin`) and wall/monotonic rate differences.
 * **Clock assumption:** a holder's wall clock does not step forward by more than
 * `2 × margin` between two reports (NTP slewing is fine; a manual jump forward of
 * seconds while a lease expires unreported is not), and a holder's clock being *ahead*
 * is safe: the mark then carries its (higher) wall time. A new holder whose clock is
 * behind the floor waits (up to `highWaterWaitMs`) or fails; it never issues below it.
 * The floor is computed with the *new* holder's ttl and margin: every holder of one
 * cluster must use the same lease settings (a successor with a shorter TTL than its dead
 * predecessor would add too little).
 * Right after every claim the manager renews once to record the claim-time wall clock,
 * so even a holder that dies before its first periodic renewal left a mark.
 *
 * ## Waiting for the floor
 * `acquire()` (and every re-acquisition) resolves only once the wall clock has passed the
 * new lease's `notBeforeMs` — when the layout has a `unitMs` and `epochMs` (a core
 * `Layout` does), once it reached the start of the first tick above it (a 10 ms sonyflake
 * tick, say) — so a generator built on it never has to wait. The wait is
 * asynchronous — timers, not a blocking sleep — so the event loop, and with it every
 * other lease's renewals, keeps running; the claim itself is renewed meanwhile. It is
 * bounded by `highWaterWaitMs`: a floor further ahead fails at once with
 * `FLURRY_E_CLOCK_BEHIND_HIGH_WATER` naming how far behind the clock is (and the claim is
 * released). The generator's own check at each new tick stays as the last line of
 * defence: it never issues at or below the floor.
 *
 * ## Renewal schedule
 * Renewals start every `renewIntervalMs`, measured from the START of the last successful
 * claim or renewal (start to start), not from when it answered or when `acquire()`
 * resolved: a floor wait renews the claim along the way, so the lease handed out may
 * carry a renewal up to `renewIntervalMs` old, and the first periodic renewal then comes
 * as much sooner.
 *
 * ## Loss and recovery
 * Renewal failures are retried with a backoff within the interval and counted. When the
 * deadline passes (or the engine says the lease is gone) the lease is fenced, `'lost'` is
 * emitted, the old claim is released when still possible (reporting the exact final
 * mark), and the manager keeps trying to acquire again — the same slot first — so
 * holders recover on their own after an engine restart. A re-acquired lease raises
 * `notBeforeMs` to at least everything this process already issued.
 *
 * @example
 * ```ts
 * const registry = new LeaseRegistry(driver, { cluster: 'orders', ttlMs: 10_000 });
 * const lease = await registry.acquire(Layout.from('twitter'), { pin: { datacenter: 1 } });
 * lease.on('lost', (err) => log.warn(err));
 * const gen = new Generator({ layout: 'twitter', lease: lease.forGenerator() });
 * lease.attach(() => gen.lastIssuedUnixMs);
 * // …
 * await lease.release();
 * ```
 */
import { EventEmitter } from 'node:events';
import { ErrorCode, FlurryError, ManualClock, type Clock, type NodeLease } from '@flurry/core';
import type { Claim, RegistryDriver } from './driver.js';
import { RegistryErrorCode, registryError } from './errors.js';
import { makeHolder, resolveRegistryOptions, type RegistryOptions, type ResolvedRegistryOptions } from './options.js';
import { SlotMap, type LayoutLike } from './slot-map.js';
import { defaultStateDir, SlotCache } from './state-dir.js';

/**
 * Counters of one lease.
 *
 * @example
 * ```ts
 * metrics.set(lease.stats.renewFailures);
 * ```
 */
export interface LeaseStats {
  /** Successful renewals. */
  renewals: number;
  /** Failed renewal and re-acquisition attempts. */
  renewFailures: number;
  /** Times the lease was lost (deadline passed or taken away). */
  lost: number;
  /** Times a lost lease was acquired again. */
  reacquired: number;
}

/**
 * Options of {@link Registry.acquire}.
 *
 * @example
 * ```ts
 * await registry.acquire(layout, { pin: { datacenter: 1 } });
 * ```
 */
export interface AcquireOptions {
  /** Node fields fixed by configuration, e.g. `{ datacenter: 1 }` (a `datacenter` field defaults to 0). */
  pin?: Record<string, number>;
}

/**
 * Lease state: `held` (issuing allowed until the deadline), `lost` (re-acquiring), `released`.
 *
 * @example
 * ```ts
 * if (lease.state === 'lost') log.warn('re-acquiring');
 * ```
 */
export type LeaseState = 'held' | 'lost' | 'released';

/**
 * A leased node ID: a core {@link NodeLease} (node, deadline, notBeforeMs, attach) that
 * renews itself, plus events and stats.
 *
 * Events: `'renewed'` ({ startedAt, deadline, wallStartedAt, wallDeadline, highWaterMs }),
 * `'renew-failed'` (err), `'lost'` (err), `'reacquired'` (lease), `'node-changed'` (node).
 *
 * @example
 * ```ts
 * lease.on('node-changed', (node) => console.log('now node', node));
 * if (!lease.valid()) res.status(503);
 * ```
 */
export interface ManagedLease extends NodeLease, EventEmitter {
  /** The slot currently held (changes when a lost lease is re-acquired elsewhere). */
  readonly slot: number;
  /** The namespace of the slot: `cluster` or `cluster/datacenter-N`. */
  readonly namespace: string;
  /** Increments at each re-acquisition; a generator built for one epoch must not outlive it. */
  readonly epoch: number;
  /** `held`, `lost` or `released`. */
  readonly state: LeaseState;
  /**
   * Wall-clock Unix ms until which issuing is allowed (start of the last successful
   * claim or renewal on the wall clock + ttl − margin): fences after a machine suspend.
   * `-Infinity` once lost or released; `Infinity` for static IDs.
   */
  readonly wallDeadline: number;
  /** True while `clock.monotonic() < deadline` and `clock.now() < wallDeadline`. */
  valid(): boolean;
  /** Milliseconds until the nearer of the two fencing deadlines (0 when passed; Infinity for static IDs). */
  msUntilDeadline(): number;
  readonly stats: LeaseStats;
  /**
   * A {@link NodeLease} for one generator, bound to the current claim: it reports
   * `deadline = wallDeadline = -Infinity` for good once the lease is re-acquired
   * (possibly as another node), so a generator built on it can never issue under a later
   * claim.
   * `floorMs` raises its `notBeforeMs` (e.g. to what an earlier generator issued).
   */
  forGenerator(floorMs?: number): NodeLease;
  /** Runs one renewal (or re-acquisition attempt) now; resolves true when the lease is held afterwards. */
  renewNow(): Promise<boolean>;
  /** Fences, reports the final high-water mark, frees the slot, stops renewing. */
  release(): Promise<void>;
}

/**
 * A node-ID registry (see docs/architecture.md).
 *
 * @example
 * ```ts
 * const registry: Registry = await openRegistry('file:');
 * ```
 */
export interface Registry {
  /** 'file', 'zookeeper', 'zookeeper+leaf', 'etcd', 'redis', 'static', 'k8s'. */
  readonly kind: string;
  /** The registry URL without a password. */
  readonly url: string;
  /** The clock deadlines are measured on (generators must use the same one). An extension. */
  readonly clock?: Clock;
  /** The validated options. An extension. */
  readonly options?: ResolvedRegistryOptions;
  /** Acquires a node ID for the layout's node fields. */
  acquire(layout: LayoutLike, opts?: AcquireOptions): Promise<ManagedLease>;
  /** Releases every lease still held and closes the engine connection. */
  close(): Promise<void>;
}

/**
 * Drivers whose IDs never expire (static, k8s) set this: their leases get an infinite
 * deadline and renewals only persist the high-water mark.
 *
 * @example
 * ```ts
 * class MyStaticDriver implements RegistryDriver, StaticAssignment { readonly staticAssignment = true; … }
 * ```
 */
export interface StaticAssignment {
  readonly staticAssignment?: boolean;
}

class TimeoutError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function errCode(err: unknown): string | undefined {
  return err instanceof FlurryError ? err.code : undefined;
}

function toFlurry(err: unknown, url: string, doing: string): FlurryError {
  if (err instanceof FlurryError) return err;
  if (err instanceof TimeoutError)
    return registryError(
      'UNREACHABLE',
      `${url}: ${err.message} while trying to ${doing}; check that the engine is up and reachable`,
      { url },
      err,
    );
  const msg = err instanceof Error ? err.message : String(err);
  return registryError('UNREACHABLE', `${url}: ${doing} failed: ${msg}`, { url }, err);
}

/**
 * The floor a new holder must issue above, given what the driver returned:
 * the mark itself after a clean release, else the mark plus the longest time the previous
 * holder may have issued unreported (`unreportedMs`: ttl + margin; for static IDs, which
 * never expire, the renewal interval + margin).
 *
 * @example
 * ```ts
 * claimFloor({ highWaterMs: 1000, releasedCleanly: false }, 11_000); // 12000
 * ```
 */
export function claimFloor(claim: Pick<Claim, 'highWaterMs' | 'releasedCleanly'>, unreportedMs: number): number {
  if (!(claim.highWaterMs > 0)) return 0;
  return claim.releasedCleanly ? claim.highWaterMs : claim.highWaterMs + unreportedMs;
}

function unreportedWindow(opts: ResolvedRegistryOptions, staticIds: boolean): number {
  return (staticIds ? opts.renewIntervalMs : opts.ttlMs) + opts.marginMs;
}

/** How often the deadline timer wakes while a lease is held, to notice a suspend (see the module notes). */
const SUSPEND_POLL_MS = 250;
/** Longest single timer of a floor wait: a stepped clock is noticed within this. */
const FLOOR_SLICE_MS = 50;

/**
 * Options of {@link waitForFloor}.
 *
 * @example
 * ```ts
 * await waitForFloor(clock, floorMs, 5000, { during: () => keepClaimAlive(), what: 'slot 3 of orders' });
 * ```
 */
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

/**
 * A layout's time grid: ticks of `unitMs` counted from `epochMs` (Unix ms).
 *
 * @example
 * ```ts
 * const grid: TickGrid = Layout.from('sonyflake'); // { epochMs: 1409529600000, unitMs: 10, … }
 * await waitForFloor(clock, floorMs, 5000, { tick: grid });
 * ```
 */
export interface TickGrid {
  readonly epochMs: number;
  readonly unitMs: number;
}

/** The layout's time grid when it has one (a core `Layout`), else undefined. */
function tickGridOf(layout: object): TickGrid | undefined {
  const { epochMs, unitMs } = layout as Partial<TickGrid>;
  if (typeof unitMs !== 'number' || !(unitMs > 0) || !Number.isFinite(unitMs)) return undefined;
  if (typeof epochMs !== 'number' || !Number.isFinite(epochMs)) return undefined;
  return { epochMs, unitMs };
}

/**
 * What waiting for `floorMs` means: `reached(now)` once issuing may start, `behind(now)`
 * how many ms are still missing (the `behindMs` of the errors).
 */
function floorTarget(
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
 * On a {@link ManualClock} it yields to the event loop and then advances the clock with
 * `clock.sleep` (fake time passes instantly, as everywhere in Flurry's tests); on any
 * other clock it waits on real timers in slices of at most 50 ms.
 *
 * @example
 * ```ts
 * await waitForFloor(systemClock, lease.notBeforeMs, 5000);
 * await waitForFloor(systemClock, lease.notBeforeMs, 5000, { tick: Layout.from('sonyflake') }); // up to its next 10 ms tick
 * ```
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
  const manual = clock instanceof ManualClock;
  const monoStart = clock.monotonic();
  const realStart = performance.now();
  for (;;) {
    const slice = Math.max(1, Math.min(FLOOR_SLICE_MS, Math.ceil(target.behind(now))));
    if (manual) {
      await new Promise<void>((r) => setImmediate(r));
      clock.sleep(slice);
    } else {
      await new Promise<void>((r) => setTimeout(r, slice));
    }
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

/** Where a successful claim or renewal started, on both clocks. */
interface Start {
  readonly mono: number;
  readonly wall: number;
}

/** How {@link settleClaim} waits: renewal timeout, error wording, abort check, the layout's time grid. */
interface SettleOptions {
  readonly renewTimeoutMs: number;
  readonly what: string;
  readonly alive: () => boolean;
  readonly tick: TickGrid | undefined;
}

/**
 * After a claim: records the claim-time mark (one renewal), then waits asynchronously
 * until the wall clock passes `floor` (the first tick above it, given `tick`), renewing
 * the claim every renewal interval meanwhile so a long wait cannot let it expire. Returns
 * the start of the last successful renewal (the lease's deadlines, and its next renewal,
 * are measured from it). `alive()` returning false aborts the wait (the lease was
 * released meanwhile). The caller releases the claim when this throws.
 */
async function settleClaim(
  driver: RegistryDriver,
  claim: Claim,
  floor: number,
  opts: ResolvedRegistryOptions,
  s: SettleOptions,
): Promise<Start> {
  const clock = opts.clock;
  const { renewTimeoutMs, what, alive, tick } = s;
  const renew = async (): Promise<Start> => {
    const start = { mono: clock.monotonic(), wall: clock.now() };
    await withTimeout(
      driver.renew(claim, { ttlMs: opts.ttlMs, highWaterMs: Math.max(floor, start.wall) }),
      renewTimeoutMs,
      'renewal',
    );
    return start;
  };
  // A floor further ahead than the bound: waitForFloor throws the coded error at once,
  // before any I/O.
  if (floorTarget(floor, tick).behind(clock.now()) > opts.highWaterWaitMs)
    await waitForFloor(clock, floor, opts.highWaterWaitMs, { what, tick });
  let last = await renew();
  await waitForFloor(clock, floor, opts.highWaterWaitMs, {
    what,
    tick,
    during: async () => {
      if (!alive())
        throw registryError(
          'CLOSED',
          `the lease of ${what} was released while waiting for the clock to pass its high-water mark`,
          {},
        );
      if (clock.monotonic() - last.mono >= opts.renewIntervalMs) last = await renew();
    },
  });
  return last;
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

/**
 * The fencing deadlines the generator views of one claim read: one object per epoch,
 * set to `-Infinity` for good when that claim is lost or released. Views inherit from it
 * (a prototype), so a generator reads plain data on its hot path, not getters.
 */
interface Fence {
  deadline: number;
  wallDeadline: number;
}

/** Shared context of the leases of one registry. */
interface LeaseContext {
  readonly driver: RegistryDriver;
  readonly opts: ResolvedRegistryOptions;
  readonly staticIds: boolean;
  readonly cache: SlotCache | undefined;
  onReleased(lease: Lease): void;
}

/** One managed lease. Built by {@link LeaseRegistry.acquire}. */
class Lease extends EventEmitter implements ManagedLease {
  node: Readonly<Record<string, number>>;
  deadline: number;
  wallDeadline: number;
  notBeforeMs: number;
  slot: number;
  epoch = 0;
  state: LeaseState = 'held';
  readonly stats: LeaseStats = { renewals: 0, renewFailures: 0, lost: 0, reacquired: 0 };
  readonly namespace: string;

  private claim: Claim | undefined;
  private readonly sources = new Set<() => number>();
  private failures = 0;
  private busy: Promise<boolean> | undefined;
  private loopTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** A claim lost locally that may still be ours in the engine: released before re-claiming. */
  private staleClaim: Claim | undefined;
  /** Highest mark ever reported or carried, for reports after re-acquisition. */
  private carried = 0;
  /** What the generator views of the current claim read (see {@link Fence}). */
  private fence: Fence;
  /** Monotonic start of the last successful claim or renewal: the next renewal is due `renewIntervalMs` after it. */
  private lastStartMono: number;

  constructor(
    private readonly ctx: LeaseContext,
    private readonly map: SlotMap,
    claim: Claim,
    startedAt: Start,
    /** The layout's time grid, for the floor wait of re-acquisitions. */
    private readonly tick: TickGrid | undefined,
  ) {
    super();
    this.namespace = map.namespace;
    this.claim = claim;
    this.slot = claim.slot;
    this.node = Object.freeze(map.toNode(claim.slot));
    this.notBeforeMs = claimFloor(claim, unreportedWindow(ctx.opts, ctx.staticIds));
    this.deadline = this.deadlineFrom(startedAt.mono);
    this.wallDeadline = this.deadlineFrom(startedAt.wall);
    this.fence = { deadline: this.deadline, wallDeadline: this.wallDeadline };
    this.lastStartMono = startedAt.mono;
  }

  /** Sets both deadlines, on the lease and on the current claim's generator views. */
  private setDeadlines(deadline: number, wallDeadline: number): void {
    this.deadline = deadline;
    this.wallDeadline = wallDeadline;
    this.fence.deadline = deadline;
    this.fence.wallDeadline = wallDeadline;
  }

  private get clock(): Clock {
    return this.ctx.opts.clock;
  }

  /** `startedAt + ttl − margin` on whichever clock `startedAt` was read (Infinity for static IDs). */
  private deadlineFrom(startedAt: number): number {
    return this.ctx.staticIds ? Infinity : startedAt + this.ctx.opts.ttlMs - this.ctx.opts.marginMs;
  }

  attach(highWater: () => number): void {
    if (typeof highWater !== 'function')
      throw registryError('OPTION', 'attach() takes a function returning the highest issued Unix ms');
    this.sources.add(highWater);
  }

  /** Highest Unix ms issued by this process under this lease object (all attached sources). */
  localHighWater(): number {
    let m = 0;
    for (const f of this.sources) {
      try {
        const v = f();
        if (typeof v === 'number' && v > m) m = v;
      } catch {
        /* a closed source: ignore */
      }
    }
    return m;
  }

  valid(): boolean {
    return this.clock.monotonic() < this.deadline && this.clock.now() < this.wallDeadline;
  }

  msUntilDeadline(): number {
    if (this.deadline === Infinity) return Infinity;
    return Math.max(0, Math.min(this.deadline - this.clock.monotonic(), this.wallDeadline - this.clock.now()));
  }

  /** Why `valid()` is false, for the `'lost'` error: which clock passed its deadline. */
  private expiredWhy(): string {
    if (!(this.clock.monotonic() < this.deadline)) return 'passed its fencing deadline without a successful renewal';
    return `passed its wall-clock fencing deadline by ${Math.round(this.clock.now() - this.wallDeadline)} ms while its monotonic deadline had not (the machine was suspended, or the wall clock stepped forward); the registry may have expired it`;
  }

  forGenerator(floorMs = 0): NodeLease {
    // The view's deadlines come from the current claim's Fence (its prototype): renewals
    // update them, and a later claim gets a new Fence while this one stays -Infinity.
    const view = Object.create(this.fence) as Fence & {
      node: Readonly<Record<string, number>>;
      notBeforeMs: number;
      attach(fn: () => number): void;
    };
    view.node = this.node;
    view.notBeforeMs = Math.max(this.notBeforeMs, floorMs);
    view.attach = (fn) => this.attach(fn);
    return view;
  }

  /** The mark reported at a renewal: nothing this holder issues before its deadline is below it − (ttl − margin). */
  private renewalMark(): number {
    return Math.max(this.localHighWater(), this.clock.now(), this.notBeforeMs, this.carried);
  }

  /** The mark reported at release, after fencing: exactly the highest issued (or the inherited floor). */
  private releaseMark(): number {
    return Math.max(this.localHighWater(), this.notBeforeMs);
  }

  /** Starts the background loop (unless autoRenew is off). */
  start(): void {
    this.armDeadlineTimer();
    this.schedule(this.renewalDue());
  }

  /**
   * Ms until the next periodic renewal: `renewIntervalMs` after the start of the last
   * successful claim or renewal (start to start). After a floor wait that renewed along
   * the way that start may be up to an interval old: counting from when acquire() or the
   * re-acquisition resolved instead could leave nearly 2 × renewIntervalMs between two
   * renewals — past the deadline when the interval is at its maximum.
   */
  private renewalDue(): number {
    return Math.max(0, this.ctx.opts.renewIntervalMs - (this.clock.monotonic() - this.lastStartMono));
  }

  private schedule(delay: number): void {
    if (!this.ctx.opts.autoRenew || this.state === 'released') return;
    clearTimeout(this.loopTimer);
    this.loopTimer = setTimeout(
      () => {
        void this.renewNow().then(() => this.scheduleNext());
      },
      Math.max(0, Math.round(delay)),
    );
    this.loopTimer.unref?.();
  }

  private scheduleNext(): void {
    if (this.state === 'released') return;
    const base = this.ctx.opts.renewIntervalMs;
    if (this.failures === 0) return this.schedule(this.renewalDue());
    const backoff = Math.min(base, 25 * 2 ** Math.min(this.failures, 10));
    this.schedule(backoff);
  }

  /**
   * Fences the lease (`'lost'`) once either deadline passed. Node's timers run on the
   * monotonic clock, which stands still during a machine suspend, so the timer wakes at
   * least every {@link SUSPEND_POLL_MS} and checks both clocks: after a resume it fires
   * within that, not when the monotonic deadline finally comes.
   */
  private armDeadlineTimer(): void {
    clearTimeout(this.deadlineTimer);
    if (!this.ctx.opts.autoRenew || this.state !== 'held' || !Number.isFinite(this.deadline)) return;
    const epoch = this.epoch;
    const wait = Math.min(this.msUntilDeadline() + 1, SUSPEND_POLL_MS);
    this.deadlineTimer = setTimeout(() => {
      if (this.epoch !== epoch || this.state !== 'held') return;
      if (!this.valid()) {
        this.markLost(
          registryError(
            'LEASE_LOST',
            `the lease of ${this.describe()} ${this.expiredWhy()}; issuing is fenced until it is re-acquired`,
            { slot: this.slot, namespace: this.namespace },
          ),
        );
        if (!this.busy) this.schedule(0);
      } else {
        this.armDeadlineTimer();
      }
    }, Math.ceil(wait));
    this.deadlineTimer.unref?.();
  }

  private describe(): string {
    return `node ${JSON.stringify(this.node)} (slot ${this.slot} of ${this.namespace} at ${this.ctx.driver.url})`;
  }

  private markLost(err: FlurryError): void {
    if (this.state !== 'held') return;
    this.setDeadlines(-Infinity, -Infinity);
    this.state = 'lost';
    this.stats.lost++;
    this.staleClaim = this.claim;
    this.claim = undefined;
    this.ctx.opts.logger?.warn(
      { err, slot: this.slot, namespace: this.namespace, url: this.ctx.driver.url },
      'flurry node lease lost; issuing fenced, re-acquiring',
    );
    this.emit('lost', err);
  }

  renewNow(): Promise<boolean> {
    if (this.state === 'released') return Promise.resolve(false);
    if (this.busy) return this.busy;
    const p = (async () => {
      if (this.state === 'held' && !this.valid()) {
        this.markLost(
          registryError('LEASE_LOST', `the lease of ${this.describe()} ${this.expiredWhy()}`, { slot: this.slot }),
        );
      }
      if (this.state === 'held') return this.renewOnce();
      if (this.state === 'lost') return this.reacquireOnce();
      return false;
    })().finally(() => {
      this.busy = undefined;
    });
    this.busy = p;
    return p;
  }

  private failed(err: FlurryError, doing: string): void {
    this.failures++;
    this.stats.renewFailures++;
    this.ctx.opts.logger?.warn(
      { err, slot: this.slot, namespace: this.namespace, url: this.ctx.driver.url, failures: this.failures },
      `flurry node lease: ${doing} failed`,
    );
    this.emit('renew-failed', err);
  }

  private async renewOnce(): Promise<boolean> {
    const claim = this.claim as Claim;
    const epoch = this.epoch;
    const { ttlMs, renewIntervalMs } = this.ctx.opts;
    const startedAt = this.clock.monotonic();
    const wallStartedAt = this.clock.now();
    const mark = this.renewalMark();
    try {
      await withTimeout(
        this.ctx.driver.renew(claim, { ttlMs, highWaterMs: mark }),
        Math.max(renewIntervalMs, 50),
        'renewal',
      );
    } catch (e) {
      if (this.epoch !== epoch || this.state !== 'held') return false;
      const err = toFlurry(e, this.ctx.driver.url, 'renew the lease');
      this.failed(err, 'renewal');
      if (err.code === RegistryErrorCode.LEASE_LOST && !this.ctx.staticIds) this.markLost(err);
      return false;
    }
    if (this.epoch !== epoch || this.state !== 'held') return false;
    const d = this.deadlineFrom(startedAt);
    const wd = this.deadlineFrom(wallStartedAt);
    if (this.clock.monotonic() >= d || this.clock.now() >= wd) {
      // Answered too late to extend anything — on the monotonic clock (a slow engine, a
      // paused process) or on the wall clock (sent before a machine suspend, answered
      // after it; the engine may have expired the lease meanwhile): the deadline timer (or
      // the next call) fences.
      const which =
        this.clock.monotonic() >= d
          ? 'fencing deadline'
          : 'wall-clock fencing deadline (the machine was suspended while it was in flight?)';
      this.failed(
        registryError('UNREACHABLE', `${this.ctx.driver.url}: the renewal answered after its ${which}`, {
          url: this.ctx.driver.url,
        }),
        'renewal',
      );
      return false;
    }
    // The wall deadline from the latest renewal's start, even if lower than before: after
    // a wall clock stepped back the old one would be too late by the size of the step.
    this.setDeadlines(Math.max(d, this.deadline), wd);
    this.lastStartMono = startedAt;
    if (mark > this.carried) this.carried = mark;
    this.failures = 0;
    this.stats.renewals++;
    this.armDeadlineTimer();
    this.emit('renewed', {
      startedAt,
      deadline: this.deadline,
      wallStartedAt,
      wallDeadline: this.wallDeadline,
      highWaterMs: mark,
    });
    return true;
  }

  private async reacquireOnce(): Promise<boolean> {
    const { driver, opts } = this.ctx;
    // Free the claim we lost locally if the engine still has it as ours: we are fenced, so
    // the mark we report is exact and the next holder (likely us) need not wait.
    if (this.staleClaim) {
      try {
        await withTimeout(
          driver.release(this.staleClaim, { highWaterMs: this.releaseMark() }),
          Math.max(opts.renewIntervalMs, 50),
          'release',
        );
        this.staleClaim = undefined;
      } catch (e) {
        const code = errCode(e);
        if (code === RegistryErrorCode.LEASE_LOST) this.staleClaim = undefined;
        // Otherwise keep it and try again next time; claiming may still succeed elsewhere.
      }
    }
    let claim: Claim;
    try {
      claim = await claimWithTimeout(
        driver,
        {
          namespace: this.namespace,
          slots: this.map.slots,
          ttlMs: opts.ttlMs,
          holder: makeHolder(opts.holder),
          preferredSlot: this.slot,
        },
        opts,
      );
    } catch (e) {
      if (this.state !== 'lost') return false;
      this.failed(toFlurry(e, driver.url, 're-acquire a node ID'), 're-acquisition');
      return false;
    }
    if (this.state !== 'lost') {
      // Released while we were claiming: give it back.
      await driver.release(claim, { highWaterMs: this.releaseMark() }).catch(() => undefined);
      return false;
    }
    const floor = Math.max(
      claimFloor(claim, unreportedWindow(opts, this.ctx.staticIds)),
      this.localHighWater(),
      this.notBeforeMs,
      this.carried,
    );
    // Record the claim-time mark before anything is issued under the new claim, and wait
    // (asynchronously, renewing the claim) for the wall clock to pass the floor, so the
    // rebuilt generators never wait.
    let start: Start;
    try {
      start = await settleClaim(driver, claim, floor, opts, {
        renewTimeoutMs: Math.max(opts.renewIntervalMs, 50),
        what: `slot ${claim.slot} of ${this.namespace} at ${driver.url}`,
        alive: () => this.state === 'lost',
        tick: this.tick,
      });
    } catch (e) {
      await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
      if (this.state === 'lost')
        this.failed(toFlurry(e, driver.url, 'record the high-water mark after re-acquiring'), 're-acquisition');
      return false;
    }
    if (this.state !== 'lost') {
      await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
      return false;
    }
    const d = this.deadlineFrom(start.mono);
    const wd = this.deadlineFrom(start.wall);
    if (this.clock.monotonic() >= d || this.clock.now() >= wd) {
      await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
      this.failed(
        registryError('UNREACHABLE', `${driver.url}: re-acquiring took longer than the TTL minus the margin`, {
          url: driver.url,
        }),
        're-acquisition',
      );
      return false;
    }
    const oldNode = this.node;
    const newNode = Object.freeze(this.map.toNode(claim.slot));
    this.claim = claim;
    this.slot = claim.slot;
    this.node = newNode;
    this.notBeforeMs = floor;
    this.carried = Math.max(this.carried, floor);
    this.setDeadlines(-Infinity, -Infinity); // (already, since the loss) the old claim's views stay fenced
    this.fence = { deadline: -Infinity, wallDeadline: -Infinity };
    this.epoch++;
    this.failures = 0;
    this.state = 'held';
    this.setDeadlines(d, wd);
    this.lastStartMono = start.mono;
    this.stats.reacquired++;
    this.ctx.cache?.write(driver.url, this.namespace, this.map.slots, claim.slot);
    this.armDeadlineTimer();
    opts.logger?.info(
      { slot: claim.slot, node: newNode, namespace: this.namespace, url: driver.url, notBeforeMs: floor },
      'flurry node lease re-acquired',
    );
    const changed = Object.keys(newNode).some((k) => newNode[k] !== oldNode[k]);
    if (changed) this.emit('node-changed', newNode);
    this.emit('reacquired', this);
    return true;
  }

  async release(): Promise<void> {
    if (this.state === 'released') return;
    const wasHeld = this.state === 'held';
    this.state = 'released';
    this.setDeadlines(-Infinity, -Infinity);
    clearTimeout(this.loopTimer);
    clearTimeout(this.deadlineTimer);
    if (this.busy) await this.busy.catch(() => undefined);
    this.ctx.onReleased(this);
    const claim = wasHeld ? this.claim : this.staleClaim;
    // The reacquire loop may have swapped claims while we waited: prefer the current one.
    const target = this.claim ?? claim;
    this.claim = undefined;
    this.staleClaim = undefined;
    if (!target) return;
    const mark = this.releaseMark();
    try {
      await withTimeout(
        this.ctx.driver.release(target, { highWaterMs: mark }),
        Math.max(this.ctx.opts.ttlMs, 1000),
        'release',
      );
    } catch (e) {
      const err = toFlurry(e, this.ctx.driver.url, 'release the lease');
      // A lease that was already lost has nothing to hand over cleanly: best effort only.
      if (err.code === RegistryErrorCode.LEASE_LOST || !wasHeld) return;
      this.ctx.opts.logger?.warn(
        { err, slot: this.slot },
        'flurry node lease: release failed; the node ID frees itself when its TTL expires',
      );
      throw err;
    }
  }
}

async function claimWithTimeout(
  driver: RegistryDriver,
  req: Parameters<RegistryDriver['claim']>[0],
  opts: ResolvedRegistryOptions,
): Promise<Claim> {
  const p = driver.claim(req);
  try {
    return await withTimeout(p, Math.max(opts.ttlMs, opts.connectTimeoutMs), 'claim');
  } catch (e) {
    if (e instanceof TimeoutError) {
      // If the claim lands later, give it back so the slot does not stay held by nobody.
      p.then((late) => driver.release(late, { highWaterMs: 0 })).catch(() => undefined);
    }
    throw e;
  }
}

/**
 * A {@link Registry} over one driver: validates options, acquires leases and closes them.
 *
 * @example
 * ```ts
 * const registry = new LeaseRegistry(await createFileDriver('/var/lib/flurry/registry', { clock: systemClock }), { cluster: 'orders' });
 * const lease = await registry.acquire(Layout.from('twitter'));
 * ```
 */
export class LeaseRegistry implements Registry {
  readonly kind: string;
  readonly url: string;
  readonly clock: Clock;
  readonly options: ResolvedRegistryOptions;
  private readonly leases = new Set<Lease>();
  private closed = false;
  private readonly ctx: LeaseContext;

  constructor(
    private readonly driver: RegistryDriver,
    opts: RegistryOptions | ResolvedRegistryOptions = {},
  ) {
    this.options = resolveRegistryOptions(opts);
    this.kind = driver.kind;
    this.url = driver.url;
    this.clock = this.options.clock;
    const staticIds = (driver as RegistryDriver & StaticAssignment).staticAssignment === true;
    this.ctx = {
      driver,
      opts: this.options,
      staticIds,
      cache: staticIds ? undefined : new SlotCache(this.options.stateDir ?? defaultStateDir()),
      onReleased: (l) => this.leases.delete(l),
    };
  }

  async acquire(layout: LayoutLike, opts: AcquireOptions = {}): Promise<ManagedLease> {
    if (this.closed)
      throw registryError('CLOSED', `the registry ${this.url} was closed; open a new one with openRegistry()`, {
        url: this.url,
      });
    if (!layout || !Array.isArray(layout.nodeFields))
      throw registryError('OPTION', 'acquire() takes a core Layout (Layout.from(...))', {});
    const { opts: o, driver } = this.ctx;
    const map = SlotMap.create(layout, o.cluster, opts.pin ?? {});
    const preferredSlot = this.ctx.cache?.read(driver.url, map.namespace, map.slots);
    let claim: Claim;
    try {
      claim = await claimWithTimeout(
        driver,
        {
          namespace: map.namespace,
          slots: map.slots,
          ttlMs: o.ttlMs,
          holder: makeHolder(o.holder),
          ...(preferredSlot === undefined ? {} : { preferredSlot }),
        },
        o,
      );
    } catch (e) {
      throw toFlurry(e, driver.url, `claim a node ID in ${map.namespace}`);
    }
    const floor = claimFloor(claim, unreportedWindow(o, this.ctx.staticIds));
    const tick = tickGridOf(layout);
    // Record the claim-time wall clock as the mark before anything is issued, and wait
    // (asynchronously, renewing the claim) until the wall clock passes the floor — the
    // first tick of the layout above it: the lease is handed out only then, so its
    // generators never wait.
    let start: Start;
    try {
      start = await settleClaim(driver, claim, floor, o, {
        renewTimeoutMs: Math.max(o.ttlMs, 1000),
        what: `slot ${claim.slot} of ${map.namespace} at ${driver.url}`,
        alive: () => !this.closed,
        tick,
      });
    } catch (e) {
      await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
      if (this.closed)
        throw registryError('CLOSED', `the registry ${this.url} was closed during acquire()`, { url: this.url });
      throw toFlurry(e, driver.url, `record the high-water mark of slot ${claim.slot} in ${map.namespace}`);
    }
    const lease = new Lease(this.ctx, map, claim, start, tick);
    if (!lease.valid()) {
      await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
      throw registryError(
        'UNREACHABLE',
        `${driver.url}: claiming a node ID took longer than the TTL minus the margin (${o.ttlMs - o.marginMs} ms); the engine is too slow or the TTL too short`,
        { url: driver.url, ttlMs: o.ttlMs },
      );
    }
    if (this.closed) {
      await driver.release(claim, { highWaterMs: floor }).catch(() => undefined);
      throw registryError('CLOSED', `the registry ${this.url} was closed during acquire()`, { url: this.url });
    }
    this.leases.add(lease);
    this.ctx.cache?.write(driver.url, map.namespace, map.slots, claim.slot);
    lease.start();
    return lease;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const errors: unknown[] = [];
    await Promise.all([...this.leases].map((l) => l.release().catch((e) => errors.push(e))));
    await this.driver.close();
    if (errors.length)
      this.options.logger?.warn(
        { errors: errors.length },
        'flurry registry closed; some leases could not be released and expire by TTL',
      );
  }
}
