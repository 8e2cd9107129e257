/**
 * `leasedUuidGenerator()`: {@link leasedGenerator} for UUIDv7, on its mechanism. Where the node
 * ID comes from (a UUID slot of the cluster, a Snowflake layout's node, or `shareNodeIds`):
 * docs/uuids.md ("UUID nodes and Snowflake nodes").
 */
import {
  assertKnownOptions,
  Layout,
  optionNames,
  UuidFormat,
  UuidGenerator,
  UUID_DEFAULTS,
  type LayoutSpec,
  type NodeLease,
  type PresetName,
  type UuidForm,
  type UuidGeneratorOptions,
  type UuidTextForm,
} from '@flurry/core';
import { registryError } from './errors.js';
import type { ManagedLease, Registry } from './lease-types.js';
import { LEASED_GENERATOR_POLICY_NAMES, Leased, acquireLease, leasePolicies } from './leased-generator.js';

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

/** The keys of {@link LeasedUuidGeneratorOptions} (any other: `FLURRY_E_UNKNOWN_OPTION`). */
export const LEASED_UUID_GENERATOR_OPTION_NAMES = optionNames<LeasedUuidGeneratorOptions>({
  registry: true,
  nodeBits: true,
  sequenceBits: true,
  layout: true,
  pin: true,
  shareNodeIds: true,
  generator: true,
});

/**
 * A UUID generator bound to a registry lease: the {@link UuidGenerator} methods, which
 * throw `FLURRY_E_LEASE_EXPIRED` while the lease is not valid.
 */
export interface LeasedUuidGenerator {
  /** The next UUID, canonical. */
  next(): string;
  /** The next UUID as 16 bytes. */
  nextBytes(): Uint8Array;
  /** The next UUID as a 128-bit bigint. */
  nextBigInt(): bigint;
  /** The next UUID in `form`. */
  nextAs(form: UuidForm): string | Uint8Array | bigint;
  /** `n` increasing UUIDs, canonical strings. */
  batch(n: number, form?: UuidTextForm): string[];
  /** Writes `n` increasing UUIDs (16 bytes each) into `buf` from UUID index `o`. */
  fill(buf: Uint8Array, o?: number, n?: number): number;
  /** The core generator: one for the lease's whole life (it follows re-acquisitions). */
  readonly generator: UuidGenerator;
  /** The managed lease (events `'lost'`, `'reacquired'`, …). */
  readonly lease: ManagedLease;
  /** The node ID in the UUIDs of the lease's current claim. */
  readonly node: number;
  /** True while the lease is valid and the generator open. */
  ready(): boolean;
  /** Closes the generator and releases the lease (reporting the final high-water mark). */
  close(): Promise<void>;
}

/** How a lease's node record becomes the UUID node. */
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

class LeasedUuids extends Leased<UuidGenerator> implements LeasedUuidGenerator {
  get node(): number {
    return this.generator.node;
  }

  next(): string {
    return this.generator.next();
  }

  nextBytes(): Uint8Array {
    return this.generator.nextBytes();
  }

  nextBigInt(): bigint {
    return this.generator.nextBigInt();
  }

  nextAs(form: UuidForm): string | Uint8Array | bigint {
    return this.generator.nextAs(form);
  }

  batch(n: number, form?: UuidTextForm): string[] {
    return this.generator.batch(n, form);
  }

  fill(buf: Uint8Array, o?: number, n?: number): number {
    return this.generator.fill(buf, o, n);
  }
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
  return new LeasedUuids(gen, lease, ownsLease);
}

/** The layout's whole node value, its node fields in mixed radix (most significant first). */
function layoutNodeOf(layout: Layout): NodeOf {
  return (n) => layout.nodeFields.reduce((v, f) => v * 2 ** f.bits + (n[f.name] ?? 0), 0);
}

/** Refuses a UUID node narrower than the layout's whole node value. */
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

/** The node bits of a Snowflake layout (the width its whole node value needs). */
function layoutNodeBits(layout: Layout): number {
  return layout.nodeFields.reduce((s, f) => s + f.bits, 0);
}

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
  return onLease(
    lease,
    layoutNodeOf(opts.layout),
    format,
    leasePolicies('uuidGeneratorOnLease', opts.registry, opts.generator, 1),
    false,
  );
}

/**
 * Acquires a node ID from `registry` and returns a UUID generator that issues only under a
 * valid lease, as {@link leasedGenerator} does.
 *
 * @example
 * ```ts
 * const uuids = await leasedUuidGenerator({ registry, nodeBits: 16 });
 * ```
 */
export async function leasedUuidGenerator(opts: LeasedUuidGeneratorOptions): Promise<LeasedUuidGenerator> {
  assertKnownOptions(opts, LEASED_UUID_GENERATOR_OPTION_NAMES, 'leasedUuidGenerator options');
  assertKnownOptions(opts?.generator, LEASED_GENERATOR_POLICY_NAMES, 'leasedUuidGenerator options.generator');
  const { registry } = opts;
  const policies = leasePolicies('leasedUuidGenerator', registry, opts.generator, 1);
  const format = UuidFormat.from(opts);
  if (opts.layout !== undefined && opts.shareNodeIds)
    throw registryError('OPTION', 'pass either layout (lease that layout’s node IDs) or shareNodeIds, not both', {
      option: 'shareNodeIds',
    });
  if (opts.pin !== undefined && opts.layout === undefined)
    throw registryError('OPTION', 'pin needs layout: a UUID slot of the cluster has no node fields to pin', {
      option: 'pin',
    });
  const leaseOpts = { tick: { epochMs: 0, unitMs: 1 }, givenWaitMs: opts.generator?.highWaterWaitMs };
  if (opts.layout !== undefined) {
    const layout = Layout.from(opts.layout);
    checkNodeBits(layout, format);
    return acquireLease(registry, layout, opts.pin ? { pin: opts.pin } : {}, {
      ...leaseOpts,
      build: (lease) => onLease(lease, layoutNodeOf(layout), format, policies),
    });
  }
  const nodeField = { name: 'node', bits: format.nodeBits };
  const fields = opts.shareNodeIds ? [{ name: 'uuid', bits: 1 }, nodeField] : [nodeField];
  const slots = { name: 'uuidv7', nodeFields: fields, epochMs: 0, unitMs: 1 } as Parameters<Registry['acquire']>[0];
  return acquireLease(registry, slots, opts.shareNodeIds ? { pin: { uuid: 1 } } : {}, {
    ...leaseOpts,
    build: (lease) => onLease(lease, (n) => n.node, format, policies),
  });
}
