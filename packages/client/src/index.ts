/**
 * `@flurry/client`: IDs from a fleet of Flurry servers, prefetched into a local buffer,
 * with failover across servers. See docs/client.md.
 *
 * @example
 * ```ts
 * import { createClient } from '@flurry/client';
 * const client = createClient({ servers: ['http://127.0.0.1:8080'] });
 * console.log(await client.next());
 * await client.close();
 * ```
 */
export { createClient } from './client.js';
export type { FlurryClient, ClientStats, DecodedRemoteId } from './client.js';
export type { ClientOptions, PrefetchOptions } from './options.js';
export type { Strategy, ServerReport } from './server-pool.js';
export { ClientErrorCode, clientError } from './errors.js';
export type { ClientErrorCodeValue } from './errors.js';
