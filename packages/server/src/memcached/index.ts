/** The katsubushi-compatible memcached endpoint of `flurry serve --memcached-port`. */
export { startMemcachedServer, MEMCACHED_SERVER_OPTION_NAMES } from './server.js';
export type { MemcachedServer, MemcachedServerOptions, MemcachedLogger } from './server.js';
export { MEMCACHED_COMMANDS, MAX_LINE_BYTES, MAX_KEY_BYTES, MAX_BINARY_BODY_BYTES } from './session.js';
export type { MemcachedCounters } from './session.js';
