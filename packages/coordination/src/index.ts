/** `@flurry/coordination`: node-ID leases for Flurry generators. */
// Opening a registry and issuing under a lease
export { openRegistry } from './open-registry.js';
export { leasedGenerator, type LeasedGenerator, type LeasedGeneratorOptions } from './leased-generator.js';
export {
  leasedUuidGenerator,
  uuidGeneratorOnLease,
  type LeasedUuidGenerator,
  type LeasedUuidGeneratorOptions,
  type UuidOnLeaseOptions,
} from './leased-generator.js';
export {
  resolveRegistryOptions,
  type AcquireOptions,
  type RegistryOptions,
  type ResolvedRegistryOptions,
  type RegistryLogger,
} from './options.js';
export { parseRegistryUrl, type ParsedRegistryUrl, type RegistryKind } from './url.js';
export type { LeaseState, LeaseStats, ManagedLease, Registry, StaticAssignment } from './lease-types.js';
export type { LayoutLike } from './slot-map.js';
export type { ClusterHolder, HoldersQuery } from './holders.js';
export { FLURRY_VERSION } from './version.js';
// The slot map, for code that claims in a registry table itself (flurry sql --generate): same namespaces and slots.
export { SlotMap } from './slot-map.js';

// Errors
export { RegistryErrorCode, registryError, redactUrl } from './errors.js';

// Writing or wrapping a driver
export type { RegistryDriver, Claim, ClaimRequest, HolderInfo, HolderRecord } from './driver.js';
export { LeaseRegistry } from './registry.js';
export { createFileDriver, openFileDriver, type FileClaim, type FileDriverOptions } from './drivers/file.js';
export type { FileIo } from './file-steps.js';
export { timeSourceFor, type LeaseTimeSource } from './host-clock.js';
export { createStaticDriver, k8sOrdinal, type StaticDriverOptions } from './drivers/static.js';
export {
  DEFAULT_REGISTRY_TABLE,
  REGISTRY_COLUMNS,
  registryTableDdl,
  validTableName,
  type SqlDialect,
} from './drivers/sql-common.js';
export { initSqlRegistry, sqlRegistryDdl, type SqlRegistryInit } from './drivers/sql-init.js';
export { parseSqlUrl, type SqlUrl } from './url.js';
