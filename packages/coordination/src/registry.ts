/** The registry façade over one driver (docs/node-ids.md, "Lease internals"). */
import { assertKnownOptions, optionNames, type Clock, type FlurryError } from '@flurry/core';
import { claimAndSettle, type ClaimOutcome, type LeaseContext } from './claim.js';
import type { RegistryDriver } from './driver.js';
import { registryError, toFlurry } from './errors.js';
import { tickGridOf } from './floor.js';
import { toClusterHolders, type ClusterHolder, type HoldersQuery } from './holders.js';
import { Lease } from './lease.js';
import type { ManagedLease, Registry, StaticAssignment } from './lease-types.js';
import {
  resolveRegistryOptions,
  type AcquireOptions,
  type RegistryOptions,
  type ResolvedRegistryOptions,
} from './options.js';
import { SlotMap, type LayoutLike } from './slot-map.js';
import { defaultStateDir, SlotCache } from './state-dir.js';

/** A {@link Registry} over one driver (`new LeaseRegistry(createFileDriver(dir, { clock }), { cluster })`). */
export class LeaseRegistry implements Registry {
  readonly kind: string;
  readonly url: string;
  readonly clock: Clock;
  readonly options: ResolvedRegistryOptions;
  private readonly leases = new Set<ManagedLease>();
  /** Per namespace leased in, so holders() can name node fields. */
  private readonly maps = new Map<string, SlotMap>();
  private closed = false;
  private readonly ctx: LeaseContext;

  constructor(
    private readonly driver: RegistryDriver,
    opts: RegistryOptions | ResolvedRegistryOptions = {},
  ) {
    this.options = resolveRegistryOptions(opts);
    this.kind = driver.kind;
    this.url = driver.url;
    this.clock = this.options.clock;
    const staticIds = (driver as RegistryDriver & StaticAssignment).staticAssignment === true;
    this.ctx = {
      driver,
      opts: this.options,
      staticIds,
      cache: staticIds ? undefined : new SlotCache(this.options.stateDir ?? defaultStateDir()),
      onReleased: (l) => this.leases.delete(l),
    };
  }

  private assertOpen(): void {
    const url = this.url;
    if (this.closed)
      throw registryError('CLOSED', `the registry ${url} was closed; open a new one with openRegistry()`, { url });
  }

  async acquire(layout: LayoutLike, opts: AcquireOptions = {}): Promise<ManagedLease> {
    // `{ pins: … }` would lease node 0.
    assertKnownOptions(opts, optionNames<AcquireOptions>({ pin: true }), 'registry.acquire() options');
    this.assertOpen();
    if (!layout || !Array.isArray(layout.nodeFields))
      throw registryError('OPTION', 'acquire() takes a core Layout (Layout.from(...))', {});
    const { opts: o, driver } = this.ctx;
    const map = SlotMap.create(layout, o.cluster, opts.pin ?? {});
    this.maps.set(map.namespace, map);
    const tick = tickGridOf(layout);
    const out = await claimAndSettle(this.ctx, {
      namespace: map.namespace,
      slots: map.slots,
      preferredSlot: this.ctx.cache?.read(driver.url, map.namespace, map.slots),
      tick,
      renewTimeoutMs: Math.max(o.ttlMs, 1000),
      atLeastMs: () => 0,
      alive: () => !this.closed,
    });
    if (!out.ok) throw this.acquireError(out, map.namespace);
    const lease = new Lease(this.ctx, map, out, tick);
    this.leases.add(lease);
    this.ctx.cache?.write(driver.url, map.namespace, map.slots, out.claim.slot);
    lease.start();
    return lease;
  }

  /** The live holders of node IDs on this registry's clock (docs/node-ids.md, "Listing holders"). */
  async holders(query: HoldersQuery = {}): Promise<ClusterHolder[]> {
    this.assertOpen();
    const { driver, opts: o } = this.ctx;
    const asked = query.layout && SlotMap.create(query.layout, o.cluster, query.pin ?? {});
    const held = [...new Set([...this.leases].map((l) => l.namespace))];
    const namespaces = asked ? [asked.namespace] : query.namespace !== undefined ? [query.namespace] : held;
    const out: ClusterHolder[] = [];
    for (const namespace of namespaces.length ? namespaces : [o.cluster]) {
      const map = asked || this.maps.get(namespace);
      const records = await driver.holders(namespace).catch((e: unknown) => {
        throw toFlurry(e, driver.url, `list the holders of ${namespace}`);
      });
      out.push(...toClusterHolders(records, namespace, this.clock.now(), map));
    }
    return out;
  }

  private acquireError(out: Extract<ClaimOutcome, { ok: false }>, namespace: string): FlurryError {
    const { driver, opts: o } = this.ctx;
    if (out.step === 'claim') return toFlurry(out.cause, driver.url, `claim a node ID in ${namespace}`);
    if (out.step === 'abandoned' || (out.step === 'settle' && this.closed))
      return registryError('CLOSED', `the registry ${this.url} was closed during acquire()`, { url: this.url });
    if (out.step === 'settle')
      return toFlurry(out.cause, driver.url, `record the high-water mark of slot ${out.slot} in ${namespace}`);
    return registryError(
      'UNREACHABLE',
      `${driver.url}: claiming a node ID took longer than the TTL minus the margin (${o.ttlMs - o.marginMs} ms); the engine is too slow or the TTL too short`,
      { url: driver.url, ttlMs: o.ttlMs },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const errors: unknown[] = [];
    await Promise.all([...this.leases].map((l) => l.release().catch((e) => errors.push(e))));
    await this.driver.close();
    if (errors.length)
      this.options.logger?.warn(
        { errors: errors.length },
        'flurry registry closed; some leases could not be released and expire by TTL',
      );
  }
}
