import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { ensureDebianPackage, startEngine } from '@flurry/coordination/testing';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FLURRY_BIN, httpGet, jsonBody, runFlurry, startFlurry, tempDir } from './test-support.js';
import { spawn } from 'node:child_process';

const PIN = ['--node', 'datacenter=3,worker=5'];

async function ids(port: number, n: number): Promise<bigint[]> {
  const r = await httpGet(port, `/v1/ids?count=${n}`);
  assert.equal(r.status, 200, r.body);
  return jsonBody<{ ids: string[] }>(r.body).ids.map(BigInt);
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (let i = 0; i < 10_000; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) break;
    await delay(50);
  }
  assert.fail(`${what} did not happen within ${timeoutMs} ms`);
}

test('GIVEN SIGTERM THEN the server finishes, releases its lease and exits 0; a second server takes the same node ID at once and issues above every earlier ID', async () => {
  const dir = tempDir('shutdown');
  try {
    // A long TTL: if the lease were not released, the second server could not have the pinned node for a minute.
    const common = { registryDir: dir, args: [...PIN, '--lease-ttl-ms', '60000'] };
    const first = await startFlurry(common);
    const before = [...(await ids(first.port, 10_000)), ...(await ids(first.port, 10_000))];
    const stopped = await first.stop('SIGTERM', 15_000);
    assert.equal(stopped.code, 0, first.stderr());
    assert.ok(
      first.logs.some((l) => l.msg === 'lease released with the final high-water mark'),
      JSON.stringify(first.logs.slice(-5)),
    );
    assert.ok(first.logs.some((l) => l.msg === 'stopped'));

    const t0 = Date.now();
    const second = await startFlurry(common);
    const startMs = Date.now() - t0;
    try {
      assert.ok(startMs < 10_000, `second server ready in ${startMs} ms`);
      const ready = jsonBody<{ node: unknown }>((await httpGet(second.port, '/readyz')).body);
      assert.deepEqual(ready.node, { datacenter: 3, worker: 5 });
      const max = before.reduce((m, x) => (x > m ? x : m), 0n);
      const after = await ids(second.port, 1000);
      for (const id of after) assert.ok(id > max, `${id} above the first server's ${max}`);
    } finally {
      assert.equal((await second.stop()).code, 0, second.stderr());
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN SIGINT during a stream of requests THEN in-flight requests complete and the exit code is 0', async () => {
  const svc = await startFlurry();
  const inflight = Array.from({ length: 20 }, () => httpGet(svc.port, '/v1/ids?count=10000').catch((e: Error) => e));
  await delay(5);
  const stopped = svc.stop('SIGINT');
  const results = await Promise.all(inflight);
  assert.equal((await stopped).code, 0, svc.stderr());
  let ok = 0;
  for (const r of results) {
    // A request either completed with IDs or was never accepted (connection refused after close): never a broken 200.
    if (r instanceof Error) assert.match(r.message, /ECONNREFUSED|ECONNRESET|socket hang up/);
    else {
      assert.ok(r.status === 200 || r.status === 503, `status ${r.status}`);
      if (r.status === 200) {
        assert.equal(jsonBody<{ ids: string[] }>(r.body).ids.length, 10_000);
        ok++;
      }
    }
  }
  assert.ok(ok > 0, 'some requests were in flight and completed');
});

test('GIVEN a Redis registry with a short TTL WHEN Redis is killed and restarted THEN /readyz and the ID routes turn 503 and then back to 200', async () => {
  const redis = await startEngine('redis');
  try {
    const svc = await startFlurry({ registry: redis.url, args: ['--lease-ttl-ms', '1500', '--cluster', 'readiness'] });
    try {
      assert.equal((await httpGet(svc.port, '/readyz')).status, 200);
      await redis.kill();
      const killedAt = Date.now();
      const down = await until('readyz 503', 10_000, async () => {
        const r = await httpGet(svc.port, '/readyz');
        return r.status === 503 ? r : undefined;
      });
      assert.ok(Date.now() - killedAt <= 1500 + 500, `fenced within the TTL (${Date.now() - killedAt} ms)`);
      assert.equal(down.headers['retry-after'], '1');
      assert.match(
        jsonBody<{ error: { code: string } }>(down.body).error.code,
        /^FLURRY_E_(LEASE_EXPIRED|LEASE_LOST|UNAVAILABLE)$/,
      );
      const fenced = await httpGet(svc.port, '/v1/ids/next');
      assert.equal(fenced.status, 503, fenced.body);
      assert.equal(fenced.headers['retry-after'], '1');
      const fencedError = jsonBody<{ error: { code: string; message: string } }>(fenced.body).error;
      assert.match(fencedError.code, /^FLURRY_E_/);
      // What an HTTP caller can do (issue 17): retry or go elsewhere; it cannot acquire a lease.
      assert.doesNotMatch(fencedError.message, /acquire a new lease/i);
      assert.match(fencedError.message, /Retry-After|another instance|retry/i);
      const metrics = (await httpGet(svc.port, '/metrics')).body;
      assert.match(metrics, /^flurry_ready 0$/m);
      assert.match(metrics, /^flurry_lease_deadline_seconds 0$/m);
      await redis.restart();
      await until('readyz 200', 20_000, async () =>
        (await httpGet(svc.port, '/readyz')).status === 200 ? true : undefined,
      );
      assert.equal((await httpGet(svc.port, '/v1/ids/next')).status, 200);
      assert.equal((await httpGet(svc.port, '/v1/ids?count=100')).status, 200);
      const after = (await httpGet(svc.port, '/metrics')).body;
      assert.ok(Number(/^flurry_lease_renew_failures_total (\d+)/m.exec(after)?.[1]) > 0, 'renewal failures counted');
      assert.equal(svc.process.exitCode, null);
    } finally {
      assert.equal((await svc.stop()).code, 0, svc.stderr());
    }
  } finally {
    await redis.stop();
  }
});

test('GIVEN the root user THEN serve refuses to start without --allow-root; otherwise it starts', async () => {
  const dir = tempDir('root');
  try {
    const env = { ...process.env, FLURRY_ALLOW_ROOT: '', TZ: 'UTC' };
    const child = spawn(process.execPath, [FLURRY_BIN, 'serve', '--port', '0', '--registry', `file:${dir}`], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    if (process.getuid?.() === 0) {
      const guard = new AbortController();
      const code = await Promise.race([
        exit,
        delay(15_000, 'timeout' as const, { signal: guard.signal }).catch(() => 'aborted' as const),
      ]);
      guard.abort();
      if (code === 'timeout') child.kill('SIGKILL');
      assert.equal(code, 2);
      assert.match(err, /^flurry: FLURRY_E_RUN_AS_ROOT: .*--allow-root/);
    } else {
      await until('ready log line', 15_000, () => Promise.resolve(out.includes('"msg":"ready"') ? true : undefined));
      child.kill('SIGTERM');
      assert.equal(await exit, 0, err);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN a port that is taken THEN serve exits 1 with FLURRY_E_LISTEN naming the address', async () => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  const dir = tempDir('listen');
  try {
    const r = await runFlurry(['serve', '--port', String(port), '--registry', `file:${dir}`], {
      FLURRY_ALLOW_ROOT: '1',
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`^flurry: FLURRY_E_LISTEN: cannot listen for HTTP on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`, 'm'),
    );
  } finally {
    blocker.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN the wall clock steps back 5 s under libfaketime THEN /readyz turns 503 FLURRY_E_CLOCK_BACKWARDS, no ID goes backwards, and readiness returns when the clock does', async () => {
  ensureDebianPackage('faketime', '/usr/bin/faketime');
  const lib = readdirSync('/usr/lib')
    .map((d) => path.join('/usr/lib', d, 'faketime', 'libfaketime.so.1'))
    .find((f) => existsSync(f));
  assert.ok(lib, 'libfaketime.so.1 is installed with the faketime package');
  const dir = tempDir('faketime');
  const offsetFile = path.join(dir, 'offset');
  writeFileSync(offsetFile, '+0\n');
  const svc = await startFlurry({
    env: {
      LD_PRELOAD: lib,
      FAKETIME_TIMESTAMP_FILE: offsetFile,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
  });
  try {
    const before = await ids(svc.port, 1000);
    assert.equal((await httpGet(svc.port, '/readyz')).status, 200);
    writeFileSync(offsetFile, '-5s\n');
    const down = await until('readyz 503 after the clock stepped back', 10_000, async () => {
      const r = await httpGet(svc.port, '/readyz');
      return r.status === 503 ? r : undefined;
    });
    assert.equal(jsonBody<{ error: { code: string } }>(down.body).error.code, 'FLURRY_E_CLOCK_BACKWARDS');
    assert.equal(down.headers['retry-after'], '1');
    // Whatever the generator answers meanwhile (IDs borrowed within its bound, or 503), nothing goes backwards.
    const during = await httpGet(svc.port, '/v1/ids?count=10');
    assert.ok(during.status === 200 || during.status === 503, during.body);
    const maxBefore = before[before.length - 1];
    if (during.status === 200)
      for (const id of jsonBody<{ ids: string[] }>(during.body).ids) assert.ok(BigInt(id) > maxBefore);
    writeFileSync(offsetFile, '+0\n');
    await until('readyz 200 after the clock came back', 10_000, async () =>
      (await httpGet(svc.port, '/readyz')).status === 200 ? true : undefined,
    );
    const after = await ids(svc.port, 100);
    assert.ok(after[0] > maxBefore);
    const regressions = Number(
      /^flurry_clock_regression_ms_count (\d+)/m.exec((await httpGet(svc.port, '/metrics')).body)?.[1],
    );
    assert.ok(regressions >= 1, `the generator saw the step back (${regressions} regressions counted)`);
  } finally {
    assert.equal((await svc.stop()).code, 0, svc.stderr());
    rmSync(dir, { recursive: true, force: true });
  }
});
