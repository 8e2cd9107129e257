/**
 * `@flurry/core`: time-ordered 64-bit IDs (and 128-bit UUIDv7, {@link UuidGenerator}). A {@link Layout} says which bits hold the
 * timestamp, the node fields and the sequence; a {@link Generator} issues IDs of a layout
 * on one node; the string codecs write them as decimal, hex, base32/58/62 or base64url;
 * a {@link PublicIdCipher} turns them into keyed, unguessable public IDs.
 *
 * Named exports only: internal tables (option-name lists, unit tables, tick planning) stay
 * inside the package.
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

// Redis persistence (the segment store and the lease registry refuse a Redis that can lose acknowledged writes)
export { readRedisPersistence, volatileRedisReason, type RedisPersistence } from './redis-persistence.js';

// Engine access: logger shape, URL redaction, SQL schemes and error classes, client loading, SQL pools over a loaded client
export * from './engines.js';
export * from './engines-sql.js';

// Layouts
export {
  Layout,
  parseId,
  isPresetName,
  PRESETS,
  DEFAULT_EPOCH_MS,
  TWITTER_EPOCH_MS,
  DISCORD_EPOCH_MS,
  SONYFLAKE_EPOCH_MS,
  INSTAGRAM_EPOCH_MS,
  type PresetName,
  type TimeUnit,
  type FieldSpec,
  type LayoutSpec,
  type LayoutField,
  type LayoutInfo,
  type LayoutGeometry,
  type LayoutParseOptions,
  type DecodedId,
} from './layout/index.js';
export { minIdAt, maxIdAt, idBounds, parseTime, type IdBounds } from './layout/bounds.js';

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
