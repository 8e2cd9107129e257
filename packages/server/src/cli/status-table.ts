/**
 * The tables `flurry status` prints: one row per holder of a node ID (node, host, pid,
 * version, held since, last renewal age, high-water mark, clock offset, state), under a
 * header naming the cluster and the registry (its password removed); and for a service run
 * with `--workers N`, one row per worker process, from `/v1/status`'s `workers`.
 */
import type { ClusterBody, ClusterEntry } from '../console/types.js';
import type { WorkerEntry } from '../workers/types.js';

/** `field=value,…` of a node, or `none` when it has no fields (or there is no node). */
const nodeText = (node: Readonly<Record<string, number>> | null, none: string): string =>
  Object.entries(node ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || none;

/** A duration for humans: `850ms`, `4.2s`, `3m05s`, `2h04m`, `3d04h`. */
export function humanMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${two(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor(s / 3600) % 24)}h`;
}

const iso = (ms: number | null): string => (ms === null || ms <= 0 ? '-' : new Date(ms).toISOString());

function offsetText(h: ClusterEntry): string {
  if (h.clockOffsetMs === null) return '-';
  const sign = h.clockOffsetMs >= 0 ? '+' : '-';
  const err = h.clockOffsetErrorMs === null ? '' : ` ±${h.clockOffsetErrorMs}`;
  return `${sign}${Math.abs(Math.round(h.clockOffsetMs))} ms${err}`;
}

/** The table (see the module comment); `*` marks this process's own holder. */
export function clusterTable(body: ClusterBody): string {
  const head = `cluster ${body.cluster} on ${body.registry} (ttl ${body.ttlMs} ms, renew ${body.renewIntervalMs} ms), ${body.holders.length} holder${body.holders.length === 1 ? '' : 's'} at ${new Date(body.now).toISOString()}\n`;
  if (body.holders.length === 0) return `${head}(no live holders)\n`;
  const rows = [
    ['NODE', 'HOST', 'PID', 'VERSION', 'HELD SINCE', 'RENEWED', 'HIGH-WATER', 'CLOCK OFFSET', 'STATE'],
    ...body.holders.map((h) => [
      nodeText(h.node, `slot ${h.slot}`),
      h.hostname ?? '?',
      h.pid === null ? '?' : String(h.pid),
      h.version ?? '?',
      iso(h.heldSinceMs),
      h.state === 'reserved' || h.ageMs === null ? '-' : `${humanMs(h.ageMs)} ago`,
      iso(h.highWaterMs),
      offsetText(h),
      (h.state === 'reserved' ? `reserved (${h.role ?? 'sql generator'})` : h.state) + (h.self ? ' *' : ''),
    ]),
  ];
  const reserved = body.holders.some((h) => h.state === 'reserved');
  return (
    head +
    (reserved
      ? 'reserved: a node reserved for in-database generation (flurry sql --generate) by the host and pid shown, since HELD SINCE; held until released (flurry sql --release), never renewed\n'
      : '') +
    alignedRows(rows)
  );
}

/** `rows` as lines of columns two spaces apart, each padded to its widest cell. */
export function alignedRows(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, c) => cell.padEnd(widths[c]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** Renders the worker table (empty string for no workers). */
export function workersTable(workers: readonly WorkerEntry[] | undefined, now: number = Date.now()): string {
  if (!workers || workers.length === 0) return '';
  const ready = workers.filter((w) => w.ready).length;
  const rows = [
    ['WORKER', 'PID', 'NODE', 'STATE', 'LEASE SLOT', 'LEASE LEFT', 'RENEWALS', 'IDS/S', 'ISSUED', 'RESTARTS'],
    ...workers.map((w) => [
      String(w.slot),
      String(w.pid),
      nodeText(w.node, '-'),
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
