/**
 * The worker table of `flurry status --url` for a service run with `--workers N`: one row
 * per worker process (slot, pid, node, state, lease, rate), from `/v1/status`'s `workers`.
 */
import { alignedRows } from '../cli/status-table.js';
import type { WorkerEntry } from './types.js';

/** Renders the worker table (empty string for no workers). */
export function workersTable(workers: readonly WorkerEntry[] | undefined, now: number = Date.now()): string {
  if (!workers || workers.length === 0) return '';
  const ready = workers.filter((w) => w.ready).length;
  const rows = [
    ['WORKER', 'PID', 'NODE', 'STATE', 'LEASE SLOT', 'LEASE LEFT', 'RENEWALS', 'IDS/S', 'ISSUED', 'RESTARTS'],
    ...workers.map((w) => [
      String(w.slot),
      String(w.pid),
      w.node
        ? Object.entries(w.node)
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || '-'
        : '-',
      w.state,
      w.lease ? String(w.lease.slot) : '-',
      !w.lease
        ? '-'
        : w.lease.deadlineMs === null
          ? 'never expires'
          : `${Math.max(0, w.lease.deadlineMs - now)} ms${w.lease.fenced ? ' (fenced)' : ''}`,
      w.lease ? String(w.lease.renewals) : '-',
      String(w.idsPerSecond),
      w.issued,
      String(w.restarts),
    ]),
  ];
  return `${workers.length} worker processes (--workers), ${ready} ready:\n` + alignedRows(rows);
}
