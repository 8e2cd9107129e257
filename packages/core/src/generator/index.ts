/**
 * The generators: {@link Generator} (one thread) and {@link SharedGenerator} (worker
 * threads sharing one node ID), their options, events and the rare-path planner.
 *
 * @example
 * ```ts
 * import { Generator } from '@flurry/core';
 * const gen = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 } });
 * gen.next();
 * ```
 */
export * from './options.js';
export * from './tick-planner.js';
export * from './generator.js';
export * from './shared-generator.js';
