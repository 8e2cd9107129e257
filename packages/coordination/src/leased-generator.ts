/**
 * `leasedGenerator()`: a core {@link Generator} that always issues under a valid node
 * lease. It acquires a node ID from a registry, builds the generator on it, and after the
 * lease is lost and re-acquired (possibly as another node) builds a fresh generator
 * (closing the old one) whose floor is the higher of the new lease's `notBeforeMs` and
 * everything this process already issued, so it never goes below its own past IDs.
 *
 * Between the loss and the re-acquisition every call throws `FLURRY_E_LEASE_EXPIRED`
 * (the service reports not-ready through `ready()`).
 *
 * Sequence borrowing (`onExhausted: 'borrow'`, and the `tolerate` clock policy) issues
 * ticks ahead of the wall clock that are reported only at the next renewal. The next
 * holder's floor after a crash covers at most `2 × marginMs` beyond the dead holder's
 * deadline, so `maxBorrowMs` defaults to `min(1000, marginMs)` here and a larger value is
 * refused with `FLURRY_E_REGISTRY_OPTION`.
 *
 * @example
 * ```ts
 * const registry = await openRegistry('file:', { cluster: 'orders' });
 * const ids = await leasedGenerator({ registry, layout: 'twitter' });
 * ids.next();            // 1794…n
 * ids.ready();           // true while the lease is valid
 * await ids.close();     // releases the node ID with the final high-water mark
 * await registry.close();
 * ```
 */
import { ErrorCode, FlurryError, GENERATOR_DEFAULTS, Generator, Layout, ManualClock, systemClock, type Clock, type GeneratorOptions, type LayoutSpec, type PresetName } from '@flurry/core';
import { registryError } from './errors.js';
import type { ManagedLease, Registry } from './lease-manager.js';

/**
 * Options of {@link leasedGenerator}.
 *
 * @example
 * ```ts
 * await leasedGenerator({ registry, layout: 'twitter', pin: { datacenter: 1 }, generator: { onExhausted: 'borrow' } });
 * ```
 *
 * @example
 * ```ts
 * const ids: LeasedGenerator = await leasedGenerator({ registry, layout: 'leaf' });
 * ```
 */
export interface LeasedGeneratorOptions {
  registry: Registry;
  layout: Layout | LayoutSpec | PresetName;
  /** Node fields fixed by configuration, e.g. `{ datacenter: 1 }`. */
  pin?: Record<string, number>;
  /** Generator policies; the clock must be the registry's (it is by default). */
  generator?: Omit<GeneratorOptions, 'layout' | 'node' | 'lease'>;
}

/** A generator bound to a registry lease (see the module notes). */
export interface LeasedGenerator {
  next(): bigint;
  nextString(): string;
  batch(n: number): bigint[];
  fill(a: BigUint64Array, o?: number, n?: number): number;
  /** The current core generator (replaced after a re-acquisition). */
  readonly generator: Generator;
  readonly lease: ManagedLease;
  /** True while the lease is valid and the generator open: for /readyz. */
  ready(): boolean;
  /** Closes the generator and releases the lease (reporting the final high-water mark). */
  close(): Promise<void>;
}

/**
 * Waits (asynchronously, so renewals keep running) until the clock passes `floorMs`;
 * throws `FLURRY_E_CLOCK_BEHIND_HIGH_WATER` at once if that would take longer than
 * `maxWaitMs`.
 *
 * @example
 * ```ts
 * await waitForFloor(systemClock, lease.notBeforeMs, 5000);
 * ```
 */
export async function waitForFloor(clock: Clock, floorMs: number, maxWaitMs: number): Promise<void> {
  const behind = floorMs - clock.now() + 1;
  if (behind <= 0) return;
  if (behind > maxWaitMs) {
    throw new FlurryError(
      ErrorCode.CLOCK_BEHIND_HIGH_WATER,
      `the clock (${new Date(clock.now()).toISOString()}) is ${Math.ceil(behind)} ms behind this node ID's high-water mark (${new Date(floorMs).toISOString()}), ` +
        `more than the ${maxWaitMs} ms allowed (highWaterWaitMs): a previous holder issued IDs up to then. Fix the clock (NTP) or raise highWaterWaitMs.`,
      { behindMs: Math.ceil(behind), notBeforeMs: floorMs, highWaterWaitMs: maxWaitMs },
    );
  }
  if (clock instanceof ManualClock) {
    clock.sleep(Math.ceil(behind));
    return;
  }
  const until = performance.now() + maxWaitMs + 50;
  while (clock.now() <= floorMs) {
    if (performance.now() > until) {
      throw new FlurryError(ErrorCode.CLOCK_BEHIND_HIGH_WATER, `the clock did not pass this node ID's high-water mark (${new Date(floorMs).toISOString()}) within ${maxWaitMs} ms`, { notBeforeMs: floorMs, highWaterWaitMs: maxWaitMs });
    }
    await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, floorMs - clock.now() + 1))));
  }
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
 * valid lease (see the module notes). Waits asynchronously for the clock to pass the
 * previous holder's floor, up to the registry's `highWaterWaitMs`.
 *
 * @example
 * ```ts
 * const ids = await leasedGenerator({ registry, layout: 'twitter', pin: { datacenter: 2 } });
 * ```
 */
export async function leasedGenerator(opts: LeasedGeneratorOptions): Promise<LeasedGenerator> {
  const { registry } = opts;
  if (!registry || typeof registry.acquire !== 'function') throw registryError('OPTION', 'leasedGenerator() needs { registry } from openRegistry()', {});
  const layout = Layout.from(opts.layout);
  const clock = registry.clock ?? systemClock;
  const genOpts = { ...(opts.generator ?? {}) };
  if (genOpts.clock !== undefined && genOpts.clock !== clock) {
    throw registryError('OPTION', 'generator.clock must be the registry\'s clock (deadlines and IDs must read the same clock): pass the clock to openRegistry() instead', { option: 'generator.clock' });
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
        'Lower maxBorrowMs or raise the registry\'s marginMs (and ttlMs).',
      { option: 'generator.maxBorrowMs', value: genOpts.maxBorrowMs, max: marginMs },
    );
  }
  const waitMs = registry.options?.highWaterWaitMs ?? 5000;
  if (genOpts.highWaterWaitMs === undefined) genOpts.highWaterWaitMs = waitMs;
  const lease = await registry.acquire(layout, opts.pin ? { pin: opts.pin } : {});
  try {
    await waitForFloor(clock, lease.notBeforeMs, genOpts.highWaterWaitMs);
    return new Leased(lease, layout, genOpts);
  } catch (e) {
    await lease.release().catch(() => undefined);
    throw e;
  }
}
