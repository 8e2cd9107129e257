export * from './errors.js';
export * from './clock.js';
export * from './lease.js';
export * from './codecs/index.js';
