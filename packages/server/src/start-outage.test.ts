// Issue 24, defect 2: an outage at start is not bad input. `flurry serve` listens, reports
// not ready (/readyz, /v1/status, the log), retries the store and the registry, and becomes
// ready once they answer; bad input still exits 2; one-shot commands facing an outage exit 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { FlurryError } from '@flurry/core';
import { freePort, startDatabase, startEngine } from '@flurry/coordination/testing';
import { loadServeConfig } from './config/index.js';
import { startService, type ServiceLogger } from './service.js';
import type { RetryTimers } from './start-retry.js';
import { httpGet, jsonBody, runFlurry, startFlurry, type FlurryProcess } from './test-support.js';

type ErrorBody = { error: { code: string; message: string } };

async function notReadyBecause(svc: FlurryProcess, pattern: RegExp): Promise<void> {
  const r = await httpGet(svc.port, '/readyz');
  assert.equal(r.status, 503, r.body);
  const body = jsonBody<ErrorBody>(r.body);
  assert.equal(body.error.code, 'FLURRY_E_UNAVAILABLE');
  assert.match(body.error.message, pattern);
  const status = jsonBody<{ notReady: { code: string; message: string } | null }>(
    (await httpGet(svc.port, '/v1/status')).body,
  );
  assert.equal(status.notReady?.code, 'FLURRY_E_UNAVAILABLE');
  assert.match(status.notReady.message, pattern);
}

