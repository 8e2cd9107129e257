// flurry serve --workers N: 4 workers under load on the file registry and on etcd, one
// SIGKILLed mid-load and restarted (0 duplicate IDs across every answer, IDs increasing per
// connection and node), /readyz, /v1/status and /metrics for the whole service, SIGTERM
// drains every worker; start-up refuses more workers than free node IDs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { startEngine } from '@flurry/coordination/testing';
import { Registry, Counter, Gauge } from 'prom-client';
import { runFlurry, startFlurry, tempDir } from '../test-support.js';
import { nodeIdCapacity, resolveWorkers } from './count.js';
import { aggregateMetrics } from './primary.js';
import { get, loadIds, startWorkers } from '../testing/workers.js';
import { Layout, type FlurryError } from '@flurry/core';
import { loadServeConfig } from '../config/index.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function proof(registry: string): Promise<void> {
  const c = await startWorkers({ workers: 4, registry, args: ['--lease-ttl-ms', '3000'] });
  try {
    const ready = JSON.parse((await get(c.port, '/readyz')).body) as { workers: { ready: number; total: number } };
    assert.deepEqual(ready.workers, { ready: 4, total: 4 });
    const before = await c.workers();
    assert.equal(new Set(before.map((w) => JSON.stringify(w.node))).size, 4, 'four distinct node IDs');
    const victim = before[1];
    const load = loadIds(c.port, { connections: 8, durationMs: 4_000, count: 20 });
    await delay(1_500);
    process.kill(victim.pid, 'SIGKILL');
    const r = await load;
    assert.ok(r.ids.length > 1_000, `IDs answered: ${r.ids.length}`);
    assert.equal(r.duplicates, 0, 'duplicate IDs across all answers');
    assert.equal(r.decreases, 0, 'IDs not increasing per connection and node');
    // The dead worker is restarted in its slot and leases a node ID again.
    let after = await c.workers();
    for (let i = 0; i < 100 && !(after.every((w) => w.ready) && after[1].restarts === 1); i++) {
      await delay(100);
      after = await c.workers();
    }
    assert.equal(after[1].restarts, 1, JSON.stringify(after));
    assert.ok(after.every((w) => w.ready) && after[1].pid !== victim.pid, JSON.stringify(after));
    // Every worker's metrics, aggregated (a worker slow to answer under load is left out of one scrape: retry).
    let metrics = '';
    for (let i = 0; i < 10 && !/^flurry_workers\{state="ready"\} 4$/m.test(metrics); i++) {
      if (i > 0) await delay(300);
      metrics = (await get(c.port, '/metrics')).body;
    }
    assert.match(metrics, /^flurry_workers\{state="ready"\} 4$/m);
    assert.match(metrics, /^flurry_worker_restarts_total 1$/m);
    assert.match(metrics, /^flurry_node_field\{field="worker",worker="3"\} \d+$/m);
    // flurry status --url lists the workers with their node IDs and leases.
    const st = await runFlurry(['status', '--url', `http://127.0.0.1:${c.port}`]);
    assert.equal(st.code, 0, st.stderr);
    assert.match(st.stdout, /^4 worker processes \(--workers\), 4 ready:$/m);
    assert.match(st.stdout, /^WORKER +PID +NODE +STATE +LEASE SLOT +LEASE LEFT +RENEWALS +IDS\/S +ISSUED +RESTARTS$/m);
    assert.match(st.stdout, new RegExp(`^1 +${after[1].pid} +\\S+ +ready +\\d+ +\\d+ ms +\\d+ +\\d+ +\\d+ +1$`, 'm'));
    // Requests issued after the restart are unique too (against everything before).
    const again = await loadIds(c.port, { connections: 4, durationMs: 500, count: 20 });
    const all = new Set(r.ids);
    assert.equal(again.ids.filter((id) => all.has(id)).length, 0);
    // SIGTERM drains every worker: the primary exits 0 and no worker is left.
    const pids = after.map((w) => w.pid);
    const stopped = await c.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, c.output());
    assert.deepEqual(
      pids.filter((p) => alive(p)),
      [],
    );
  } finally {
    await c.stop('SIGKILL');
  }
}

