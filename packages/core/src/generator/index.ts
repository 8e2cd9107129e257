/**
 * The generators: {@link Generator} (one thread) and {@link SharedGenerator} (worker
 * threads sharing one node ID), their options and events. (The tick planner and the
 * option tables stay internal.)
 */
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
