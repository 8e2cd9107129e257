/**
 * `leasedGenerator()`: a core {@link Generator} that always issues under a valid node
 * lease. It acquires a node ID from a registry and builds the generator on the lease,
 * which it follows: after the lease is lost and re-acquired (possibly as another node) the
 * same generator takes the new claim at a new tick, above the new floor and above
 * everything it issued (see `NodeLease` in core). Between the loss and the
 * re-acquisition every call throws `FLURRY_E_LEASE_EXPIRED` (the service reports
 * not-ready through `ready()`); fencing and its two deadlines:
 * [docs/node-ids.md](../../../docs/node-ids.md#the-lease-contract).
 *
 * The wait for the clock to pass the previous holder's floor happens in the registry's
 * `acquire()` and re-acquisition, asynchronously (the event loop and renewals keep
 * running), so `next()` does not sleep for it (its own check at each new tick remains the
 * last line of defence).
 *
 * Sequence borrowing (`onExhausted: 'borrow'`, and the `tolerate` clock policy) issues
 * ticks ahead of the wall clock that are reported only at the next renewal. The next
 * holder's floor after a crash covers at most `2 × marginMs` beyond the dead holder's
 * deadline, so `maxBorrowMs` defaults to `min(1000, marginMs)` here and a larger value is
 * refused with `FLURRY_E_REGISTRY_OPTION`. The same holds for `leasedUuidGenerator()`,
 * which shares this module's mechanism ({@link leasePolicies}, {@link acquireLease},
 * {@link Leased}).
 */
import {
  GENERATOR_DEFAULTS,
  assertKnownOptions,
  Generator,
  Layout,
  optionNames,
  systemClock,
  type Clock,
  type GeneratorOptions,
  type LayoutSpec,
  type PresetName,
} from '@flurry/core';
import { registryError } from './errors.js';
import { waitForFloor, type TickGrid } from './floor.js';
import type { ManagedLease, Registry } from './lease-types.js';
import type { AcquireOptions } from './options.js';
import type { LayoutLike } from './slot-map.js';

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
 * {@link Generator} methods, which throw `FLURRY_E_LEASE_EXPIRED` while the lease is not
 * valid (either fencing deadline passed, or lost and not yet re-acquired).
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
  /** The core generator: one for the lease's whole life (it follows re-acquisitions). */
  readonly generator: Generator;
  /** The managed lease (events `'lost'`, `'reacquired'`, …; `wallDeadline`, `deadline`). */
  readonly lease: ManagedLease;
  /** True while the lease is valid (both deadlines ahead) and the generator open: for /readyz. */
  ready(): boolean;
  /** Closes the generator and releases the lease (reporting the final high-water mark). */
  close(): Promise<void>;
}

/** A generator on its registry lease: `ready()`, and `close()` (the generator, then the lease it owns). */
export class Leased<G extends { close(): void }> {
  private closed = false;

  constructor(
    readonly generator: G,
    readonly lease: ManagedLease,
    private readonly ownsLease = true,
  ) {}

  ready(): boolean {
    return !this.closed && this.lease.valid();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.generator.close();
    if (this.ownsLease) await this.lease.release();
  }
}

class LeasedIds extends Leased<Generator> implements LeasedGenerator {
  next(): bigint {
    return this.generator.next();
  }

  nextString(): string {
    return this.generator.nextString();
  }

  batch(n: number): bigint[] {
    return this.generator.batch(n);
  }

  fill(a: BigUint64Array, o?: number, n?: number): number {
    return this.generator.fill(a, o, n);
  }
}

/** The policies a lease allows (`leasedGenerator`'s and `leasedUuidGenerator`'s `generator` option). */
type LeasePolicies = Pick<GeneratorOptions, 'clock' | 'maxBorrowMs' | 'highWaterWaitMs'>;

/**
 * The generator policies under `registry`'s lease (`who` names the caller of a missing
 * registry in the error): its clock (another is refused),
 * `maxBorrowMs` within its margin (see the module notes) and `highWaterWaitMs`, the
 * generator's synchronous last-resort wait for the floor: it blocks the event loop,
 * renewals included, so it is bounded by the margin (a block that short cannot cost the
 * lease), but is at least one tick of `unitMs` (the first tick above the floor may start
 * up to a unit after it: sonyflake 10 ms).
 */
export function leasePolicies<P extends LeasePolicies>(
  who: string,
  registry: Registry,
  given: P | undefined,
  unitMs: number,
): P & { clock: Clock } {
  if (!registry || typeof registry.acquire !== 'function')
    throw registryError('OPTION', `${who}() needs { registry } from openRegistry()`, {});
  const clock = registry.clock ?? systemClock;
  const policies = { ...(given ?? ({} as P)) };
  if (policies.clock !== undefined && policies.clock !== clock) {
    throw registryError(
      'OPTION',
      "generator.clock must be the registry's clock (deadlines and IDs must read the same clock): pass the clock to openRegistry() instead",
      { option: 'generator.clock' },
    );
  }
  const marginMs = registry.options?.marginMs ?? 1000;
  if (policies.maxBorrowMs === undefined) {
    policies.maxBorrowMs = Math.min(GENERATOR_DEFAULTS.maxBorrowMs, marginMs);
  } else if (policies.maxBorrowMs > marginMs) {
    throw registryError(
      'OPTION',
      `generator.maxBorrowMs ${policies.maxBorrowMs} exceeds the lease margin of ${marginMs} ms: ticks borrowed further ahead than the margin could be re-issued by the next holder of this node ID after a crash. ` +
        "Lower maxBorrowMs or raise the registry's marginMs (and ttlMs).",
      { option: 'generator.maxBorrowMs', value: policies.maxBorrowMs, max: marginMs },
    );
  }
  if (policies.highWaterWaitMs === undefined)
    policies.highWaterWaitMs = Math.max(unitMs, Math.min(GENERATOR_DEFAULTS.highWaterWaitMs, marginMs));
  return { ...policies, clock };
}

/**
 * Acquires a node ID for `layout` and builds the generator on it once the clock has passed
 * the previous holder's floor: the registry's `acquire()` waits for it asynchronously, up
 * to its `highWaterWaitMs` (`FLURRY_E_CLOCK_BEHIND_HIGH_WATER` beyond); for a
 * {@link Registry} implementation that does not, this waits (also asynchronously) itself.
 * Releases the lease when that or `build` fails.
 */
export async function acquireLease<T>(
  registry: Registry,
  layout: LayoutLike,
  acquire: AcquireOptions,
  opts: { tick: TickGrid; givenWaitMs: number | undefined; build: (lease: ManagedLease) => T },
): Promise<T> {
  const lease = await registry.acquire(layout, acquire);
  try {
    const waitMs = registry.options?.highWaterWaitMs ?? opts.givenWaitMs ?? 5000;
    await waitForFloor(registry.clock ?? systemClock, lease.notBeforeMs, waitMs, { tick: opts.tick });
    return opts.build(lease);
  } catch (e) {
    await lease.release().catch(() => undefined);
    throw e;
  }
}

/**
 * Acquires a node ID from `registry` and returns a generator that issues only under a
 * valid lease (see the module notes and {@link acquireLease}).
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
  const layout = Layout.from(opts.layout);
  const policies = leasePolicies('leasedGenerator', registry, opts.generator, layout.unitMs);
  return acquireLease(registry, layout, opts.pin ? { pin: opts.pin } : {}, {
    tick: layout,
    givenWaitMs: opts.generator?.highWaterWaitMs,
    build: (lease) => new LeasedIds(new Generator({ ...policies, layout, lease }), lease),
  });
}
