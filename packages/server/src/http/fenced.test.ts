// The 503 an HTTP caller gets while the instance is fenced (issue 17): in-process, on a
// manual clock, with a real leased generator whose deadline passes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, Generator, Layout, ManualClock } from '@flurry/core';
import { forHttpCaller } from './handler.js';
import { inProcess } from './in-process.js';

const twitter = Layout.from('twitter');

function errorOf(body: string): { code: string; message: string } {
  const parsed = JSON.parse(body) as { error: { code: string; message: string } };
  assert.equal(typeof parsed.error.code, 'string');
  assert.equal(typeof parsed.error.message, 'string');
  assert.ok(!/\n\s+at /.test(parsed.error.message), 'no stack trace');
  return parsed.error;
}

describe('a fenced service (in-process, manual clock)', () => {
  test('GIVEN the lease deadline passes without a renewal THEN the ID routes answer 503 FLURRY_E_LEASE_EXPIRED with Retry-After, telling the caller to retry after it or use another instance, never to acquire a lease', async () => {
    const clock = new ManualClock(Date.now());
    const svc = await inProcess([], {}, clock, { ttlMs: 3000 });
    try {
      assert.equal((await svc.get('/v1/ids/next')).status, 200);
      clock.advance(3000);
      for (const url of ['/v1/ids/next', '/v1/ids?count=3', '/api/snowflake/get/k']) {
        const r = await svc.get(url);
        assert.equal(r.status, 503, `${url}: ${r.body}`);
        assert.equal(r.headers['retry-after'], '1');
        const e = errorOf(r.body);
        assert.equal(e.code, 'FLURRY_E_LEASE_EXPIRED');
        assert.doesNotMatch(e.message, /acquire a new lease/i);
        assert.match(e.message, /expired \d+ ms ago/);
        assert.match(e.message, /Retry after the Retry-After delay \(1 s\) or send the request to another instance/);
      }
      const ready = await svc.get('/readyz');
      assert.equal(ready.status, 503);
      assert.equal(errorOf(ready.body).code, 'FLURRY_E_LEASE_EXPIRED');
      assert.deepEqual(svc.errors, [], 'a refusal is not an unexpected error');
    } finally {
      await svc.stop();
    }
  });

  test("GIVEN the generator's refusal for a lost or released lease THEN the HTTP caller's message names neither action it cannot take and keeps code and details", () => {
    const lost = new Generator({
      layout: twitter,
      node: { datacenter: 0, worker: 0 },
      lease: { node: { datacenter: 0, worker: 0 }, deadline: -Infinity, notBeforeMs: 0, attach: () => undefined },
    });
    let thrown: unknown;
    try {
      lost.next();
    } catch (err) {
      thrown = err;
    }
    assert.ok(
      thrown instanceof FlurryError && /Acquire a new lease/.test(thrown.message),
      'the core speaks to the lease holder',
    );
    const e = forHttpCaller(thrown) as FlurryError;
    assert.equal(e.code, 'FLURRY_E_LEASE_EXPIRED');
    assert.deepEqual(e.details, thrown.details);
    assert.doesNotMatch(e.message, /acquire a new lease/i);
    assert.match(e.message, /lease was lost or released/);
    assert.match(e.message, /Retry after the Retry-After delay \(1 s\) or send the request to another instance/);
    const other = new FlurryError('FLURRY_E_CLOCK_BACKWARDS', 'the clock went back');
    assert.equal(forHttpCaller(other), other, 'other errors pass unchanged');
  });
});
