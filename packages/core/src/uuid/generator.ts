/** {@link UuidGenerator}: RFC 9562 UUIDv7 with Snowflake's guarantees, in one thread; its options and their checks. */
import { systemClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions, optionNames } from '../known-options.js';
import { claimNode, type NodeClaim } from '#claims';
import { POLICY_NAMES, badOption, resolvePolicy, type GeneratorOptions } from '../generator/options.js';
import { LocalTicks, currentClaim } from '../generator/local-ticks.js';
import { UuidIssuer, nodeOf, uuidClaim, uuidPlan } from './issuer.js';
import { UuidFormat, type UuidFormatOptions } from './format.js';

/** Options of {@link UuidGenerator}: the node ID (or a lease), the format's widths and {@link Generator}'s policies. */
export interface UuidGeneratorOptions extends UuidFormatOptions, Omit<GeneratorOptions, 'layout' | 'node'> {
  /** The node ID (`0 … 2^nodeBits − 1`), or `{ node: n }` as a lease grants it; required unless `lease` is given. */
  node?: number | Readonly<Record<string, number>>;
}

/** The keys of {@link UuidGeneratorOptions} (any other key: `FLURRY_E_UNKNOWN_OPTION`). */
export const UUID_GENERATOR_OPTION_NAMES = optionNames<UuidGeneratorOptions>({
  node: true,
  nodeBits: true,
  sequenceBits: true,
  ...POLICY_NAMES,
});

/** The format of a UUID generator's options, checked (`what` names the generator in errors). */
export function uuidFormatOf(opts: UuidGeneratorOptions, what: string): UuidFormat {
  if (opts === null || typeof opts !== 'object') throw badOption('options', opts, 'an object such as { node }');
  assertKnownOptions(opts, UUID_GENERATOR_OPTION_NAMES, `${what} options`);
  return UuidFormat.from(opts);
}

/** A UUID generator (`who`) given no node ID; `more` names another way to get one. */
export function missingNode(format: UuidFormat, who: string, more = ''): FlurryError {
  const range = `0 to ${format.maxNode} with nodeBits = ${format.nodeBits}`;
  return new FlurryError(ErrorCode.NODE_OUT_OF_RANGE, `${who} needs its node ID: pass node (${range})${more}.`, {});
}

/**
 * Issues strictly increasing UUIDv7 for one node ID, in one thread (docs/uuids.md, with samples): `(millisecond,
 * sequence)` only grows and no two live generators share a node ID, so no two UUIDs are equal. The clock and lease
 * policies are {@link Generator}'s. One live generator per node ID in a process (whatever its widths).
 */
export class UuidGenerator extends UuidIssuer {
  declare protected ticks: LocalTicks;

  constructor(opts: UuidGeneratorOptions) {
    const format = uuidFormatOf(opts, 'UuidGenerator');
    const lease = opts.lease;
    const claimNow = currentClaim(lease);
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
