/**
 * `@flurry/segments`: segment mode (Leaf's 号段). Short, dense, increasing numbers per business key, allocated
 * in blocks from PostgreSQL, MySQL/MariaDB (Leaf's own `leaf_alloc` table) or Redis and served from memory.
 * See docs/segments.md.
 */
export * from './errors.js';
export * from './store.js';
export * from './format.js';
export * from './url.js';
export * from './adaptive-step.js';
export * from './sequence.js';
export * from './sequences.js';
export { createMemoryStore } from './stores/memory.js';
