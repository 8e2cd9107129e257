/**
 * `@flurry/core`: time-ordered 64-bit IDs ({@link Layout}, {@link Generator}) and UUIDv7 ({@link UuidGenerator}), their
 * string codecs and keyed public IDs ({@link PublicIdCipher}). Named exports only; internal tables stay inside.
 */

// Errors and options
export { FlurryError, ErrorCode, type ErrorCodeValue } from './errors.js';
export {
  assertKnownOptions,
  closestName,
  optionNames,
  type OptionNames,
  type UnknownOptionError,
} from './known-options.js';

// Time and leases
export { systemClock, ManualClock, sleepSync, type Clock } from './clock.js';
export { randomBelow, randomFill, randomHex } from './random.js';
export type { NodeLease } from './lease.js';

// Engine access
export * from './engines.js';
export * from './engines-sql.js';

// Layouts
export * from './layout/index.js';

// SQL from a layout
export * from './sql/index.js';

// Generators
export * from './generator/index.js';

// UUIDv7 (docs/uuids.md)
export * from './uuid/index.js';

// String forms (codecs)
export * from './codecs/index.js';

// Public IDs (keyed encryption)
export * from './public/index.js';
