/**
 * `@flurry/coordination`: node-ID leases for Flurry generators.
 *
 * @example
 * ```ts
 * import { openRegistry, leasedGenerator } from '@flurry/coordination';
 * const registry = await openRegistry(process.env.FLURRY_REGISTRY ?? 'file:', { cluster: 'orders' });
 * const ids = await leasedGenerator({ registry, layout: 'twitter' });
 * console.log(ids.next());
 * ```
 */
export * from './errors.js';
export * from './driver.js';
export * from './options.js';
export * from './slot-map.js';
export type {
  AcquireOptions,
  LeaseState,
  LeaseStats,
  ManagedLease,
  Registry,
  StaticAssignment,
} from './lease-types.js';
export { claimFloor, waitForFloor, type FloorWaitOptions, type TickGrid } from './floor.js';
export { LeaseRegistry } from './registry.js';
export * from './leased-generator.js';
export * from './url.js';
export * from './open-registry.js';
export {
  createFileDriver,
  timeSourceFor,
  type FileClaim,
  type FileDriverOptions,
  type LeaseTimeSource,
} from './drivers/file.js';
export { createStaticDriver, k8sOrdinal, type StaticDriverOptions } from './drivers/static.js';
export { defaultStateDir, SlotCache } from './state-dir.js';
export {
  DEFAULT_REGISTRY_TABLE,
  REGISTRY_COLUMNS,
  registryTableDdl,
  validTableName,
  type SqlDialect,
} from './drivers/sql-common.js';
