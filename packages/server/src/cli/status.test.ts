/**
 * `flurry status` against a real etcd (started by the harness): the table once, `--json`,
 * `--watch` until SIGINT, `--url` through a running service (with its token), bad flags
 * (FLURRY_E_USAGE, exit 2) and an unreachable registry (coded, exit 1, password never shown).
 */
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout } from '@flurry/core';
import { openRegistry, type Registry } from '@flurry/coordination';
import { startEngine, type RunningEngine } from '@flurry/coordination/testing';
import { loadServeConfig } from '../config/index.js';
import type { ClusterBody } from '../console/types.js';
import { startService, type ServiceLogger } from '../service.js';
import { FLURRY_BIN, runFlurry, tempDir } from '../test-support.js';
import { clusterTable, humanMs } from './commands/status.js';

let engine: RunningEngine;
let registry: Registry;
const CLUSTER = 'statuscli';
before(async () => {
  engine = await startEngine('etcd');
  registry = await openRegistry(engine.url, { cluster: CLUSTER, ttlMs: 5000, stateDir: tempDir('status-cli') });
  await registry.acquire(Layout.from('twitter'), { pin: { datacenter: 1 } });
  await registry.acquire(Layout.from('twitter'), { pin: { datacenter: 1 } });
});
after(async () => {
  await registry?.close();
  await engine?.stop();
});

const REG = () => ['--registry', engine.url, '--cluster', CLUSTER, '--node', 'datacenter=1'];

test('GIVEN two holders WHEN flurry status THEN the table lists both with node, host, pid, version, times, high-water, offset and state', async () => {
  const r = await runFlurry(['status', ...REG()]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0], new RegExp(`^cluster ${CLUSTER} on etcd://127\\.0\\.0\\.1:\\d+/flurry .* 2 holders at `));
  assert.match(lines[1], /^NODE\s+HOST\s+PID\s+VERSION\s+HELD SINCE\s+RENEWED\s+HIGH-WATER\s+CLOCK OFFSET\s+STATE$/);
  assert.equal(lines.length, 4);
  for (const l of lines.slice(2)) {
    assert.match(
      l,
      new RegExp(`^datacenter=1,worker=\\d+\\s+\\S+\\s+${process.pid}\\s+\\d+\\.\\d+\\.\\d+\\s+20\\d\\d-`),
    );
    assert.match(l, /ago\s+20\d\d-.*ms ±500\s+live$/);
  }
  const json = await runFlurry(['status', ...REG(), '--json']);
  assert.equal(json.code, 0, json.stderr);
  const body = JSON.parse(json.stdout) as ClusterBody;
  assert.equal(body.holders.length, 2);
  assert.ok(body.holders.every((h) => h.pid === process.pid && h.node?.datacenter === 1 && h.state === 'live'));
});

test('GIVEN --watch WHEN SIGINT arrives THEN it has redrawn the table and exits 0', async () => {
  const child = spawn(process.execPath, [FLURRY_BIN, 'status', ...REG(), '--watch', '--interval-ms', '200'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('close', r));
  const t0 = Date.now();
  while ((out.match(/^cluster /gm) ?? []).length < 3 && Date.now() - t0 < 15_000)
    await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGINT');
  const code = await exited;
  const frames = (out.match(/^cluster /gm) ?? []).length;
  console.log(`# ${frames} frames before SIGINT`);
  assert.ok(frames >= 3, out);
  assert.equal(code, 0);
});

test('GIVEN bad flags or an unreachable registry THEN coded errors: FLURRY_E_USAGE exit 2, unreachable exit 1 without the password', async () => {
  for (const args of [
    ['--bogus'],
    ['--interval-ms', '5'],
    ['--watch=yes'],
    ['extra'],
    ['--url', 'ftp://x', '--registry', 'file:'],
  ]) {
    const r = await runFlurry(['status', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^flurry: FLURRY_E_USAGE: /);
  }
  const r = await runFlurry(['status', '--registry', 'etcd://user:hunter2secret@127.0.0.1:1/x', '--cluster', 'c']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^flurry: FLURRY_E_REGISTRY_UNREACHABLE: /);
  assert.ok(!r.stderr.includes('hunter2secret'), r.stderr);
  const url = await runFlurry(['status', '--url', 'http://127.0.0.1:1']);
  assert.equal(url.code, 1);
  assert.match(
    url.stderr,
    /^flurry: FLURRY_E_UNAVAILABLE: the service at http:\/\/127\.0\.0\.1:1 could not be reached/,
  );
});

test('GIVEN a running service with a token WHEN flurry status --url THEN it reads /v1/cluster (401 without the token)', async () => {
  const token = 'status-cli-token-0123456789';
  const dir = tempDir('status-url');
  const config = loadServeConfig(
    ['--port', '0', '--registry', engine.url, '--cluster', CLUSTER, '--node', 'datacenter=1', '--token', token],
    { XDG_STATE_HOME: dir },
  );
  const quiet = (): void => undefined;
  const logger: ServiceLogger = { info: quiet, warn: quiet, error: quiet, debug: quiet, child: () => logger };
  const svc = await startService(config, logger);
  try {
    const base = `http://127.0.0.1:${svc.port}`;
    const no = await runFlurry(['status', '--url', base], { FLURRY_TOKEN: '' });
    assert.equal(no.code, 1);
    assert.match(no.stderr, /FLURRY_E_UNAUTHORIZED/);
    const ok = await runFlurry(['status', '--url', base], { FLURRY_TOKEN: token });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /3 holders/);
    assert.match(ok.stdout, /live \*$/m, 'the service marks its own row');
  } finally {
    await svc.close();
  }
});

test('GIVEN durations and an empty cluster THEN the table helpers format them', () => {
  assert.equal(humanMs(850), '850ms');
  assert.equal(humanMs(4200), '4.2s');
  assert.equal(humanMs(185_000), '3m05s');
  assert.equal(humanMs(7_440_000), '2h04m');
  const empty = clusterTable({
    now: 0,
    cluster: 'c',
    registry: 'file:/x',
    kind: 'file',
    ttlMs: 10_000,
    renewIntervalMs: 3333,
    readAtMs: 0,
    staleSlackMs: 500,
    holders: [],
  });
  assert.match(empty, /0 holders at 1970-01-01T00:00:00\.000Z\n\(no live holders\)\n$/);
});
