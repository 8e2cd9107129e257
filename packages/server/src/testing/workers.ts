/**
 * Test and benchmark support for `flurry serve --workers N`: start the cluster as a child
 * process, wait until every worker is ready, read the worker table, and load it from
 * keep-alive connections while checking each answer (IDs unique across all answers, and
 * per connection, which one worker serves, increasing per node).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from '@flurry/coordination/testing';
import { Layout } from '@flurry/core';
import { FLURRY_BIN } from '../test-support.js';
import type { WorkerEntry } from '../workers/types.js';

/** A running `flurry serve --workers N`. */
export interface WorkersProcess {
  readonly port: number;
  readonly process: ChildProcess;
  /** The worker table from `/v1/status`. */
  workers(): Promise<WorkerEntry[]>;
  /** Stdout and stderr so far. */
  output(): string;
  /** Sends `signal` to the primary and waits (bounded) for its exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** GET `path` on 127.0.0.1:`port`; resolves with the status and body (status 0: no answer). */
export function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: agent ?? false, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
  });
}

/** Starts `flurry serve --workers N` on a free port and waits until every worker is ready. */
export async function startWorkers(o: {
  workers: number;
  registry: string;
  args?: string[];
  timeoutMs?: number;
}): Promise<WorkersProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      FLURRY_BIN,
      'serve',
      '--port',
      String(port),
      '--workers',
      String(o.workers),
      '--registry',
      o.registry,
      '--log-level',
      'warn',
      ...(o.args ?? []),
    ],
    { env: { ...process.env, FLURRY_ALLOW_ROOT: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const workers = async (): Promise<WorkerEntry[]> => {
    const r = await get(port, '/v1/status');
    if (r.status !== 200) return [];
    return (JSON.parse(r.body) as { workers?: WorkerEntry[] }).workers ?? [];
  };
  const until = Date.now() + (o.timeoutMs ?? 30_000);
  for (;;) {
    const w = await workers();
    if (w.length === o.workers && w.every((x) => x.ready)) break;
    if (child.exitCode !== null || Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`flurry serve --workers ${o.workers} did not become ready: ${JSON.stringify(w)}; output ${out}`);
    }
    await delay(100);
  }
  return {
    port,
    process: child,
    workers,
    output: () => out,
    stop: async (signal = 'SIGTERM', timeoutMs = 30_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const r = await exited;
      clearTimeout(t);
      return r;
    },
  };
}

/** The outcome of {@link loadIds}. */
export interface LoadResult {
  /** Every ID answered, in the order received. */
  readonly ids: bigint[];
  readonly requests: number;
  /** Answers other than 200 (a 503 or a cut connection while a worker dies), by status. */
  readonly failures: Record<string, number>;
  /** IDs seen more than once across all answers. */
  readonly duplicates: number;
  /** Per connection and node, an ID not above the previous one. */
  readonly decreases: number;
  /** Distinct nodes seen. */
  readonly nodes: number;
}

/**
 * Loads `GET /v1/ids?count=N` from `connections` sequential keep-alive loops for
 * `durationMs` (or until `signal` aborts) and checks every answer.
 */
export async function loadIds(
  port: number,
  o: { connections: number; durationMs: number; count?: number; layout?: Layout },
): Promise<LoadResult> {
  const layout = o.layout ?? Layout.from('twitter');
  const nodeShift = BigInt(layout.sequenceBits);
  const nodeMask = (1n << BigInt(layout.totalBits - layout.timestampBits - layout.sequenceBits)) - 1n;
  const ids: bigint[] = [];
  const failures: Record<string, number> = {};
  let requests = 0;
  let decreases = 0;
  const end = Date.now() + o.durationMs;
  const path = `/v1/ids?count=${o.count ?? 10}`;
  const loop = async (): Promise<void> => {
    let agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let last = new Map<bigint, bigint>();
    while (Date.now() < end) {
      const r = await get(port, path, agent);
      requests++;
      if (r.status !== 200) {
        failures[r.status] = (failures[r.status] ?? 0) + 1;
        // A new connection may reach another worker: start the per-connection order afresh.
        agent.destroy();
        agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        last = new Map();
        await delay(20);
        continue;
      }
      for (const s of (JSON.parse(r.body) as { ids: string[] }).ids) {
        const id = BigInt(s);
        const node = (id >> nodeShift) & nodeMask;
        const prev = last.get(node);
        if (prev !== undefined && id <= prev) decreases++;
        last.set(node, id);
        ids.push(id);
      }
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: o.connections }, loop));
  const seen = new Set<bigint>();
  const nodes = new Set<bigint>();
  let duplicates = 0;
  for (const id of ids) {
    if (seen.has(id)) duplicates++;
    seen.add(id);
    nodes.add((id >> nodeShift) & nodeMask);
  }
  return { ids, requests, failures, duplicates, decreases, nodes: nodes.size };
}
