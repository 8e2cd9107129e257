// The generators (one thread; worker threads sharing one node ID), their options and events.
export { Generator } from './generator.js';
export { SharedGenerator, type SharedGeneratorOptions, type SharedGeneratorState } from './shared-generator.js';
export {
  GENERATOR_DEFAULTS,
  type GeneratorOptions,
  type GeneratorEvent,
  type GeneratorStats,
  type ExhaustedPolicy,
  type BackwardsPolicy,
  type SequenceStart,
} from './options.js';
