/**
 * Generators that issue only under a valid node lease and follow it across re-acquisitions: docs/node-ids.md
 * ("The lease contract"); UUID nodes: docs/uuids.md ("UUID nodes and Snowflake nodes").
 */
import {
  GENERATOR_DEFAULTS,
  assertKnownOptions,
  Generator,
  Layout,
  optionNames,
  systemClock,
  UuidFormat,
  UuidGenerator,
  UUID_DEFAULTS,
  UUID_GENERATOR_OPTION_NAMES,
  type Clock,
  type GeneratorOptions,
  type LayoutSpec,
  type NodeLease,
  type PresetName,
  type UuidGeneratorOptions,
} from '@flurry/core';
import { optionError, registryError } from './errors.js';
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
  /** Generator policies: the registry's clock, `maxBorrowMs` ≤ the registry's `marginMs` (its default). */
  generator?: Omit<GeneratorOptions, 'layout' | 'node' | 'lease'>;
}

const LEASED_GENERATOR_OPTION_NAMES = optionNames<LeasedGeneratorOptions>({
  registry: true,
  layout: true,
  pin: true,
  generator: true,
});
const LEASED_GENERATOR_POLICY_NAMES = UUID_GENERATOR_OPTION_NAMES.filter(
  (k) => !['node', 'nodeBits', 'sequenceBits', 'lease'].includes(k),
);

const GENERATOR_METHODS = ['next', 'nextString', 'batch', 'fill'] as const;
const UUID_METHODS = ['next', 'nextBytes', 'nextBigInt', 'nextAs', 'batch', 'fill'] as const;

/** A generator bound to a registry lease: the {@link Generator} methods, `FLURRY_E_LEASE_EXPIRED` while not valid. */
export interface LeasedGenerator
  extends
    Pick<Generator, (typeof GENERATOR_METHODS)[number]>,
    Pick<Leased<Generator>, 'generator' | 'lease' | 'ready' | 'close'> {}

/** A generator on its registry lease (one generator for the lease's whole life), with the generator's `methods` bound. */
export class Leased<G extends { close(): void }> {
  private closed = false;

  constructor(
    readonly generator: G,
    readonly lease: ManagedLease,
    methods: readonly (keyof G & string)[],
    private readonly ownsLease = true,
  ) {
    // Bound, so a call costs what the generator's own does.
    for (const m of methods) Object.assign(this, { [m]: (generator[m] as () => unknown).bind(generator) });
  }

  /** True while the lease is valid (both deadlines ahead) and the generator open: for /readyz. */
  ready(): boolean {
    return !this.closed && this.lease.valid();
  }

