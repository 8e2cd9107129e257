export * from './errors.js';
export * from './known-options.js';
export * from './clock.js';
export * from './lease.js';
export * from './layout/index.js';
export * from './generator/index.js';
export * from './codecs/index.js';
export * from './public/index.js';
