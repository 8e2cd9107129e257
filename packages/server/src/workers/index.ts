/**
 * `flurry serve --workers N|auto`: one `node:cluster` worker per node ID sharing the ports
 * (./primary.ts supervises, ./worker.ts runs in each worker, ./count.ts checks there are
 * enough free node IDs, ./metrics.ts aggregates `/metrics`). docs/operations.md ("Worker
 * processes") describes it.
 */
export { checkNodeIds, nodeIdCapacity, resolveWorkers } from './count.js';
export { aggregateMetrics } from './metrics.js';
export { runPrimary, SILENT_AFTER_MS, type PrimaryOptions } from './primary.js';
export { isWorkerMessage, type WorkerEntry, type WorkerMessage, type WorkerReport } from './types.js';
export { REPORT_EVERY_MS, workerHooks, type WorkerHooks } from './worker.js';
export { workersTable } from './table.js';
