/**
 * `leasedGenerator()`: a core {@link Generator} that issues only under a valid node lease and
 * follows it across re-acquisitions (`FLURRY_E_LEASE_EXPIRED` in between). Fencing, the two
 * deadlines, the floor wait and why `maxBorrowMs` is bounded by the margin: docs/node-ids.md
 * ("The lease contract"). `leasedUuidGenerator()` shares this module's mechanism.
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
   * Generator policies; the clock must be the registry's. `maxBorrowMs` defaults to (and may
   * not exceed) the registry's `marginMs`; `highWaterWaitMs` bounds only the generator's
   * synchronous last-resort wait (default `max(layout unit, min(1000, marginMs))`).
   */
  generator?: Omit<GeneratorOptions, 'layout' | 'node' | 'lease'>;
}

/** The keys of {@link LeasedGeneratorOptions} (a misspelt `pin` is refused, not ignored). */
export const LEASED_GENERATOR_OPTION_NAMES = optionNames<LeasedGeneratorOptions>({
  registry: true,
  layout: true,
  pin: true,
  generator: true,
});
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

/** A generator bound to a registry lease: the {@link Generator} methods, `FLURRY_E_LEASE_EXPIRED` while not valid. */
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
 * The generator policies under `registry`'s lease: its clock, `maxBorrowMs` within its margin,
 * and a synchronous floor wait bounded by the margin (it blocks renewals) but at least one
 * `unitMs` tick.
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
 * Acquires a node ID for `layout` and builds on it once the clock has passed the floor
 * (waiting itself for a {@link Registry} whose `acquire()` does not); releases the lease when
 * that or `build` fails.
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
 * Acquires a node ID from `registry` and returns a generator that issues only under a valid lease.
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
