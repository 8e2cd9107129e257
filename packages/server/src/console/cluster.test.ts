/**
 * `/v1/cluster` against a real etcd (started by the harness): this service and a second
 * holder whose lease stops renewing (`autoRenew: false`, as a SIGSTOPped process would). The
 * second turns `stale` within one renewal interval + the estimate's error + the slack + one
 * cache period, then disappears after its TTL; readers share one registry read per period;
 * a registry that cannot be read answers 503 with its code. Also: a real service with an open
 * event stream stops promptly.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import path from 'node:path';
import { Layout } from '@flurry/core';
import { openRegistry } from '@flurry/coordination';
import { startEngine, type RunningEngine } from '@flurry/coordination/testing';
import { loadServeConfig } from '../config/index.js';
import { inProcess } from '../http/in-process.js';
import { startService, type ServiceLogger } from '../service.js';
import { tempDir } from '../test-support.js';
import { STALE_SLACK_MS } from './cluster.js';
import type { ClusterBody } from './types.js';

const TTL_MS = 3000; // whole seconds (etcd)
const RENEW_MS = 1000;
const CACHE_MS = 1000;

let engine: RunningEngine;
before(async () => {
  engine = await startEngine('etcd');
});
after(() => engine?.stop());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('GIVEN this service and a holder that stops renewing on etcd THEN it turns stale within one renewal interval + slack and disappears after its TTL', async () => {
  const cluster = `c${Date.now().toString(36)}`;
  const svc = await inProcess(['--registry', engine.url, '--cluster', cluster, '--layout', 'leaf'], {}, undefined, {
    ttlMs: TTL_MS,
    renewIntervalMs: RENEW_MS,
  });
  const other = await openRegistry(engine.url, {
    cluster,
    ttlMs: TTL_MS,
    renewIntervalMs: RENEW_MS,
    autoRenew: false,
    stateDir: tempDir('other-state'),
  });
  try {
    const lease = await other.acquire(Layout.from('leaf'));
    const acquiredAt = Date.now();
    const first = JSON.parse((await svc.get('/v1/cluster')).body) as ClusterBody;
    assert.equal(first.cluster, cluster);
    assert.equal(first.kind, 'etcd');
    assert.equal(first.ttlMs, TTL_MS);
    assert.equal(first.renewIntervalMs, RENEW_MS);
    assert.equal(first.holders.length, 2, JSON.stringify(first));
    const self = first.holders.find((h) => h.self);
    assert.ok(self, 'this service is listed as self');
    assert.equal(self.pid, process.pid);
    assert.deepEqual(self.node, svc.core.issuer.leased?.generator.node);
    const them = first.holders.find((h) => !h.self)!;
    assert.equal(them.slot, lease.slot);
    assert.equal(them.state, 'live');
    assert.equal(typeof them.version, 'string');
    assert.ok(them.expiresAtMs! > first.now);
    const staleBound = RENEW_MS + STALE_SLACK_MS + 2 * CACHE_MS + 300; // the reader's own measure (cluster.ts)
    const goneBound = TTL_MS + 1000 + CACHE_MS + 500; // etcd expires whole seconds late by up to 1 s
    let selfStale = 0; // a late renewal of this service under load shows as stale: counted, printed
    let staleAfter = -1;
    let goneAfter = -1;
    while (Date.now() - acquiredAt < goneBound + 3000) {
      const b = JSON.parse((await svc.get('/v1/cluster')).body) as ClusterBody;
      if (b.holders.find((h) => h.self)?.state !== 'live') selfStale++;
      const t = b.holders.find((h) => h.slot === lease.slot && !h.self);
      if (t?.state === 'stale' && staleAfter < 0) staleAfter = Date.now() - acquiredAt;
      if (!t) {
        goneAfter = Date.now() - acquiredAt;
        break;
      }
      await sleep(100);
    }
    console.log(
      `# stale after ${staleAfter} ms (bound ${staleBound} = renew ${RENEW_MS} + slack ${STALE_SLACK_MS} + 2 × cache ${CACHE_MS} + 300), ` +
        `gone after ${goneAfter} ms (bound ${goneBound} = ttl ${TTL_MS} + 1000 + cache ${CACHE_MS} + 500)`,
    );
    console.log(`# this service was shown stale in ${selfStale} reads (its own renewals late by more than the slack)`);
    assert.ok(staleAfter >= RENEW_MS, `not stale before one renewal interval (${staleAfter} ms)`);
    assert.ok(staleAfter <= staleBound, `stale within ${staleBound} ms (${staleAfter})`);
    assert.ok(
      goneAfter >= TTL_MS - 100 && goneAfter <= goneBound,
      `gone after the TTL, within ${goneBound} ms (${goneAfter})`,
    );
    // Readers share one registry read per cache period.
    await sleep(CACHE_MS + 50);
    const before = svc.core.console.data.registryReads;
    const answers = await Promise.all(Array.from({ length: 5 }, () => svc.get('/v1/cluster')));
    assert.ok(answers.every((a) => a.status === 200));
    assert.equal(svc.core.console.data.registryReads - before, 1, 'five callers, one registry read');
  } finally {
    await other.close();
    await svc.stop();
  }
});

test('GIVEN the registry cannot be read THEN /v1/cluster answers 503 with the registry code and the stream sends cluster-error', async () => {
  const cluster = `u${Date.now().toString(36)}`;
  const svc = await inProcess(['--registry', engine.url, '--cluster', cluster, '--layout', 'leaf'], {}, undefined, {
    ttlMs: 10_000,
    connectTimeoutMs: 800,
  });
  try {
    assert.equal((await svc.get('/v1/cluster')).status, 200);
    engine.pause();
    await sleep(CACHE_MS + 50);
    const r = await svc.get('/v1/cluster', {}, 'GET');
    assert.equal(r.status, 503, r.body);
    assert.match(r.body, /FLURRY_E_REGISTRY_UNREACHABLE/);
    assert.ok(!r.body.includes('password'));
    assert.equal(r.headers['retry-after'], '1');
    const stream = svc.get('/v1/events');
    await sleep(300);
    svc.core.console.streams.close();
    const s = await stream;
    assert.match(s.body, /event: cluster-error\ndata: \{"code":"FLURRY_E_REGISTRY_UNREACHABLE"/);
  } finally {
    engine.resume();
    await svc.stop();
  }
});

test('GIVEN a real service with an open event stream WHEN it is closed THEN it stops promptly and the stream ends', async () => {
  const dir = tempDir('console-close');
  const config = loadServeConfig(
    ['--port', '0', '--registry', `file:${path.join(dir, 'reg')}`, '--shutdown-timeout-ms', '10000'],
    { XDG_STATE_HOME: dir },
  );
  const quiet = (): void => undefined;
  const logger: ServiceLogger = { info: quiet, warn: quiet, error: quiet, debug: quiet, child: () => logger };
  const svc = await startService(config, logger);
  let bytes = 0;
  const ended = new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: svc.port, path: '/v1/events' }, (res) => {
      assert.equal(res.statusCode, 200);
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', resolve);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  await sleep(300);
  const t0 = Date.now();
  await svc.close();
  await ended;
  const took = Date.now() - t0;
  console.log(`# service with an open stream closed in ${took} ms (shutdown timeout 10000 ms)`);
  assert.ok(bytes > 0, 'the stream delivered frames');
  assert.ok(took < 3000, `closed promptly (${took} ms)`);
});
