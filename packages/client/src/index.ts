/**
 * `@flurry/client`: IDs from a fleet of Flurry servers, prefetched into a local buffer,
 * with failover across servers. See docs/client.md. Every export is named here.
 *
 * @example
 * ```ts
 * import { createClient, ClientErrorCode } from '@flurry/client';
 * import { FlurryError } from '@flurry/core';
 *
 * const client = createClient({ servers: ['http://127.0.0.1:8080'], token: process.env.FLURRY_TOKEN });
 * try {
 *   console.log(await client.next()); // 1859214170478923776n
 * } catch (err) {
 *   // Every server down and the buffer empty: retry later.
 *   if (err instanceof FlurryError && err.code === ClientErrorCode.UNAVAILABLE) console.error(err.message);
 *   else throw err;
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export { createClient } from './client.js';
export type { FlurryClient, ClientStats, DecodedRemoteId } from './client.js';
export type { ClientOptions, PrefetchOptions } from './options.js';
export type { RemoteSequence, RemoteSequenceStats, SequenceOptions } from './sequence.js';
export type { Strategy, ServerReport } from './server-pool.js';
export { ClientErrorCode, clientError } from './errors.js';
export type { ClientErrorCodeValue } from './errors.js';
