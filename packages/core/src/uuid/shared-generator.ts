import { systemClock } from '../clock.js';
import { badOption, resolvePolicy, type ResolvedPolicy } from '../generator/options.js';
import { SharedTicks, sharedBuffer, type FromStateOptions } from '../generator/shared-ticks.js';
import { UuidIssuer, nodeOf, uuidClaim, uuidPlan } from './issuer.js';
import { missingNode, uuidFormatOf, type UuidGeneratorOptions } from './generator.js';

// The shared cell (signed 64 bits) holds the 48-bit millisecond above at most 15 sequence bits.
const SHARED_SEQUENCE_BITS = 15;

/** What a {@link SharedUuidGenerator} posts to worker threads (structured-cloneable). */
export interface SharedUuidGeneratorState {
  readonly kind: 'flurry-shared-uuid-generator';
  readonly nodeBits: number;
  readonly sequenceBits: number;
  readonly node: number;
  readonly policy: ResolvedPolicy;
  readonly buffer: SharedArrayBuffer;
}

/** Options of {@link SharedUuidGenerator}: {@link UuidGenerator}'s without `lease` (its deadline is one thread's). */
export type SharedUuidGeneratorOptions = Omit<UuidGeneratorOptions, 'lease'>;

/**
 * A {@link UuidGenerator} whose `(millisecond, sequence)` state lives in shared memory, with the run reservation
 * of {@link SharedGenerator} (docs/clocks.md): per thread the UUIDs strictly increase, across threads they are
 * unique. The threads share at most 32,768 sequence values per millisecond. The creating handle holds the node
 * claim and its `close()` stops every handle; others detach. It takes no lease: keep its node ID unique. Worker
 * sample: docs/uuids.md#worker-threads-sharing-one-node.
 */
export class SharedUuidGenerator extends UuidIssuer {
  /** The structured-cloneable state to post to worker threads. */
  readonly state: SharedUuidGeneratorState;
  declare protected ticks: SharedTicks;

  constructor(opts: SharedUuidGeneratorOptions);
  /** @internal used by {@link SharedUuidGenerator.fromState}. */
  constructor(opts: SharedUuidGeneratorOptions, attach: { buffer: SharedArrayBuffer; policy: ResolvedPolicy });
  constructor(opts: SharedUuidGeneratorOptions, attach?: { buffer: SharedArrayBuffer; policy: ResolvedPolicy }) {
    if ((opts as UuidGeneratorOptions | null)?.lease !== undefined) {
      throw badOption(
        'lease',
        'a lease',
        "no lease: a SharedUuidGenerator cannot share a lease's deadline across threads; pass the lease's node and stop the threads before it ends, or give each thread its own leasedUuidGenerator()",
      );
    }
    const format = uuidFormatOf(opts, 'SharedUuidGenerator');
    const node = nodeOf(opts.node);
    if (node === undefined) throw missingNode(format, 'A SharedUuidGenerator');
    super(format, node);
    const policy = attach ? attach.policy : resolvePolicy({ ...opts, node: undefined });
    const plan = uuidPlan(Math.min(format.sequenceBits, SHARED_SEQUENCE_BITS));
    const clock = opts.clock ?? systemClock;
    const claim = attach?.buffer ?? uuidClaim(format, node);
    this.ticks = new SharedTicks(plan, policy, clock, opts.onEvent, claim, (tick) => this.setTick(tick));
    this.state = Object.freeze({
      kind: 'flurry-shared-uuid-generator',
      nodeBits: format.nodeBits,
      sequenceBits: format.sequenceBits,
      node,
      policy,
      buffer: this.ticks.buffer,
    });
  }

  /** Attaches to a shared UUID generator from its posted state (in a worker); `clock` and `onEvent` are per thread. */
  static fromState(state: SharedUuidGeneratorState, opts: FromStateOptions = {}): SharedUuidGenerator {
    const buffer = sharedBuffer(state, 'flurry-shared-uuid-generator', 'SharedUuidGenerator', opts);
    const { nodeBits, sequenceBits, node } = state;
    return new SharedUuidGenerator(
      { nodeBits, sequenceBits, node, clock: opts.clock, onEvent: opts.onEvent },
      { buffer, policy: state.policy },
    );
  }
}