test('GIVEN PostgreSQL down when serve --sequences starts THEN it listens, is not ready and says why, and becomes ready once PostgreSQL answers', async () => {
  const pg = await startDatabase('postgres');
  let svc: FlurryProcess | undefined;
  try {
    await pg.kill(); // the same port and data, nothing listening
    svc = await startFlurry({ args: ['--sequences', pg.url, '--auto-create'], until: 'listening' });
    const logged = await svc.waitForLog((l) => l.component === 'start' && l.waitingFor === 'store');
    assert.equal(logged.code, 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE');
    assert.equal(svc.process.exitCode, null, 'still running');
    await notReadyBecause(svc, /sequence store postgres:\/\/flurry:\*\*\*@127\.0\.0\.1:\d+.* is not answering/);
    const seq = await httpGet(svc.port, '/v1/sequences/order/next');
    assert.equal(seq.status, 503, `segment mode is configured, not off: ${seq.body}`);
    assert.ok(!JSON.stringify(svc.logs).includes(pg.connection.password), 'the password is never logged');

    await pg.restart();
    await svc.waitForLog((l) => l.msg === 'ready', 60_000);
    assert.equal((await httpGet(svc.port, '/readyz')).status, 200);
    const status = jsonBody<{ notReady: unknown }>((await httpGet(svc.port, '/v1/status')).body);
    assert.equal(status.notReady, null);
    const next = await httpGet(svc.port, '/v1/sequences/order/next');
    assert.equal(next.status, 200, next.body);
    assert.ok(svc.logs.some((l) => l.component === 'start' && /answers; starting/.test(String(l.msg))));
    assert.equal((await svc.stop()).code, 0, svc.stderr());
    svc = undefined;

    // Bad input still stops the start: refused credentials, a table that is missing and cannot be created exit 2.
    const serve = (url: string) => runFlurry(['serve', '--port', '0', '--sequences', url], { FLURRY_ALLOW_ROOT: '1' });
    const [bad, noTable] = await Promise.all([
      serve(pg.url.replace(`:${pg.connection.password}@`, ':wrong@')),
      serve(`${pg.url}?table=no_such_schema.leaf_alloc`),
    ]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /^flurry: FLURRY_E_SEQUENCE_AUTH: /m);
    assert.equal(noTable.code, 2, noTable.stderr);
    assert.match(
      noTable.stderr,
      /^flurry: FLURRY_E_SEQUENCE_STORE_CORRUPT: the table no_such_schema\.leaf_alloc .* is missing/m,
    );
  } finally {
    await svc?.stop('SIGKILL');
    await pg.stop();
  }
});

test('GIVEN the Redis registry down when serve starts THEN it listens, is not ready and says why, and leases a node ID once Redis answers', async () => {
  const redis = await startEngine('redis');
  let svc: FlurryProcess | undefined;
  try {
    await redis.kill();
    svc = await startFlurry({ registry: redis.url, until: 'listening' });
    const logged = await svc.waitForLog((l) => l.component === 'start' && l.waitingFor === 'registry');
    assert.equal(logged.code, 'FLURRY_E_REGISTRY_UNREACHABLE');
    await notReadyBecause(svc, /node-ID registry redis:\/\/127\.0\.0\.1:\d+\/0 is not answering/);
    assert.equal((await httpGet(svc.port, '/v1/ids/next')).status, 503);

    await redis.restart();
    const ready = await svc.waitForLog((l) => l.msg === 'ready', 60_000);
    assert.equal(ready.registry, redis.url);
    assert.equal((await httpGet(svc.port, '/readyz')).status, 200);
    assert.equal((await httpGet(svc.port, '/v1/ids/next')).status, 200);
    assert.equal((await svc.stop()).code, 0, svc.stderr());
    svc = undefined;
  } finally {
    await svc?.stop('SIGKILL');
    await redis.stop();
  }
});

test('GIVEN an unreachable registry or store of each kind THEN serve waits, not ready, never prints a password, and SIGTERM during the wait exits 0', async () => {
  const port = await freePort();
  const at = `127.0.0.1:${port}`;
  const cases: Array<{ registry?: string; args?: string[]; step: 'store' | 'registry'; shown: string }> = [
    { registry: `redis://:hunter2@${at}/0`, step: 'registry', shown: `redis://:***@${at}/0` },
    { registry: `etcd://${at}/flurry`, step: 'registry', shown: `etcd://${at}/flurry` },
    { registry: `zookeeper://${at}/flurry`, step: 'registry', shown: `zookeeper://${at}/flurry` },
    { registry: `postgres://u:hunter2@${at}/db`, step: 'registry', shown: `postgres://u:***@${at}/db` },
    { registry: `mysql://u:hunter2@${at}/db`, step: 'registry', shown: `mysql://u:***@${at}/db` },
    { args: ['--sequences', `mysql://u:hunter2@${at}/db`], step: 'store', shown: `mysql://u:***@${at}/db` },
    { args: ['--sequences', `redis://:hunter2@${at}/0`], step: 'store', shown: `redis://:***@${at}/0` },
  ];
  const escape = (x: string) => x.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  await Promise.all(
    cases.map(async (c) => {
      const svc = await startFlurry({
        ...(c.registry !== undefined ? { registry: c.registry } : {}),
        args: c.args ?? [],
        until: 'listening',
      });
      const what = c.registry ?? c.args?.join(' ');
      try {
        const logged = await svc.waitForLog((l) => l.component === 'start' && l.waitingFor === c.step, 30_000);
        assert.match(String(logged.code), /^FLURRY_E_(REGISTRY_UNREACHABLE|SEQUENCE_STORE_UNAVAILABLE)$/, what);
        await notReadyBecause(svc, new RegExp(`${escape(c.shown)}.* is not answering`));
      } finally {
        const stopped = await svc.stop('SIGTERM');
        assert.equal(stopped.code, 0, `${what}: ${svc.stderr()}`);
      }
      assert.ok(
        svc.logs.some((l) => l.msg === 'signal received while starting; stopped'),
        what,
      );
      assert.ok(!svc.stderr().includes('hunter2') && !JSON.stringify(svc.logs).includes('hunter2'), what);
    }),
  );
});

test('GIVEN one-shot commands facing an engine or store that does not answer THEN each exits 1 (retryable) with the outage code, never 2', async () => {
  const closed = await freePort();
  const at = `127.0.0.1:${closed}`;
  const cases: Array<[string[], RegExp]> = [
    [['next', '--registry', `etcd://${at}/flurry`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['next', '--registry', `redis://${at}/0`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['next', '--registry', `zookeeper://${at}/flurry`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['next', '--registry', `postgres://u:pw@${at}/db`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['next', '--registry', `mysql://u:pw@${at}/db`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['status', '--registry', `redis://${at}/0`, '--cluster', 'c'], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['sequences', 'list', '--store', `postgres://u:pw@${at}/db`], /FLURRY_E_SEQUENCE_STORE_UNAVAILABLE/],
    [['sequences', 'list', '--store', `mysql://u:pw@${at}/db`], /FLURRY_E_SEQUENCE_STORE_UNAVAILABLE/],
    [['sequences', 'show', 'order', '--store', `redis://${at}/0`], /FLURRY_E_SEQUENCE_STORE_UNAVAILABLE/],
    [['sql', '--generate', '--registry', `postgres://u:pw@${at}/db`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['sql', '--generate', '--registry', `mysql://u:pw@${at}/db`], /FLURRY_E_REGISTRY_UNREACHABLE/],
    [['registry', 'init', `postgres://u:pw@${at}/db`], /FLURRY_E_REGISTRY_UNREACHABLE/],
  ];
  const results = await Promise.all(cases.map(([argv]) => runFlurry(argv, {}, 60_000)));
  results.forEach((r, i) => {
    const [argv, want] = cases[i];
    assert.equal(r.code, 1, `${argv.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^flurry: ${want.source}: `, 'm'), `${argv.join(' ')}: ${r.stderr}`);
    assert.ok(!r.stderr.includes(':pw@'), r.stderr);
    // A store that never answered has nothing buffered: the message says what to do, not "from memory".
    if (want.source.includes('SEQUENCE')) assert.match(r.stderr, /reachable from this host, then retry \(an outage/);
  });
});

test('GIVEN startService with injected timers and a registry that does not answer THEN each failed try is one timer of the backoff, and aborting leaves nothing listening', async () => {
  const closed = await freePort();
  const config = loadServeConfig(['--port', '0', '--registry', `redis://127.0.0.1:${closed}/0`], {});
  const delays: number[] = [];
  const fired: Array<() => void> = [];
  const timers: RetryTimers = {
    setTimeout: (fn, ms) => {
      delays.push(ms);
      fired.push(fn);
      return fn;
    },
    clearTimeout: () => undefined,
  };
  let port = 0;
  const lines: Array<Record<string, unknown>> = [];
  const logger: ServiceLogger = {
    info: (o, m) => {
      if (m?.startsWith('http listening')) port = (o as { port: number }).port;
    },
    warn: (o, m) => {
      if ((o as { waitingFor?: string }).waitingFor !== undefined) lines.push({ ...o, msg: m });
    },
    error: () => undefined,
    debug: () => undefined,
    child: () => logger,
  };
  const stop = new AbortController();
  const started = startService(config, logger, {
    signal: stop.signal,
    retry: { timers, initialMs: 1000, maxMs: 4000 },
  });
  started.catch(() => undefined);
  for (const want of [[1000], [1000, 2000], [1000, 2000, 4000]]) {
    for (let i = 0; i < 200 && delays.length < want.length; i++) await delay(25);
    assert.deepEqual(delays, want, 'one timer per failed try, doubling up to the maximum');
    const r = await httpGet(port, '/readyz');
    assert.equal(r.status, 503);
    assert.match(
      jsonBody<ErrorBody>(r.body).error.message,
      new RegExp(`try ${want.length} failed, the next in ${want.at(-1)} ms`),
    );
    if (want.length < 3) fired.shift()?.();
  }
  assert.deepEqual(
    lines.map((l) => [l.waitingFor, l.code, l.attempt]),
    [1, 2, 3].map((n) => ['registry', 'FLURRY_E_REGISTRY_UNREACHABLE', n]),
  );
  stop.abort();
  await assert.rejects(started, (e: FlurryError) => e.code === 'FLURRY_E_UNAVAILABLE');
  await assert.rejects(httpGet(port, '/healthz'), 'the listener is closed');
});
