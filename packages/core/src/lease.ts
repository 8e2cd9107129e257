/**
 * The contract between a generator and the node-ID registry that leased it its node ID
 * (`@flurry/coordination` implements it; the core only consumes it).
 *
 * A generator given a lease:
 * - issues an ID only while BOTH fencing deadlines lie ahead: `clock.monotonic() <
 *   lease.deadline` and (when the lease has one) `clock.now() < lease.wallDeadline`. It
 *   checks before every ID and batch (and at every new tick of a long batch), so a
 *   process that wakes from a pause or a suspend notices before its first ID; otherwise
 *   it throws `FLURRY_E_LEASE_EXPIRED`;
 * - never issues an ID whose timestamp is at or below `lease.notBeforeMs` (the previous
 *   holder's high-water mark plus the longest it could have issued unreported). The
 *   generator reads it when created and at every new tick, so set it before handing the
 *   lease over (a raised value takes effect from the next tick);
 * - exposes its highest issued Unix ms through `lastIssuedUnixMs`, which the registry
 *   reads at every renewal and on release (the next holder's high-water mark).
 *
 * ## Why two deadlines
 * Both are "start of the last successful claim or renewal + ttl − margin", read on two
 * clocks at that start:
 * - `deadline` on the monotonic clock never moves with NTP or an operator, so a wall
 *   clock stepped BACK extends nothing; and it keeps counting while the process is
 *   paused (SIGSTOP, GC), so a woken process fences itself.
 * - `wallDeadline` on the wall clock (Unix ms) covers what the monotonic clock misses: on
 *   Linux `systemClock.monotonic()` is CLOCK_MONOTONIC, which stands still while the machine or
 *   VM is suspended (laptop lid, VM pause, live migration), whereas the registry's TTL
 *   runs on (it may have given the node ID to another holder meanwhile). The wall clock
 *   jumps forward by the suspended time on resume, so the wall deadline has passed.
 *   The cost: a wall clock stepped FORWARD (NTP step, operator) by more than the time
 *   left fences early — conservative, never unsafe — and the next successful renewal,
 *   which re-reads the wall clock at its start, lifts it again.
 *
 * A lease without `wallDeadline` (a hand-written one) is fenced on the monotonic clock
 * only.
 *
 * ## A generator follows its lease
 * A registry lease that can be re-acquired as ANOTHER node after a loss offers the current
 * claim through `forGenerator()`: a view whose deadlines stay `-Infinity` for good once
 * that claim ends. The generator issues under that view; only when its deadlines have
 * passed (the cold path) does it ask `forGenerator()` again, and a newer claim it takes
 * at a new tick, with that claim's node, above the claim's `notBeforeMs` and above every
 * ID it issued. A view passed as the lease itself (it has no `forGenerator`) is never
 * left: such a generator refuses for good once its claim ends.
 */
export interface NodeLease {
  /** Node field values this lease grants, e.g. `{ datacenter: 1, worker: 7 }`. */
  readonly node: Readonly<Record<string, number>>;
  /**
   * Monotonic-clock ms (same clock as the generator's `clock.monotonic()`) until which
   * issuing is allowed. Updated in place by renewals; `-Infinity` once lost or released.
   */
  readonly deadline: number;
  /**
   * Wall-clock Unix ms (same clock as the generator's `clock.now()`) until which issuing
   * is allowed: catches a machine suspend, during which monotonic time stands still.
   * Updated in place by renewals; `-Infinity` once lost or released. Absent: no wall
   * check (only `deadline` fences).
   */
  readonly wallDeadline?: number;
  /** Unix ms: every issued ID's timestamp must be strictly greater. 0 when there is no history. */
  readonly notBeforeMs: number;
  /**
   * Registers where the registry reads the holder's highest issued Unix ms from
   * (at each renewal and at release).
   */
  attach(highWater: () => number): void;
  /**
   * Optional: a lease that can be re-acquired as another node returns here its current
   * claim (deadlines `-Infinity` for good once that claim ends), the same object for as
   * long as the claim lasts. The generator issues under it and follows the lease to the
   * next one.
   */
  forGenerator?(): NodeLease;
}
