/**
 * `leasedGenerator()`: a core {@link Generator} that always issues under a valid node
 * lease. It acquires a node ID from a registry, builds the generator on it, and after the
 * lease is lost and re-acquired (possibly as another node) builds a fresh generator
 * (closing the old one) whose floor is the higher of the new lease's `notBeforeMs` and
 * everything this process already issued, so it never goes below its own past IDs.
 *
 * Between the loss and the re-acquisition every call throws `FLURRY_E_LEASE_EXPIRED`
 * (the service reports not-ready through `ready()`). The lease is fenced on two clocks
 * (see `lease.ts`): its monotonic deadline (a paused process) and its wall-clock
 * deadline (a suspended machine, whose monotonic clock stood still), so after a laptop
 * lid or VM pause longer than the TTL the first call refuses instead of issuing under a
 * node ID the registry may have given away.
 *
 * The wait for the clock to pass the previous holder's floor happens in the registry's
 * `acquire()` and re-acquisition, asynchronously (the event loop and renewals keep
 * running); the generators built here find the floor already passed, so `next()` never
 * sleeps for it (its own check at each new tick remains the last line of defence).
 *
 * Sequence borrowing (`onExhausted: 'borrow'`, and the `tolerate` clock policy) issues
 * ticks ahead of the wall clock that are reported only at the next renewal. The next
 * holder's floor after a crash covers at most `2 × marginMs` beyond the dead holder's
 * deadline, so `maxBorrowMs` defaults to `min(1000, marginMs)` here and a larger value is
 * refused with `FLURRY_E_REGISTRY_OPTION`.
 */
import {
  GENERATOR_DEFAULTS,
  assertKnownOptions,
  Generator,
  Layout,
  optionNames,
  systemClock,
  type GeneratorOptions,
  type LayoutSpec,
  type PresetName,
} from '@flurry/core';
import { registryError } from './errors.js';
import { waitForFloor } from './floor.js';
import type { ManagedLease, Registry } from './lease-types.js';

/** Options of {@link leasedGenerator}. */
export interface LeasedGeneratorOptions {
  registry: Registry;
  layout: Layout | LayoutSpec | PresetName;
  /** Node fields fixed by configuration, e.g. `{ datacenter: 1 }`. */
  pin?: Record<string, number>;
  /**
   * Generator policies; the clock must be the registry's (it is by default).
   * `maxBorrowMs` defaults to (and may not exceed) the registry's `marginMs`;
   * `highWaterWaitMs` bounds only the generator's synchronous last-resort wait for the
   * floor (default `max(layout unit, min(1000, marginMs))`: the floor's tick may start up
   * to one unit after it): the wait at (re-)acquisition is the registry's, asynchronous,
   * bounded by the registry's `highWaterWaitMs`.
   */
  generator?: Omit<GeneratorOptions, 'layout' | 'node' | 'lease'>;
}

/**
 * The keys of {@link LeasedGeneratorOptions} and of its `generator` policies: any other key (`pins`) is refused
 * with `FLURRY_E_UNKNOWN_OPTION` naming the closest valid one (a misspelt `pin` would lease another node ID).
 */
export const LEASED_GENERATOR_OPTION_NAMES = optionNames<LeasedGeneratorOptions>({
  registry: true,
  layout: true,
  pin: true,
  generator: true,
});
/** @example `LEASED_GENERATOR_POLICY_NAMES.includes('onExhausted') // true` */
export const LEASED_GENERATOR_POLICY_NAMES = optionNames<NonNullable<LeasedGeneratorOptions['generator']>>({
  clock: true,
  onExhausted: true,
  onClockBackwards: true,
  maxBorrowMs: true,
  maxBackwardsWaitMs: true,
  highWaterWaitMs: true,
  sequenceStart: true,
  onEvent: true,
});

/**
 * A generator bound to a registry lease (see the module notes): the core
 * {@link Generator} methods, forwarded to the generator of the current claim, which
 * throw `FLURRY_E_LEASE_EXPIRED` while the lease is not valid (either fencing deadline
 * passed, or lost and not yet re-acquired).
 */
export interface LeasedGenerator {
  /** The next ID (see `Generator.next`). */
  next(): bigint;
  /** The next ID as a decimal string. */
  nextString(): string;
  /** `n` increasing IDs. */
  batch(n: number): bigint[];
  /** Writes `n` increasing IDs into `a` from offset `o` (see `Generator.fill`). */
  fill(a: BigUint64Array, o?: number, n?: number): number;
  /** The current core generator (replaced after a re-acquisition). */
  readonly generator: Generator;
  /** The managed lease (events `'lost'`, `'reacquired'`, …; `wallDeadline`, `deadline`). */
  readonly lease: ManagedLease;
  /** True while the lease is valid (both deadlines ahead) and the generator open: for /readyz. */
  ready(): boolean;
  /** Closes the generator and releases the lease (reporting the final high-water mark). */
  close(): Promise<void>;
}

class Leased implements LeasedGenerator {
  private gen: Generator;
  private epoch: number;
  private highest = 0;
  private closed = false;

  constructor(
    readonly lease: ManagedLease,
    private readonly layout: Layout,
    private readonly genOpts: Omit<GeneratorOptions, 'layout' | 'node' | 'lease'>,
  ) {
    this.epoch = lease.epoch;
    this.gen = new Generator({ ...genOpts, layout, lease: lease.forGenerator() });
    lease.attach(() => Math.max(this.highest, this.gen.lastIssuedUnixMs));
    lease.on('reacquired', () => {
      try {
        if (!this.closed) this.rebuild();
      } catch {
        /* retried on the next call, which reports the error */
      }
    });
  }

