export * from './harness.js';
export * from './databases.js';
