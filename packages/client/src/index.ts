// `@flurry/client`: IDs from a fleet of Flurry servers, prefetched, with failover (docs/client.md).
export { createClient } from './client.js';
export type { FlurryClient, ClientStats, DecodedRemoteId } from './client.js';
export type { ClientOptions, PrefetchOptions } from './options.js';
export type { RemoteSequence, RemoteSequenceStats, SequenceOptions } from './sequence.js';
export type { Strategy, ServerReport } from './server-pool.js';
export { ClientErrorCode, clientError } from './errors.js';
export type { ClientErrorCodeValue } from './errors.js';
