/**
 * The contract between a generator and the node-ID registry that leased it its node ID (`@flurry/coordination`
 * implements it). A generator issues only while both fencing deadlines lie ahead (else `FLURRY_E_LEASE_EXPIRED`), never
 * at or below `notBeforeMs`, reports `lastIssuedUnixMs` through `attach`, and follows `forGenerator()` to a newer claim
 * once the current one ends. Why two deadlines: docs/node-ids.md#fencing-two-deadlines; the contract:
 * docs/node-ids.md#the-lease-contract.
 */
export interface NodeLease {
  /** Node field values this lease grants, e.g. `{ datacenter: 1, worker: 7 }`. */
  readonly node: Readonly<Record<string, number>>;
  /**
   * Monotonic-clock ms (same clock as the generator's `clock.monotonic()`) until which issuing is allowed. Updated in
   * place by renewals; `-Infinity` once lost or released.
   */
  readonly deadline: number;
  /**
   * Wall-clock Unix ms (same clock as the generator's `clock.now()`) until which issuing is allowed: catches a machine
   * suspend, during which monotonic time stands still. Updated in place by renewals; `-Infinity` once lost or released.
   * Absent: no wall check (only `deadline` fences).
   */
  readonly wallDeadline?: number;
  /** Unix ms: every issued ID's timestamp must be strictly greater. 0 when there is no history. */
  readonly notBeforeMs: number;
  /** Registers where the registry reads the holder's highest issued Unix ms from (at each renewal and at release). */
  attach(highWater: () => number): void;
  /**
   * Optional: a lease that can be re-acquired as another node returns here its current claim (deadlines `-Infinity` for
   * good once that claim ends), the same object for as long as the claim lasts. The generator issues under it and
   * follows the lease to the next one.
   */
  forGenerator?(): NodeLease;
}
