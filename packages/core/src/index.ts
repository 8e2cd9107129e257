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
export {
  layoutSql,
  sqlPrefix,
  type SqlDialect,
  type LayoutSqlOptions,
  type SqlFunction,
  type LayoutSql,
} from './sql/ddl.js';
export {
  GENERATOR_RESERVE_MS,
  generatorLanes,
  generatorSql,
  type GeneratorSql,
  type GeneratorSqlOptions,
} from './sql/generate.js';
export { uuidSql, type UuidSqlOptions } from './sql/uuid-ddl.js';

// Generators
export { Generator } from './generator/generator.js';
export {
  SharedGenerator,
  type SharedGeneratorOptions,
  type SharedGeneratorState,
} from './generator/shared-generator.js';
export {
  GENERATOR_DEFAULTS,
  type GeneratorOptions,
  type GeneratorEvent,
  type GeneratorStats,
  type ExhaustedPolicy,
  type BackwardsPolicy,
  type SequenceStart,
} from './generator/options.js';

// UUIDv7 (docs/uuids.md)
export {
  UuidGenerator,
  SharedUuidGenerator,
  type SharedUuidGeneratorOptions,
  type SharedUuidGeneratorState,
  UuidFormat,
  UUID_DEFAULTS,
  UUID_FORMS,
  UUID_GENERATOR_OPTION_NAMES,
  decodeUuid,
  encodeUuid,
  isUuidV7,
  uuidMinAt,
  uuidMaxAt,
  type UuidGeneratorOptions,
  type UuidFormatOptions,
  type DecodedUuid,
  type DecodeUuidOptions,
  type UuidForm,
  type UuidTextForm,
  type UuidInput,
} from './uuid/index.js';

// String forms (codecs)
export {
  encodeId,
  decodeId,
  getCodec,
  isIdFormat,
  codecs,
  FORMATS,
  CROCKFORD_ALPHABET,
  BASE58_ALPHABET,
  BASE62_ALPHABET,
  SORTABLE_BASE64URL_ALPHABET,
  jsonReplacer,
  jsonReviver,
  toJSONSafe,
  type IdFormat,
  type IdCodec,
  type EncodeOptions,
  type DecodeOptions,
  type IdKeys,
  type JsonReviver,
  type JsonReviverOptions,
  type JsonSafe,
} from './codecs/index.js';

// Public IDs (keyed encryption)
export {
  PublicIdCipher,
  PublicIdCodec,
  PublicIdKey,
  generateKey,
  parseKeys,
  loadKeysFromEnv,
  loadKeysFromFile,
  PUBLIC_ID_FORMAT_VERSION,
  PUBLIC_ID_TAG_LENGTH,
  FEISTEL_ROUNDS,
  type PublicIdAlphabet,
  type PublicIdOptions,
} from './public/index.js';
