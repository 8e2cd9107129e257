// The JSON bodies of the console's data routes and events, as the code that builds them returns them
// (docs/console.md#data-routes describes every field).
import type { ClusterCache } from './cluster.js';
import type { ConsoleData } from './data.js';

export type StatusBody = ReturnType<ConsoleData['status']>;
export type ClusterBody = Awaited<ReturnType<ClusterCache['body']>>;
export type ClusterEntry = ClusterBody['holders'][number];
