/** The katsubushi-compatible memcached endpoint of `flurry serve --memcached-port`. */
export { startMemcachedServer } from './server.js';
export type { MemcachedServer, MemcachedServerOptions, MemcachedLogger } from './server.js';
export { MEMCACHED_COMMANDS } from './session.js';