  /** Closes the generator and releases the lease it owns (reporting the final high-water mark). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.generator.close();
    if (this.ownsLease) await this.lease.release();
  }
}

/** The policies a lease allows (`leasedGenerator`'s and `leasedUuidGenerator`'s `generator` option). */
type LeasePolicies = Pick<GeneratorOptions, 'clock' | 'maxBorrowMs' | 'highWaterWaitMs'>;

/** The policies under `registry`'s lease: its clock, and a borrow and a (blocking) floor wait within its margin. */
function leasePolicies<P extends LeasePolicies>(
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

/** Acquires a node ID for `layout` and builds on it once the clock has passed the floor; releases it on a failure. */
async function acquireLease<T>(
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

/** Acquires a node ID from `registry` and returns a generator that issues only under a valid lease. */
export async function leasedGenerator(opts: LeasedGeneratorOptions): Promise<LeasedGenerator> {
  assertKnownOptions(opts, LEASED_GENERATOR_OPTION_NAMES, 'leasedGenerator options');
  assertKnownOptions(opts?.generator, LEASED_GENERATOR_POLICY_NAMES, 'leasedGenerator options.generator');
  const { registry } = opts;
  const layout = Layout.from(opts.layout);
  const policies = leasePolicies('leasedGenerator', registry, opts.generator, layout.unitMs);
  return acquireLease(registry, layout, opts.pin ? { pin: opts.pin } : {}, {
    tick: layout,
    givenWaitMs: opts.generator?.highWaterWaitMs,
    build: (lease) =>
      new Leased(new Generator({ ...policies, layout, lease }), lease, GENERATOR_METHODS) as unknown as LeasedGenerator,
  });
}

/** Options of {@link leasedUuidGenerator}. */
export interface LeasedUuidGeneratorOptions {
  registry: Registry;
  /** Width of the node ID (default 16); every UUID generator and reader of the cluster must agree. */
  nodeBits?: number;
  /** Width of the sequence (default 22); every UUID generator and reader of the cluster must agree. */
  sequenceBits?: number;
  /** Lease a node ID of this Snowflake layout (in its namespace) instead of a UUID slot of the cluster. */
  layout?: Layout | LayoutSpec | PresetName;
  /** With `layout`: node fields fixed by configuration, e.g. `{ datacenter: 1 }`. */
  pin?: Record<string, number>;
  /** Lease in a namespace of the UUID generators' own, so node numbers may also be held by Snowflake generators. */
  shareNodeIds?: boolean;
  /** Generator policies, as for `leasedGenerator` (the clock must be the registry's). */
  generator?: Omit<UuidGeneratorOptions, 'node' | 'lease' | 'nodeBits' | 'sequenceBits'>;
}

const LEASED_UUID_GENERATOR_OPTION_NAMES = optionNames<LeasedUuidGeneratorOptions>({
  registry: true,
  nodeBits: true,
  sequenceBits: true,
  layout: true,
  pin: true,
  shareNodeIds: true,
  generator: true,
});

/** A UUID generator bound to a registry lease: the {@link UuidGenerator} methods, `FLURRY_E_LEASE_EXPIRED` while not valid. */
export interface LeasedUuidGenerator
  extends
    Pick<UuidGenerator, (typeof UUID_METHODS)[number] | 'node'>,
    Pick<Leased<UuidGenerator>, 'generator' | 'lease' | 'ready' | 'close'> {}

type NodeOf = (node: Readonly<Record<string, number>>) => number;

/** `lease` with each claim's node as `{ node: nodeOf(node) }`: one view per claim, with its deadlines. */
function uuidLease(lease: ManagedLease, nodeOf: NodeOf): NodeLease {
  let claim: NodeLease | undefined;
  let view: NodeLease | undefined;
  const forGenerator = (): NodeLease => {
    const c = lease.forGenerator();
    if (c !== claim) view = Object.create((claim = c), { node: { value: { node: nodeOf(c.node) } } }) as NodeLease;
    return view!;
  };
  const outer = { forGenerator, attach: (fn: () => number) => lease.attach(fn) };
  for (const key of ['node', 'deadline', 'wallDeadline', 'notBeforeMs'] as const)
    Object.defineProperty(outer, key, { get: () => forGenerator()[key] });
  return outer as unknown as NodeLease;
}

type Policies = NonNullable<LeasedUuidGeneratorOptions['generator']>;

/** A UUID generator of `format` on `lease`, whose node records `nodeOf` turns into the UUID node. */
function onLease(
  lease: ManagedLease,
  nodeOf: NodeOf,
  format: UuidFormat,
  policies: Policies,
  ownsLease = true,
): LeasedUuidGenerator {
  const { nodeBits, sequenceBits } = format;
  const gen = new UuidGenerator({ ...policies, nodeBits, sequenceBits, lease: uuidLease(lease, nodeOf) });
  const leased = new Leased(gen, lease, UUID_METHODS, ownsLease);
  return Object.defineProperty(leased, 'node', { get: () => gen.node }) as unknown as LeasedUuidGenerator;
}

/** The layout's whole node value: its node fields in mixed radix, most significant first. */
function layoutNodeOf(layout: Layout): NodeOf {
  return (n) => layout.nodeFields.reduce((v, f) => v * 2 ** f.bits + (n[f.name] ?? 0), 0);
}

function checkNodeBits(layout: Layout, format: UuidFormat): void {
  const bits = layoutNodeBits(layout);
  if (bits > format.nodeBits) {
    throw registryError(
      'OPTION',
      `the ${layout.name} layout's node fields take ${bits} bits, more than nodeBits = ${format.nodeBits}: raise nodeBits to at least ${bits}`,
      { option: 'nodeBits', value: format.nodeBits, min: bits },
    );
  }
}

const layoutNodeBits = (layout: Layout): number => layout.nodeFields.reduce((s, f) => s + f.bits, 0);

/** Options of {@link uuidGeneratorOnLease}. */
export interface UuidOnLeaseOptions {
  /** The registry that granted the lease (its clock and margin bound the policies). */
  registry: Registry;
  /** The Snowflake layout the lease was granted for: the UUID holds its whole node value. */
  layout: Layout;
  /** Width of the UUID node ID: default the larger of 16 and the layout's node bits. */
  nodeBits?: number;
  /** Width of the sequence (default 22). */
  sequenceBits?: number;
  /** Generator policies, as for {@link leasedUuidGenerator}. */
  generator?: Policies;
}

/**
 * A UUID generator on a lease someone else holds (a Snowflake `leasedGenerator`'s): the same
 * deadlines, the layout's whole node value in every UUID, its mark added to the lease's.
 *
 * @example
 * ```ts
 * const lg = await leasedGenerator({ registry, layout: 'twitter', pin: { datacenter: 1 } });
 * const uuids = uuidGeneratorOnLease(lg.lease, { registry, layout: lg.generator.layout });
 * uuids.next(); // node = datacenter × 32 + worker
 * await uuids.close(); // then lg.close() releases the lease
 * ```
 */
export function uuidGeneratorOnLease(lease: ManagedLease, opts: UuidOnLeaseOptions): LeasedUuidGenerator {
  const format = UuidFormat.from({
    nodeBits: opts.nodeBits ?? Math.max(UUID_DEFAULTS.nodeBits, layoutNodeBits(opts.layout)),
    ...(opts.sequenceBits === undefined ? {} : { sequenceBits: opts.sequenceBits }),
  });
  checkNodeBits(opts.layout, format);
  const policies = leasePolicies('uuidGeneratorOnLease', opts.registry, opts.generator, 1);
  return onLease(lease, layoutNodeOf(opts.layout), format, policies, false);
}

/** Acquires a node ID from `registry` and returns a UUID generator that issues only under a valid lease. */
export async function leasedUuidGenerator(opts: LeasedUuidGeneratorOptions): Promise<LeasedUuidGenerator> {
  assertKnownOptions(opts, LEASED_UUID_GENERATOR_OPTION_NAMES, 'leasedUuidGenerator options');
  assertKnownOptions(opts?.generator, LEASED_GENERATOR_POLICY_NAMES, 'leasedUuidGenerator options.generator');
  const { registry } = opts;
  const policies = leasePolicies('leasedUuidGenerator', registry, opts.generator, 1);
  const format = UuidFormat.from(opts);
  if (opts.layout !== undefined && opts.shareNodeIds)
    throw optionError('shareNodeIds', 'pass either layout (lease that layout’s node IDs) or shareNodeIds, not both');
  if (opts.pin !== undefined && opts.layout === undefined)
    throw optionError('pin', 'pin needs layout: a UUID slot of the cluster has no node fields to pin');
  const layout = opts.layout === undefined ? undefined : Layout.from(opts.layout);
  if (layout) checkNodeBits(layout, format);
  const nodeField = { name: 'node', bits: format.nodeBits };
  const fields = opts.shareNodeIds ? [{ name: 'uuid', bits: 1 }, nodeField] : [nodeField];
  const uuidSlots = { name: 'uuidv7', nodeFields: fields, epochMs: 0, unitMs: 1 };
  const pin = layout ? opts.pin : opts.shareNodeIds ? { uuid: 1 } : undefined;
  return acquireLease(registry, layout ?? uuidSlots, pin ? { pin } : {}, {
    tick: { epochMs: 0, unitMs: 1 },
    givenWaitMs: opts.generator?.highWaterWaitMs,
    build: (lease) => onLease(lease, layout ? layoutNodeOf(layout) : (n) => n.node, format, policies),
  });
}
