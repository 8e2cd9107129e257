// The issuer (issuing.ts) and the service core's steps on their own: a real leased
// generator on a temporary file: registry, a manual clock for the fenced case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, ManualClock } from '@flurry/core';
import { inProcess } from './http/in-process.js';

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof FlurryError, String(err));
    return err.code;
  }
  return 'none';
}

test('GIVEN a service core before its lease THEN the issuer refuses with FLURRY_E_UNAVAILABLE, /readyz and the ID routes answer 503 with Retry-After, /healthz 200', async () => {
  const svc = await inProcess([], {}, undefined, {}, false);
  try {
    assert.equal(
      codeOf(() => svc.core.issuer.next()),
      'FLURRY_E_UNAVAILABLE',
    );
    assert.equal(
      codeOf(() => svc.core.issuer.fill(new BigUint64Array(2), 0, 2)),
      'FLURRY_E_UNAVAILABLE',
    );
    assert.equal(svc.core.issuer.issued(), 0);
    assert.equal(svc.core.notReady()?.code, 'FLURRY_E_UNAVAILABLE');
    for (const url of ['/v1/ids/next', '/v1/ids?count=2', '/readyz']) {
      const r = await svc.get(url);
      assert.equal(r.status, 503, url);
      assert.equal(r.headers['retry-after'], '1');
      assert.match(r.body, /"code":"FLURRY_E_UNAVAILABLE".*the service is starting.*retry shortly/);
    }
    assert.equal((await svc.get('/healthz')).status, 200);
  } finally {
    await svc.stop();
  }
});

test('GIVEN next, nextString and fill through the issuer THEN the issued total counts each ID once, and every route issues through it', async () => {
  const svc = await inProcess([]);
  try {
    const issuer = svc.core.issuer;
    const a = issuer.next();
    const b = BigInt(issuer.nextString());
    const arr = new BigUint64Array(10);
    assert.equal(issuer.fill(arr, 0, 10), 10);
    assert.ok(a < b && b < arr[0] && arr[0] < arr[9]);
    assert.equal(issuer.issued(), 12);
    await svc.get('/v1/ids/next');
    await svc.get('/v1/ids?count=100');
    await svc.get('/api/snowflake/get/k');
    assert.equal(issuer.issued(), 12 + 1 + 100 + 1);
    const m = await svc.get('/metrics');
    assert.match(m.body, /^flurry_ids_issued_total 114$/m);
  } finally {
    await svc.stop();
  }
});

test('GIVEN a fenced issuer refusing 50 calls THEN the metrics count all 50 and the log has one warning for the episode', async () => {
  const clock = new ManualClock(Date.now());
  const svc = await inProcess([], {}, clock, { ttlMs: 3000 });
  try {
    svc.core.issuer.next();
    clock.advance(3000);
    for (let i = 0; i < 50; i++)
      assert.equal(
        codeOf(() => svc.core.issuer.nextString()),
        'FLURRY_E_LEASE_EXPIRED',
      );
    const m = await svc.get('/metrics');
    assert.match(m.body, /^flurry_fenced_total 50$/m);
    const warned = svc.logs.filter((l) => l.msg === 'refused to issue: lease deadline passed');
    assert.equal(warned.length, 1, JSON.stringify(svc.logs));
    assert.equal(warned[0].level, 'warn');
  } finally {
    await svc.stop();
  }
});
