import { systemClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { Layout } from '../layout/layout.js';
import { claimNode, type NodeClaim } from '#claims';
import { assertKnownOptions } from '../known-options.js';
import { GENERATOR_OPTION_NAMES, badOption, checkCount, resolvePolicy, type GeneratorOptions } from './options.js';
import { LocalTicks } from './local-ticks.js';
import { TickIds } from './tick-ids.js';

/**
 * Issues unique, strictly increasing IDs for one node of a layout, in one thread.
 *
 * Each ID is `tick | node | sequence` in the layout's positions; the sequence counts IDs within a tick and never
 * wraps. Exhaustion waits or borrows ticks (`onExhausted`), a clock stepped back is tolerated, waited out or
 * refused (`onClockBackwards`), never with a repeated or smaller ID (docs/clocks.md). With a `lease` it follows
 * {@link NodeLease}'s contract (fencing deadlines, `notBeforeMs`, following a new claim). One live generator per
 * node ID in a process (`FLURRY_E_NODE_IN_USE`); {@link SharedGenerator} issues one node's IDs from several threads.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(Date.UTC(2025, 0, 1));
 * const gen = new Generator({ layout: 'leaf', node: { worker: 3 }, clock, onExhausted: 'borrow' });
 * const ids = gen.batch(10_000); // strictly increasing
 * gen.close();
 * ```
 */
export class Generator extends LocalTicks {
  declare readonly layout: Layout;

  private readonly ids: TickIds;
  private nodeNow: Readonly<Record<string, number>>;

  constructor(opts: GeneratorOptions) {
    if (opts === null || typeof opts !== 'object')
      throw badOption('options', opts, 'an object such as { layout, node }');
    assertKnownOptions(opts, GENERATOR_OPTION_NAMES, 'Generator options');
    const layout = Layout.from(opts.layout);
    super(layout, resolvePolicy(opts), opts.clock ?? systemClock, opts.lease, opts.onEvent, 'ID', {
      onTick: (tick) => this.ids.setTick(tick),
      switchNode: (n) => {
        if (sameNode(n, this.nodeNow)) return undefined;
        const nodeBits = this.layout.nodeBits(n);
        const claim = this.claimFor(n, nodeBits);
        this.nodeNow = Object.freeze({ ...n });
        this.ids.nodeBits = nodeBits;
        return claim;
      },
    });
    const claim = this.lease;
    if (claim && opts.node && !sameNode(opts.node, claim.node)) {
      throw badOption(
        'node',
        JSON.stringify(opts.node),
        `the lease's node ${JSON.stringify(claim.node)} or no node (a lease grants exactly one node ID)`,
      );
    }
    const node = opts.node ?? claim?.node;
    if (node === undefined) {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `A generator needs its node ID: pass node (${layout.nodeFields.map((f) => `${f.name} 0..${f.max}`).join(', ') || '{} for this layout'}) or a registry lease.`,
        {},
      );
    }
    const nodeBits = layout.nodeBits(node);
    this.nodeNow = Object.freeze({ ...node });
    this.ids = new TickIds(layout, nodeBits);
    this.start(this.claimFor(this.nodeNow, nodeBits));
  }

  /** The node field values of the IDs: with a registry lease, its current claim's (which the next ID takes). */
  get node(): Readonly<Record<string, number>> {
    const claim = this.claimNow();
    return claim === undefined || claim === this.lease ? this.nodeNow : claim.node;
  }

  /** The next ID. */
  next(): bigint {
    return this.ids.next(this.advance());
  }

  /** The next ID as a decimal string (JSON-safe). */
  nextString(): string {
    return this.next().toString();
  }

  /** `count` IDs in increasing order. */
  batch(count: number): bigint[] {
    checkCount(count);
    const target = new BigUint64Array(count);
    this.fill(target);
    return Array.from(target);
  }

  /** `count` IDs as decimal strings, in increasing order. */
  batchStrings(count: number): string[] {
    checkCount(count);
    const target = new BigUint64Array(count);
    this.fill(target);
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) out[i] = target[i].toString();
    return out;
  }

  /** Writes `count` increasing IDs into `target` from `offset` (default: to the end); one clock read per tick. */
  fill(target: BigUint64Array, offset = 0, count: number = target.length - offset): number {
    return this.ids.fill(this, target, offset, count);
  }

  private claimFor(node: Readonly<Record<string, number>>, nodeBits: bigint): NodeClaim {
    const what = `${this.layout.name} node ${JSON.stringify(node)}`;
    return claimNode(this.layout.idSpaceKey(nodeBits), what, () => this.lastTick);
  }
}

function sameNode(a: Record<string, number>, b: Readonly<Record<string, number>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