test('4 workers on the file registry: SIGKILL of one mid-load, restart, 0 duplicates, SIGTERM drains', async () => {
  const dir = tempDir('workers-reg');
  try {
    await proof(`file:${dir}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('4 workers on etcd: SIGKILL of one mid-load, restart, 0 duplicates, SIGTERM drains', async () => {
  const etcd = await startEngine('etcd');
  try {
    await proof(`${etcd.url}`);
  } finally {
    await etcd.stop();
  }
});

test('start-up refuses more workers than free node IDs, with a coded message', async () => {
  const r1 = await runFlurry(['serve', '--allow-root', '--workers', '2', '--registry', 'static:3']);
  assert.equal(r1.code, 1);
  assert.match(r1.stderr, /^flurry: FLURRY_E_WORKERS_NODE_IDS: --workers 2 needs 2 node IDs, but a static: registry/m);
  const leaf = await runFlurry([
    'serve',
    '--allow-root',
    '--workers',
    '2',
    '--registry',
    'zookeeper+leaf://127.0.0.1:1/x',
  ]);
  assert.equal(leaf.code, 1);
  assert.match(leaf.stderr, /FLURRY_E_WORKERS_NODE_IDS: --workers 2 cannot run on a zookeeper\+leaf: registry/);
  const fields = ['--fields', 'timestamp:41,worker:1,sequence:12'];
  const r2 = await runFlurry([
    'serve',
    '--allow-root',
    '--workers',
    '3',
    ...fields,
    '--registry',
    `file:${tempDir('w')}`,
  ]);
  assert.match(r2.stderr, /FLURRY_E_WORKERS_NODE_IDS: --workers 3 needs 3 node IDs, but the layout custom leaves 2/);
  // One of the two node IDs held by another service: 1 free, 2 asked.
  const one = await startFlurry({ args: [...fields] });
  try {
    const r3 = await runFlurry([
      'serve',
      '--allow-root',
      '--workers',
      '2',
      ...fields,
      '--registry',
      `file:${one.registryDir}`,
    ]);
    assert.equal(r3.code, 1);
    assert.match(
      r3.stderr,
      /FLURRY_E_WORKERS_NODE_IDS: --workers 2 needs 2 free node IDs, but the registry .* has 1 free \(1 of 2 held\)/,
    );
  } finally {
    await one.stop();
  }
});

test('a worker that cannot start stops the start with its exit code', async () => {
  const dir = tempDir('w');
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = String((taken.address() as AddressInfo).port);
  try {
    const args = ['--workers', '2', '--registry', `file:${dir}`, '--port', port, '--log-level', 'warn'];
    const r = await runFlurry(['serve', '--allow-root', ...args]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /FLURRY_E_LISTEN/);
  } finally {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the workers setting: flag, FLURRY_WORKERS, config key; bad values refused with FLURRY_E_CONFIG', () => {
  assert.equal(loadServeConfig([], {}).workers, '1');
  assert.equal(loadServeConfig(['--workers', '4'], {}).workers, '4');
  assert.equal(loadServeConfig([], { FLURRY_WORKERS: 'auto' }).workers, 'auto');
  for (const bad of ['0', 'all', '-2', '1000'])
    assert.throws(
      () => loadServeConfig(['--workers', bad], {}),
      (e: FlurryError) => e.code === 'FLURRY_E_CONFIG' && /workers/.test(e.message),
    );
});

test('resolveWorkers and nodeIdCapacity', () => {
  assert.equal(resolveWorkers('1'), 1);
  assert.equal(resolveWorkers('16'), 16);
  assert.equal(
    resolveWorkers('auto', () => 12),
    12,
  );
  assert.equal(resolveWorkers(undefined), 1);
  assert.throws(() => resolveWorkers('0'), /FLURRY_E_CONFIG|invalid setting workers/);
  assert.equal(nodeIdCapacity(Layout.from('twitter'), {}), 1024);
  assert.equal(nodeIdCapacity(Layout.from('twitter'), { datacenter: 1 }), 32);
});

test('aggregateMetrics sums counters and labels Flurry gauges by worker', async () => {
  const per = [];
  for (let slot = 0; slot < 2; slot++) {
    const r = new Registry();
    new Counter({ name: 'flurry_ids_issued_total', help: 'x', registers: [r] }).inc(10 + slot);
    new Gauge({ name: 'flurry_ready', help: 'x', registers: [r] }).set(slot);
    per.push({ slot, metrics: await r.getMetricsAsJSON() });
  }
  const text = await aggregateMetrics(per, new Registry());
  assert.match(text, /^flurry_ids_issued_total 21$/m);
  assert.match(text, /^flurry_ready\{worker="0"\} 0$/m);
  assert.match(text, /^flurry_ready\{worker="1"\} 1$/m);
});