  private rebuild(): void {
    const old = this.gen;
    this.highest = Math.max(this.highest, old.lastIssuedUnixMs);
    old.close();
    const epoch = this.lease.epoch;
    this.gen = new Generator({ ...this.genOpts, layout: this.layout, lease: this.lease.forGenerator(this.highest) });
    this.epoch = epoch;
  }

  private current(): Generator {
    if (this.epoch !== this.lease.epoch && !this.closed) this.rebuild();
    return this.gen;
  }

  get generator(): Generator {
    return this.current();
  }

  next(): bigint {
    return this.current().next();
  }

  nextString(): string {
    return this.current().nextString();
  }

  batch(n: number): bigint[] {
    return this.current().batch(n);
  }

  fill(a: BigUint64Array, o?: number, n?: number): number {
    return this.current().fill(a, o, n);
  }

  ready(): boolean {
    return !this.closed && this.lease.valid();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.highest = Math.max(this.highest, this.gen.lastIssuedUnixMs);
    this.gen.close();
    await this.lease.release();
  }
}

/**
 * Acquires a node ID from `registry` and returns a generator that issues only under a
 * valid lease (see the module notes). Resolves once the clock has passed the previous
 * holder's floor: the registry's `acquire()` waits for it asynchronously, up to its
 * `highWaterWaitMs` (`FLURRY_E_CLOCK_BEHIND_HIGH_WATER` beyond, saying how far behind the
 * clock is); for a {@link Registry} implementation that does not, this function waits
 * (also asynchronously) itself.
 *
 * @example
 * ```ts
 * const ids = await leasedGenerator({ registry, layout: 'twitter', pin: { datacenter: 2 } });
 * ```
 */
export async function leasedGenerator(opts: LeasedGeneratorOptions): Promise<LeasedGenerator> {
  assertKnownOptions(opts, LEASED_GENERATOR_OPTION_NAMES, 'leasedGenerator options');
  assertKnownOptions(opts?.generator, LEASED_GENERATOR_POLICY_NAMES, 'leasedGenerator options.generator');
  const { registry } = opts;
  if (!registry || typeof registry.acquire !== 'function')
    throw registryError('OPTION', 'leasedGenerator() needs { registry } from openRegistry()', {});
  const layout = Layout.from(opts.layout);
  const clock = registry.clock ?? systemClock;
  const genOpts = { ...(opts.generator ?? {}) };
  if (genOpts.clock !== undefined && genOpts.clock !== clock) {
    throw registryError(
      'OPTION',
      "generator.clock must be the registry's clock (deadlines and IDs must read the same clock): pass the clock to openRegistry() instead",
      { option: 'generator.clock' },
    );
  }
  genOpts.clock = clock;
  // Borrowed ticks run ahead of the wall clock and are not reported until the next
  // renewal: a successor's floor (last mark + ttl + margin) covers what a dead holder
  // issued up to its deadline plus up to 2 × margin more, so borrowing is bounded by the
  // margin (leaving the other margin for clock rate differences and small steps).
  const marginMs = registry.options?.marginMs ?? 1000;
  const borrowCap = Math.min(GENERATOR_DEFAULTS.maxBorrowMs, marginMs);
  if (genOpts.maxBorrowMs === undefined) {
    genOpts.maxBorrowMs = borrowCap;
  } else if (genOpts.maxBorrowMs > marginMs) {
    throw registryError(
      'OPTION',
      `generator.maxBorrowMs ${genOpts.maxBorrowMs} exceeds the lease margin of ${marginMs} ms: ticks borrowed further ahead than the margin could be re-issued by the next holder of this node ID after a crash. ` +
        "Lower maxBorrowMs or raise the registry's marginMs (and ttlMs).",
      { option: 'generator.maxBorrowMs', value: genOpts.maxBorrowMs, max: marginMs },
    );
  }
  // The wait for the previous holder's floor is asynchronous and happens in acquire()
  // (bounded by the registry's highWaterWaitMs). The generator's own wait is synchronous
  // (it blocks the event loop, renewals included), so it is only the last line of
  // defence — e.g. a wall clock stepped back below the floor after acquisition — and
  // bounded by the margin: a block that short cannot cost the lease. It is at least one
  // tick of the layout, though: the first tick above the floor may start up to a unit
  // after it (sonyflake: 10 ms), and a bound below that would refuse instead of waiting.
  const waitMs = registry.options?.highWaterWaitMs ?? genOpts.highWaterWaitMs ?? 5000;
  if (genOpts.highWaterWaitMs === undefined)
    genOpts.highWaterWaitMs = Math.max(layout.unitMs, Math.min(GENERATOR_DEFAULTS.highWaterWaitMs, marginMs));
  const lease = await registry.acquire(layout, opts.pin ? { pin: opts.pin } : {});
  try {
    // A no-op after a LeaseRegistry's acquire() (which waits up to the layout's first
    // tick above the floor); waits for other Registry implementations.
    await waitForFloor(clock, lease.notBeforeMs, waitMs, { tick: layout });
    return new Leased(lease, layout, genOpts);
  } catch (e) {
    await lease.release().catch(() => undefined);
    throw e;
  }
}
