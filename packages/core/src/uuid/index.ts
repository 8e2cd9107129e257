// UUIDv7 with Snowflake's guarantees: the generators, the format and its forms (docs/uuids.md).
export { UuidGenerator, UUID_GENERATOR_OPTION_NAMES, type UuidGeneratorOptions } from './generator.js';
export {
  SharedUuidGenerator,
  type SharedUuidGeneratorOptions,
  type SharedUuidGeneratorState,
} from './shared-generator.js';
export { UuidFormat, UUID_DEFAULTS, uuidMinAt, uuidMaxAt, type UuidFormatOptions } from './format.js';
export {
  decodeUuid,
  encodeUuid,
  isUuidV7,
  UUID_FORMS,
  type DecodedUuid,
  type DecodeUuidOptions,
  type UuidForm,
  type UuidTextForm,
  type UuidInput,
} from './forms.js';
