/** {@link UuidGenerator}: RFC 9562 UUIDv7 with Snowflake's guarantees, in one thread. */
import { systemClock } from '../clock.js';
import { claimNode, type NodeClaim } from '#claims';
import { badOption, resolvePolicy } from '../generator/options.js';
import { LocalTicks } from '../generator/local-ticks.js';
import { UuidIssuer, nodeOf, uuidClaim, uuidPlan } from './issuer.js';
import { missingNode, uuidFormatOf, type UuidGeneratorOptions } from './options.js';

/**
 * Issues strictly increasing UUIDv7 for one node ID, in one thread (docs/uuids.md): `(millisecond, sequence)` only
 * grows and no two live generators share a node ID, so no two UUIDs are equal. The clock and lease policies are
 * {@link Generator}'s. One live generator per node ID in a process (whatever its widths).
 *
 * @example
 * ```ts
 * const gen = new UuidGenerator({ node: 3, clock: new ManualClock(Date.UTC(2025, 0, 1)) });
 * const ids = gen.batch(1000);          // canonical strings, strictly increasing
 * const raw = gen.batch(10, 'bytes');   // Uint8Array(16) each
 * gen.close();
 * ```
 */
export class UuidGenerator extends UuidIssuer {
  declare protected ticks: LocalTicks;

  constructor(opts: UuidGeneratorOptions) {
    const format = uuidFormatOf(opts, 'UuidGenerator');
    const lease = opts.lease;
    // The lease's current claim (TickPlanner.claimNow, before `this` exists).
    const claimNow = typeof lease?.forGenerator === 'function' ? lease.forGenerator() : lease;
    const given = nodeOf(opts.node);
    const leased = claimNow ? nodeOf(claimNow.node) : undefined;
    if (given !== undefined && leased !== undefined && given !== leased) {
      throw badOption('node', given, `the lease's node ${leased} or no node (a lease grants exactly one node ID)`);
    }
    const node = given ?? leased;
    if (node === undefined) throw missingNode(format, 'A UUID generator', ' or a registry lease');
    super(format, node);
    const policy = resolvePolicy({ ...opts, node: undefined });
    this.ticks = new LocalTicks(
      uuidPlan(format.sequenceBits),
      policy,
      opts.clock ?? systemClock,
      lease,
      opts.onEvent,
      'UUID',
      {
        onTick: (tick) => this.setTick(tick),
        switchNode: (n) => {
          const next = nodeOf(n)!;
          if (next === this.nodeNow) return undefined;
          const claim = this.claimFor(next);
          this.setNode(next);
          return claim;
        },
      },
    );
    this.ticks.start(this.claimFor(node));
  }

  /** The node ID: with a registry lease, its current claim's (which the next UUID takes). */
  override get node(): number {
    const claim = this.ticks.claimNow();
    return claim === undefined || claim === this.ticks.lease ? this.nodeNow : nodeOf(claim.node)!;
  }

  /** This process's claim on `node`, whatever the format (see {@link uuidClaim}). */
  private claimFor(node: number): NodeClaim {
    const c = uuidClaim(this.format, node);
    return claimNode(c.key, c.describe, () => this.ticks.lastIssuedUnixMs);
  }
}
