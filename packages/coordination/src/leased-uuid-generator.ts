/**
 * `leasedUuidGenerator()`: a core {@link UuidGenerator} that always issues under a valid
 * node lease — {@link leasedGenerator} for UUIDv7. It acquires a node ID from any registry,
 * builds the generator on it and, after the lease is lost and re-acquired (maybe as
 * another node), builds a fresh one whose floor is the higher of the new lease's
 * `notBeforeMs` and everything this process already issued.
 *
 * Where the node ID comes from (docs/uuids.md, "UUID nodes and Snowflake nodes"):
 * - default: slot `n` of `2^nodeBits` in the cluster's namespace, the one Snowflake layouts
 *   without pinned fields lease in, so a UUID node and such a Snowflake node never hold
 *   the same node ID at once;
 * - `layout` (with `pin`): a node ID of that Snowflake layout, in its namespace, exactly as
 *   its generators lease one; the UUID holds the layout's whole node value;
 * - `shareNodeIds: true`: a namespace of the UUID generators' own (`cluster/uuid-1`): node
 *   numbers may then be held by a UUID and a Snowflake generator at once, as the user allowed.
 */
import {
  GENERATOR_DEFAULTS,
  assertKnownOptions,
  Layout,
  optionNames,
  systemClock,
  UuidFormat,
  UuidGenerator,
  UUID_DEFAULTS,
  type Clock,
  type LayoutSpec,
  type NodeLease,
  type PresetName,
  type UuidForm,
  type UuidGeneratorOptions,
  type UuidTextForm,
} from '@flurry/core';
import { registryError } from './errors.js';
import { waitForFloor } from './floor.js';
import type { ManagedLease, Registry } from './lease-types.js';

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
const POLICY_NAMES = optionNames<NonNullable<LeasedUuidGeneratorOptions['generator']>>({
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
 * A UUID generator bound to a registry lease: the {@link UuidGenerator} methods, forwarded
 * to the generator of the current claim, which throw `FLURRY_E_LEASE_EXPIRED` while the
 * lease is not valid.
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
  /** The current core generator (replaced after a re-acquisition). */
  readonly generator: UuidGenerator;
  /** The managed lease (events `'lost'`, `'reacquired'`, …). */
  readonly lease: ManagedLease;
  /** The node ID in the UUIDs of the current claim. */
  readonly node: number;
  /** True while the lease is valid and the generator open. */
  ready(): boolean;
  /** Closes the generator and releases the lease (reporting the final high-water mark). */
  close(): Promise<void>;
}

/** A lease view with the node as the UUID generator wants it: `{ node: n }`. */
function uuidLease(view: NodeLease, node: number): NodeLease {
  return {
    node: { node },
    get deadline() {
      return view.deadline;
    },
    get wallDeadline() {
      return view.wallDeadline;
    },
    get notBeforeMs() {
      return view.notBeforeMs;
    },
    attach: (fn) => view.attach(fn),
  };
}

class LeasedUuids implements LeasedUuidGenerator {
  private gen: UuidGenerator;
  private epoch: number;
  private highest = 0;
  private closed = false;

  constructor(
    readonly lease: ManagedLease,
    private readonly nodeOf: (n: Readonly<Record<string, number>>) => number,
    private readonly genOpts: Omit<UuidGeneratorOptions, 'node' | 'lease'>,
    private readonly ownsLease = true,
  ) {
    this.epoch = lease.epoch;
    this.gen = this.build(lease.forGenerator());
    lease.attach(() => Math.max(this.highest, this.gen.lastIssuedUnixMs));
    lease.on('reacquired', () => {
      try {
        if (!this.closed) this.rebuild();
      } catch {
        /* retried on the next call, which reports the error */
      }
    });
  }

  private build(view: NodeLease): UuidGenerator {
    return new UuidGenerator({ ...this.genOpts, lease: uuidLease(view, this.nodeOf(view.node)) });
  }

  private rebuild(): void {
    const old = this.gen;
    this.highest = Math.max(this.highest, old.lastIssuedUnixMs);
    old.close();
    const epoch = this.lease.epoch;
    this.gen = this.build(this.lease.forGenerator(this.highest));
    this.epoch = epoch;
  }

  private current(): UuidGenerator {
    if (this.epoch !== this.lease.epoch && !this.closed) this.rebuild();
    return this.gen;
  }

  get generator(): UuidGenerator {
    return this.current();
  }

  get node(): number {
    return this.current().node;
  }

  next(): string {
    return this.current().next();
  }

  nextBytes(): Uint8Array {
    return this.current().nextBytes();
  }

  nextBigInt(): bigint {
    return this.current().nextBigInt();
  }

  nextAs(form: UuidForm): string | Uint8Array | bigint {
    return this.current().nextAs(form);
  }

  batch(n: number, form?: UuidTextForm): string[] {
    return this.current().batch(n, form);
  }

  fill(buf: Uint8Array, o?: number, n?: number): number {
    return this.current().fill(buf, o, n);
  }

  ready(): boolean {
    return !this.closed && this.lease.valid();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.highest = Math.max(this.highest, this.gen.lastIssuedUnixMs);
    this.gen.close();
    if (this.ownsLease) await this.lease.release();
  }
}

type Policies = NonNullable<LeasedUuidGeneratorOptions['generator']>;

/** The generator policies under `registry`'s lease: its clock, maxBorrowMs within its margin. */
function policies(registry: Registry, given: Policies | undefined): Policies & { clock: Clock } {
  const clock = registry.clock ?? systemClock;
  const genOpts = { ...(given ?? {}) };
  if (genOpts.clock !== undefined && genOpts.clock !== clock) {
    throw registryError(
      'OPTION',
      "generator.clock must be the registry's clock (deadlines and UUIDs must read the same clock): pass the clock to openRegistry() instead",
      { option: 'generator.clock' },
    );
  }
  // Borrowed milliseconds are bounded by the lease margin, as in leasedGenerator (see there).
  const marginMs = registry.options?.marginMs ?? 1000;
  if (genOpts.maxBorrowMs === undefined) genOpts.maxBorrowMs = Math.min(GENERATOR_DEFAULTS.maxBorrowMs, marginMs);
  else if (genOpts.maxBorrowMs > marginMs) {
    throw registryError(
      'OPTION',
      `generator.maxBorrowMs ${genOpts.maxBorrowMs} exceeds the lease margin of ${marginMs} ms: milliseconds borrowed further ahead than the margin could be re-issued by the next holder of this node ID after a crash. Lower maxBorrowMs or raise the registry's marginMs (and ttlMs).`,
      { option: 'generator.maxBorrowMs', value: genOpts.maxBorrowMs, max: marginMs },
    );
  }
  if (genOpts.highWaterWaitMs === undefined)
    genOpts.highWaterWaitMs = Math.max(1, Math.min(GENERATOR_DEFAULTS.highWaterWaitMs, marginMs));
  return { ...genOpts, clock };
}

/** The layout's whole node value, its node fields in mixed radix (most significant first). */
function layoutNodeOf(layout: Layout): (n: Readonly<Record<string, number>>) => number {
  return (n) => layout.nodeFields.reduce((v, f) => v * 2 ** f.bits + (n[f.name] ?? 0), 0);
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
 * A UUID generator on a lease someone else holds (a Snowflake `leasedGenerator`'s): it
 * issues only while that lease is valid (the same fencing deadlines), puts the layout's
 * whole node value in every UUID, starts above the lease's `notBeforeMs` and adds its
 * own high-water mark to the lease's, so the next holder of the node ID starts above both
 * the Snowflake IDs and the UUIDs issued here. After a re-acquisition (maybe as another
 * node) it rebuilds on the new claim. `close()` closes the generator and leaves the lease
 * to its owner. One holder, one node ID: a UUID node of the service is its Snowflake node.
 *
 * @throws FlurryError `FLURRY_E_REGISTRY_OPTION` when `nodeBits` is narrower than the layout's node.
 * @example
 * ```ts
 * const lg = await leasedGenerator({ registry, layout: 'twitter', pin: { datacenter: 1 } });
 * const uuids = uuidGeneratorOnLease(lg.lease, { registry, layout: lg.generator.layout });
 * uuids.next(); // node = datacenter × 32 + worker
 * await uuids.close(); // then lg.close() releases the lease
 * ```
 */
export function uuidGeneratorOnLease(lease: ManagedLease, opts: UuidOnLeaseOptions): LeasedUuidGenerator {
  const bits = layoutNodeBits(opts.layout);
  const format = UuidFormat.from({
    nodeBits: opts.nodeBits ?? Math.max(UUID_DEFAULTS.nodeBits, bits),
    ...(opts.sequenceBits === undefined ? {} : { sequenceBits: opts.sequenceBits }),
  });
  if (bits > format.nodeBits) {
    throw registryError(
      'OPTION',
      `the ${opts.layout.name} layout's node fields take ${bits} bits, more than nodeBits = ${format.nodeBits}: raise nodeBits to at least ${bits}`,
      { option: 'nodeBits', value: format.nodeBits, min: bits },
    );
  }
  return new LeasedUuids(
    lease,
    layoutNodeOf(opts.layout),
    { ...policies(opts.registry, opts.generator), nodeBits: format.nodeBits, sequenceBits: format.sequenceBits },
    false,
  );
}

/**
 * Acquires a node ID from `registry` (see the module notes for where) and returns a UUID
 * generator that issues only under a valid lease. Resolves once the clock has passed the
 * previous holder's floor. `generator.maxBorrowMs` defaults to (and may not exceed) the
 * registry's `marginMs`, as for `leasedGenerator`.
 *
 * @example
 * ```ts
 * const uuids = await leasedUuidGenerator({ registry, nodeBits: 16 });
 * ```
 */
export async function leasedUuidGenerator(opts: LeasedUuidGeneratorOptions): Promise<LeasedUuidGenerator> {
  assertKnownOptions(opts, LEASED_UUID_GENERATOR_OPTION_NAMES, 'leasedUuidGenerator options');
  assertKnownOptions(opts?.generator, POLICY_NAMES, 'leasedUuidGenerator options.generator');
  const { registry } = opts;
  if (!registry || typeof registry.acquire !== 'function')
    throw registryError('OPTION', 'leasedUuidGenerator() needs { registry } from openRegistry()', {});
  const format = UuidFormat.from(opts);
  if (opts.layout !== undefined && opts.shareNodeIds)
    throw registryError('OPTION', 'pass either layout (lease that layout’s node IDs) or shareNodeIds, not both', {
      option: 'shareNodeIds',
    });
  if (opts.pin !== undefined && opts.layout === undefined)
    throw registryError('OPTION', 'pin needs layout: a UUID slot of the cluster has no node fields to pin', {
      option: 'pin',
    });
  const genOpts = policies(registry, opts.generator);
  const waitMs = registry.options?.highWaterWaitMs ?? opts.generator?.highWaterWaitMs ?? 5000;
  const clock = genOpts.clock;

  let lease: ManagedLease;
  let nodeOf: (n: Readonly<Record<string, number>>) => number;
  if (opts.layout !== undefined) {
    const layout = Layout.from(opts.layout);
    const bits = layoutNodeBits(layout);
    if (bits > format.nodeBits) {
      throw registryError(
        'OPTION',
        `the ${layout.name} layout's node fields take ${bits} bits, more than nodeBits = ${format.nodeBits}: raise nodeBits to at least ${bits}`,
        { option: 'nodeBits', value: format.nodeBits, min: bits },
      );
    }
    nodeOf = layoutNodeOf(layout);
    lease = await registry.acquire(layout, opts.pin ? { pin: opts.pin } : {});
  } else {
    const nodeField = { name: 'node', bits: format.nodeBits };
    const fields = opts.shareNodeIds ? [{ name: 'uuid', bits: 1 }, nodeField] : [nodeField];
    nodeOf = (n) => n.node;
    lease = await registry.acquire(
      { name: 'uuidv7', nodeFields: fields, epochMs: 0, unitMs: 1 } as Parameters<Registry['acquire']>[0],
      opts.shareNodeIds ? { pin: { uuid: 1 } } : {},
    );
  }
  try {
    await waitForFloor(clock, lease.notBeforeMs, waitMs, { tick: { epochMs: 0, unitMs: 1 } });
    return new LeasedUuids(lease, nodeOf, {
      ...genOpts,
      nodeBits: format.nodeBits,
      sequenceBits: format.sequenceBits,
    });
  } catch (e) {
    await lease.release().catch(() => undefined);
    throw e;
  }
}
