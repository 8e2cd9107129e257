import { systemClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { Layout } from '../layout/layout.js';
import type { LayoutSpec } from '../layout/types.js';
import { assertKnownOptions } from '../known-options.js';
import {
  GENERATOR_OPTION_NAMES,
  badOption,
  checkCount,
  resolvePolicy,
  type GeneratorOptions,
  type ResolvedPolicy,
} from './options.js';
import { SharedTicks, sharedBuffer, type FromStateOptions } from './shared-ticks.js';
import { TickIds } from './tick-ids.js';

/** What a {@link SharedGenerator} posts to worker threads (structured-cloneable). */
export interface SharedGeneratorState {
  readonly kind: 'flurry-shared-generator';
  readonly layout: LayoutSpec;
  readonly node: Readonly<Record<string, number>>;
  readonly policy: ResolvedPolicy;
  readonly buffer: SharedArrayBuffer;
}

/** Options of {@link SharedGenerator}: {@link Generator}'s without `lease` (its deadline is one thread's). */
export type SharedGeneratorOptions = Omit<GeneratorOptions, 'lease'>;

/**
 * A generator whose `(tick, sequence)` state lives in shared memory, so any number of worker threads issue IDs
 * for one node ID without ever repeating one: each thread wins an adaptive run of one tick's sequence values with
 * one compare-and-swap and hands them out locally, under {@link Generator}'s policies (docs/clocks.md). The
 * creating handle holds the node claim and its `close()` stops every handle; on handles from
 * {@link SharedGenerator.fromState} `close()` detaches only that one. Stats are per handle. Timestamp + sequence
 * must fit 63 bits (the state cell is a signed 64-bit integer).
 *
 * @example
 * ```ts
 * const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 0, worker: 9 } });
 * const here = shared.next();
 * const inWorker = SharedGenerator.fromState(structuredClone(shared.state)); // as a worker would
 * inWorker.next() > here; // true
 * ```
 */
export class SharedGenerator extends SharedTicks {
  declare readonly layout: Layout;
  readonly node: Readonly<Record<string, number>>;
  /** The structured-cloneable state to post to worker threads. */
  readonly state: SharedGeneratorState;

  private readonly ids: TickIds;

  constructor(opts: SharedGeneratorOptions);
  /** @internal used by {@link SharedGenerator.fromState}. */
  constructor(opts: SharedGeneratorOptions, attach: { buffer: SharedArrayBuffer; policy: ResolvedPolicy });
  constructor(opts: SharedGeneratorOptions, attach?: { buffer: SharedArrayBuffer; policy: ResolvedPolicy }) {
    if (opts === null || typeof opts !== 'object')
      throw badOption('options', opts, 'an object such as { layout, node }');
    if ((opts as GeneratorOptions).lease !== undefined) {
      throw badOption(
        'lease',
        'a lease',
        'no lease: a SharedGenerator cannot share a lease across threads; give the Generator of each process its own leased node',
      );
    }
    assertKnownOptions(opts, GENERATOR_OPTION_NAMES, 'SharedGenerator options');
    const layout = Layout.from(opts.layout);
    if (layout.timestampBits + layout.sequenceBits > 63) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `A SharedGenerator needs timestamp + sequence ≤ 63 bits; the ${layout.name} layout has ${layout.timestampBits} + ${layout.sequenceBits}. Narrow one of them by ${layout.timestampBits + layout.sequenceBits - 63} bit(s) or use a Generator per thread with distinct node IDs.`,
        { timestampBits: layout.timestampBits, sequenceBits: layout.sequenceBits },
      );
    }
    if (opts.node === undefined)
      throw new FlurryError(ErrorCode.NODE_OUT_OF_RANGE, 'A SharedGenerator needs its node ID: pass node.', {});
    const nodeBits = layout.nodeBits(opts.node);
    const policy = attach ? attach.policy : resolvePolicy(opts);
    const node = Object.freeze({ ...opts.node });
    const claim = { key: layout.idSpaceKey(nodeBits), describe: `${layout.name} node ${JSON.stringify(node)}` };
    super(layout, policy, opts.clock ?? systemClock, opts.onEvent, attach ? attach.buffer : claim, (tick) =>
      this.ids.setTick(tick),
    );
    this.node = node;
    this.ids = new TickIds(layout, nodeBits);
    this.state = Object.freeze({
      kind: 'flurry-shared-generator',
      layout: layout.toSpec(),
      node,
      policy,
      buffer: this.buffer,
    });
  }

  /** Attaches to a shared generator from its posted state (in a worker); `clock` and `onEvent` are per thread. */
  static fromState(state: SharedGeneratorState, opts: FromStateOptions = {}): SharedGenerator {
    const buffer = sharedBuffer(state, 'flurry-shared-generator', 'SharedGenerator', opts);
    return new SharedGenerator(
      { layout: state.layout, node: { ...state.node }, clock: opts.clock, onEvent: opts.onEvent },
      { buffer, policy: state.policy },
    );
  }

  /** The next ID: from this thread's run while the wall clock stays in its tick, else from a new run. */
  next(): bigint {
    return this.ids.next(this.advance(1));
  }

  /** The next ID as a decimal string. */
  nextString(): string {
    return this.next().toString();
  }

  /** `count` increasing IDs. */
  batch(count: number): bigint[] {
    checkCount(count);
    const target = new BigUint64Array(count);
    this.fill(target);
    return Array.from(target);
  }

  /** `count` increasing IDs as decimal strings. */
  batchStrings(count: number): string[] {
    return this.batch(count).map(String);
  }

  /** Writes `count` increasing IDs into `target` from `offset`; one compare-and-swap per run. */
  fill(target: BigUint64Array, offset = 0, count: number = target.length - offset): number {
    return this.ids.fill(this, target, offset, count);
  }
}
