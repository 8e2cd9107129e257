// The UUIDv7 routes (issue 26), in-process over a real file registry: UUIDs on the service's
// own Snowflake lease (its node value inside), fenced with it, decoded under its widths,
// and bad input refused with coded 400s.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, decodeUuid, isUuidV7 } from '@flurry/core';
import { inProcess } from './in-process.js';

function errorOf(body: string): { code: string; message: string } {
  return (JSON.parse(body) as { error: { code: string; message: string } }).error;
}

describe('GET /v1/uuids (in-process)', () => {
  test('GIVEN a twitter service pinned to datacenter 3 THEN /v1/uuids/next and /v1/uuids?count=N issue strictly increasing UUIDv7 holding its node value (datacenter × 32 + worker)', async () => {
    const svc = await inProcess(['--layout', 'twitter', '--node', 'datacenter=3']);
    try {
      const node = svc.core.issuer.leased!.generator.node;
      const expected = node.datacenter * 32 + node.worker;
      const one = await svc.get('/v1/uuids/next');
      assert.equal(one.status, 200, one.body);
      assert.match(one.headers['content-type'], /application\/json/);
      const first = (JSON.parse(one.body) as { uuid: string }).uuid;
      assert.ok(isUuidV7(first), first);
      assert.equal(decodeUuid(first).node, expected);
      const text = await svc.get('/v1/uuids/next', { accept: 'text/plain' });
      assert.equal(text.status, 200);
      assert.match(text.body, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.ok(text.body > first);
      const batch = await svc.get('/v1/uuids?count=500');
      assert.equal(batch.status, 200, batch.body);
      const uuids = (JSON.parse(batch.body) as { uuids: string[] }).uuids;
      assert.equal(uuids.length, 500);
      let prev = text.body;
      for (const u of uuids) {
        assert.ok(u > prev, `${u} after ${prev}`);
        assert.equal(decodeUuid(u).node, expected);
        prev = u;
      }
      const b32 = await svc.get('/v1/uuids?count=3&format=base32');
      const forms = (JSON.parse(b32.body) as { uuids: string[] }).uuids;
      assert.equal(forms.length, 3);
      for (const f of forms) assert.match(f, /^[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.ok(decodeUuid(forms[0]).uuid > prev, 'base32 text of later UUIDs');
      const next62 = await svc.get('/v1/uuids/next?format=base62', { accept: 'text/plain' });
      assert.match(next62.body, /^[0-9A-Za-z]{22}$/);
    } finally {
      await svc.stop();
    }
  });

  test('GIVEN a UUID in any form THEN /v1/uuids/{uuid} decodes it under the service widths (RFC 9562 test vector: 2022-02-22T19:22:22.000Z)', async () => {
    const svc = await inProcess([]);
    try {
      const r = await svc.get('/v1/uuids/017F22E2-79B0-7CC3-98C4-DC0C0C07398F');
      assert.equal(r.status, 200, r.body);
      assert.deepEqual(JSON.parse(r.body), {
        uuid: '017f22e2-79b0-7cc3-98c4-dc0c0c07398f',
        version: 7,
        variant: 'RFC 9562',
        unixMs: 1645557742000,
        timestamp: '2022-02-22T19:22:22.000Z',
        node: 19904,
        sequence: 3345804,
        nodeBits: 16,
        sequenceBits: 22,
      });
      const b62 = await svc.get('/v1/uuids/02p5oQZoHTv0zeY5yG21K3?format=base62');
      assert.equal((JSON.parse(b62.body) as { uuid: string }).uuid, '017f22e2-79b0-7cc3-98c4-dc0c0c07398f');
      const b32 = await svc.get('/v1/uuids/01FWHE4YDGFK1SHH6W1G60EECF');
      assert.equal((JSON.parse(b32.body) as { unixMs: number }).unixMs, 1645557742000);
      const issued = JSON.parse((await svc.get('/v1/uuids/next')).body) as { uuid: string };
      const d = JSON.parse((await svc.get(`/v1/uuids/${issued.uuid}`)).body) as { node: number };
      assert.equal(d.node, svc.core.issuer.leased!.generator.node.worker);
    } finally {
      await svc.stop();
    }
  });

  test('GIVEN bad input THEN 400 with a FLURRY_E_UUID_* code (or FLURRY_E_BATCH_COUNT) whose message says what is wrong', async () => {
    const svc = await inProcess([]);
    try {
      const cases: Array<[string, string, RegExp]> = [
        ['/v1/uuids/017f22e2-79b0-4cc3-98c4-dc0c0c07398f', 'FLURRY_E_UUID_VERSION', /version/i],
        ['/v1/uuids/017f22e2-79b0-7cc3-18c4-dc0c0c07398f', 'FLURRY_E_UUID_VARIANT', /variant/i],
        ['/v1/uuids/017f22e2-79b0', 'FLURRY_E_UUID_MALFORMED', /length|characters/i],
        ['/v1/uuids/017f22e2-79b0-7cc3-98c4-dc0c0c07398g', 'FLURRY_E_UUID_MALFORMED', /"g"|character/i],
        ['/v1/uuids/next?format=base64', 'FLURRY_E_UUID_FORMAT', /base64.*canonical, hex, base32, base58, base62/],
        ['/v1/uuids?count=2&format=x&format=y', 'FLURRY_E_UUID_FORMAT', /given 2 times/],
        ['/v1/uuids?count=0', 'FLURRY_E_BATCH_COUNT', /\/v1\/uuids\?count=100/],
        ['/v1/uuids', 'FLURRY_E_BATCH_COUNT', /missing/],
      ];
      for (const [url, code, message] of cases) {
        const r = await svc.get(url);
        assert.equal(r.status, 400, `${url}: ${r.body}`);
        const e = errorOf(r.body);
        assert.equal(e.code, code, url);
        assert.match(e.message, message, url);
      }
      assert.deepEqual(svc.errors, []);
    } finally {
      await svc.stop();
    }
  });

  test('GIVEN the lease deadline passes THEN the UUID routes answer 503 FLURRY_E_LEASE_EXPIRED like the ID routes (one lease fences both), and decoding still answers', async () => {
    const clock = new ManualClock(Date.now());
    const svc = await inProcess([], {}, clock, { ttlMs: 3000 });
    try {
      assert.equal((await svc.get('/v1/uuids/next')).status, 200);
      clock.advance(3000);
      for (const url of ['/v1/uuids/next', '/v1/uuids?count=3', '/v1/ids/next']) {
        const r = await svc.get(url);
        assert.equal(r.status, 503, `${url}: ${r.body}`);
        assert.equal(errorOf(r.body).code, 'FLURRY_E_LEASE_EXPIRED');
        assert.equal(r.headers['retry-after'], '1');
      }
      assert.equal((await svc.get('/v1/uuids/017f22e2-79b0-7cc3-98c4-dc0c0c07398f')).status, 200);
      const refused = svc.logs.filter((l) => String(l.msg).startsWith('refused to issue: lease deadline passed'));
      assert.ok(refused.length >= 1, 'the refusal episode is logged');
      assert.deepEqual(svc.errors, [], 'a refusal is not an unexpected error');
      // Re-acquired (the service logs the lost lease): the next UUID ends the UUIDs' refusal episode (one info line).
      assert.ok(await svc.core.issuer.leased!.lease.renewNow());
      assert.equal((await svc.get('/v1/uuids/next')).status, 200);
      const resumed = (l: Record<string, unknown>) =>
        typeof l.msg === 'string' && l.msg.startsWith('issuing resumed: the lease is valid again');
      assert.equal(svc.logs.filter(resumed).length, 1, JSON.stringify(svc.logs.map((l) => l.msg)));
    } finally {
      await svc.stop();
    }
  });

  test('GIVEN a service still starting (no lease yet) THEN /v1/uuids/next answers 503 FLURRY_E_UNAVAILABLE', async () => {
    const svc = await inProcess([], {}, undefined, {}, false);
    try {
      const r = await svc.get('/v1/uuids/next');
      assert.equal(r.status, 503, r.body);
      assert.equal(errorOf(r.body).code, 'FLURRY_E_UNAVAILABLE');
    } finally {
      await svc.stop();
    }
  });
});
