/**
 * The contract between a generator and the node-ID registry that leased it its node ID
 * (`@flurry/coordination` implements it; the core only consumes it).
 *
 * A generator given a lease:
 * - issues an ID only while `clock.monotonic() < lease.deadline` (fencing): it checks
 *   before every ID and batch, so a process that wakes from a pause notices first;
 *   otherwise it throws `FLURRY_E_LEASE_EXPIRED`;
 * - never issues an ID whose timestamp is at or below `lease.notBeforeMs` (the previous
 *   holder's high-water mark plus the longest it could have issued unreported). The
 *   generator reads it when created and at every new tick, so set it before handing the
 *   lease over (a raised value takes effect from the next tick);
 * - exposes its highest issued Unix ms through `lastIssuedUnixMs`, which the registry
 *   reads at every renewal and on release (the next holder's high-water mark).
 *
 * @example
 * ```ts
 * const lease = await registry.acquire(layout);
 * const gen = new Generator({ layout, lease });      // node taken from lease.node;
 *                                                    // the generator calls lease.attach(() => gen.lastIssuedUnixMs)
 * ```
 */
export interface NodeLease {
  /** Node field values this lease grants, e.g. `{ datacenter: 1, worker: 7 }`. */
  readonly node: Readonly<Record<string, number>>;
  /**
   * Monotonic-clock ms (same clock as the generator's `clock.monotonic()`) until which
   * issuing is allowed. Updated in place by renewals; `-Infinity` once lost or released.
   */
  readonly deadline: number;
  /** Unix ms: every issued ID's timestamp must be strictly greater. 0 when there is no history. */
  readonly notBeforeMs: number;
  /**
   * Registers where the registry reads the holder's highest issued Unix ms from
   * (at each renewal and at release).
   */
  attach(highWater: () => number): void;
}
