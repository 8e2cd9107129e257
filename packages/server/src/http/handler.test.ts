// In-process tests of the request handler: a real service core (a file: registry in a
// temporary directory, a real leased generator), requests injected without a socket
// (./inject.ts). Tests that need a real process or real sockets stay in api.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Layout, PublicIdCodec, generateKey } from '@flurry/core';
import { inProcess, type InProcess } from './in-process.js';
import { inject, type InjectResponse } from './inject.js';
import { ROUTES, ROUTE_NAMES } from './routes/index.js';

const TOKEN = 'test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const KEY = generateKey('C');
const twitter = Layout.from('twitter');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

function errorOf(body: string): { code: string; message: string } {
  const parsed = JSON.parse(body) as { error: { code: string; message: string } };
  assert.equal(typeof parsed.error.code, 'string');
  assert.equal(typeof parsed.error.message, 'string');
  assert.ok(!/\n\s+at /.test(parsed.error.message), 'no stack trace');
  return parsed.error;
}

async function expectError(
  svc: InProcess,
  p: string,
  status: number,
  code: string | RegExp,
  headers: Record<string, string> = AUTH,
  method = 'GET',
): Promise<InjectResponse> {
  const r = await svc.get(p, headers, method);
  assert.equal(r.status, status, `${method} ${p.slice(0, 60)} → ${r.status} ${r.body.slice(0, 300)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const e = errorOf(r.body);
  if (typeof code === 'string') assert.equal(e.code, code, e.message);
  else assert.match(e.code, code);
  return r;
}

describe('the HTTP API with a bearer token and a public-ID key (in-process)', () => {
  let svc: InProcess;
  before(async () => {
    svc = await inProcess([], { FLURRY_TOKEN: TOKEN, FLURRY_PUBLIC_KEY: KEY });
  });
  after(async () => {
    assert.deepEqual(svc.errors, [], 'no unexpected handler errors logged');
    await svc.stop();
  });

  test('GIVEN GET /v1/ids/next THEN {"id":"…"} as JSON, or the bare decimal with Accept: text/plain', async () => {
    const j = await svc.get('/v1/ids/next', AUTH);
    assert.equal(j.status, 200);
    assert.match(String(j.headers['content-type']), /^application\/json/);
    const id = BigInt((JSON.parse(j.body) as { id: string }).id);
    assert.match((JSON.parse(j.body) as { id: string }).id, /^[0-9]+$/);
    const t = await svc.get('/v1/ids/next', { ...AUTH, accept: 'text/plain' });
    assert.equal(t.status, 200);
    assert.match(String(t.headers['content-type']), /^text\/plain/);
    assert.match(t.body, /^[0-9]+$/);
    assert.ok(BigInt(t.body) > id);
  });

  test('GIVEN GET /v1/ids?count=N for N = 1 and the maximum THEN N increasing unique IDs', async () => {
    for (const n of [1, 10_000]) {
      const r = await svc.get(`/v1/ids?count=${n}`, AUTH);
      assert.equal(r.status, 200);
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
      const ids = (JSON.parse(r.body) as { ids: string[] }).ids.map(BigInt);
      assert.equal(ids.length, n);
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
    }
  });

  test('GIVEN a bad count (0, -1, 10001, abc, 1.5, empty, missing, repeated) THEN 400 FLURRY_E_BATCH_COUNT', async () => {
    for (const q of [
      'count=0',
      'count=-1',
      'count=10001',
      'count=abc',
      'count=1.5',
      'count=',
      '',
      'other=3',
      'count=1&count=2',
      'count=%2B5',
      'count=1e3',
      'count=99999999999999999999',
    ]) {
      const r = await expectError(svc, `/v1/ids?${q}`, 400, 'FLURRY_E_BATCH_COUNT');
      assert.match(errorOf(r.body).message, /from 1 to 10000/);
    }
  });

  test('GIVEN GET /v1/ids/{id} THEN the decoded ID; malformed, negative or too wide IDs are 400', async () => {
    const id = twitter.compose({ unixMs: Date.UTC(2024, 10, 22), sequence: 9, node: { datacenter: 2, worker: 30 } });
    const r = await svc.get(`/v1/ids/${id}`, AUTH);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), {
      id: id.toString(),
      unixMs: Date.UTC(2024, 10, 22),
      timestamp: '2024-11-22T00:00:00.000Z',
      fields: { datacenter: 2, worker: 30 },
      sequence: 9,
    });
    await expectError(svc, '/v1/ids/-1', 400, 'FLURRY_E_ID_NEGATIVE');
    await expectError(svc, '/v1/ids/18446744073709551616', 400, 'FLURRY_E_ID_TOO_WIDE');
    await expectError(svc, '/v1/ids/99999999999999999999999999', 400, 'FLURRY_E_ID_TOO_WIDE');
    await expectError(svc, '/v1/ids/12ab', 400, 'FLURRY_E_ID_MALFORMED');
    await expectError(svc, '/v1/ids/0x10', 400, 'FLURRY_E_ID_MALFORMED');
    await expectError(svc, '/v1/ids/%20', 400, /FLURRY_E_ID_/);
    await expectError(svc, '/v1/ids/%zz', 400, 'FLURRY_E_BAD_REQUEST');
    await expectError(svc, '/v1/ids/1/2', 404, 'FLURRY_E_NOT_FOUND');
  });

  test('GIVEN GET /v1/layout THEN the layout with end of life, capacity and the node', async () => {
    const r = await svc.get('/v1/layout', AUTH);
    assert.equal(r.status, 200);
    const l = JSON.parse(r.body) as Record<string, unknown>;
    assert.equal(l.name, 'twitter');
    assert.equal(l.spec, 'timestamp:41,datacenter:5,worker:5,sequence:12');
    assert.equal(l.nodeCount, 1024);
    assert.equal(l.maxIdsPerSecondPerNode, 4_096_000);
    assert.match(String(l.expiresAt), /^2080-/);
    assert.deepEqual(Object.keys(l.node as object).sort(), ['datacenter', 'worker']);
  });

  test('GIVEN no, a wrong or a malformed bearer token THEN 401 with WWW-Authenticate on every ID route; health, readiness, metrics and OpenAPI stay open', async () => {
    for (const p of [
      '/v1/ids/next',
      '/v1/ids?count=2',
      '/v1/ids/1',
      '/v1/layout',
      '/api/snowflake/get/x',
      '/decodeSnowflakeId?snowflakeId=1',
      '/v1/public-ids/next',
      '/v1/public-ids/abc',
    ]) {
      const r = await expectError(svc, p, 401, 'FLURRY_E_UNAUTHORIZED', {});
      assert.equal(r.headers['www-authenticate'], 'Bearer realm="flurry"');
      await expectError(svc, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: `Bearer ${TOKEN}x` });
      await expectError(svc, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: `Bearer ${TOKEN.slice(0, -1)}` });
      await expectError(svc, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: TOKEN });
      await expectError(svc, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: `Basic ${TOKEN}` });
    }
    assert.equal((await svc.get('/v1/ids/next', { authorization: `bearer ${TOKEN}` })).status, 200);
    for (const p of ['/healthz', '/readyz', '/metrics', '/openapi.json'])
      assert.equal((await svc.get(p)).status, 200, p);
  });

  test('GIVEN /healthz and /readyz THEN 200 with status and the node', async () => {
    assert.deepEqual(JSON.parse((await svc.get('/healthz')).body), { status: 'ok' });
    const r = JSON.parse((await svc.get('/readyz')).body) as { status: string; node: object };
    assert.equal(r.status, 'ready');
    assert.deepEqual(Object.keys(r.node).sort(), ['datacenter', 'worker']);
  });

  test('GIVEN unknown paths THEN 404; wrong methods THEN 405 with Allow', async () => {
    for (const p of [
      '/v1',
      '/v1/ids/next/',
      '/v2/ids/next',
      '/V1/IDS/NEXT',
      '/api/snowflake/get/',
      '/api/snowflake/get/a/b',
      '/favicon.ico',
    ]) {
      await expectError(svc, p, 404, 'FLURRY_E_NOT_FOUND');
    }
    for (const [m, p, allow] of [
      ['POST', '/v1/ids/next', 'GET'],
      ['PUT', '/v1/ids?count=1', 'GET'],
      ['DELETE', '/healthz', 'GET, HEAD'],
      ['PATCH', '/v1/ids/1', 'GET, HEAD'],
      ['OPTIONS', '/metrics', 'GET, HEAD'],
      ['HEAD', '/v1/ids/next', 'GET'],
      ['POST', '/api/snowflake/get/k', 'GET'],
    ] as const) {
      const r = await svc.get(p, AUTH, m);
      assert.equal(r.status, 405, `${m} ${p}`);
      assert.equal(r.headers['allow'], allow);
      if (m !== 'HEAD') assert.equal(errorOf(r.body).code, 'FLURRY_E_METHOD_NOT_ALLOWED');
    }
    assert.equal((await svc.get('/healthz', {}, 'HEAD')).status, 200);
  });

  test('GIVEN every route of the table THEN its declared methods are served and every other method is 405 with its Allow', async () => {
    const samples: Record<string, string> = {
      '/v1/ids/{id}': '/v1/ids/1',
      '/v1/public-ids/{publicId}': '/v1/public-ids/abc',
      '/api/snowflake/get/{key}': '/api/snowflake/get/k',
    };
    for (const route of ROUTES) {
      const url = samples[route.path] ?? route.path;
      for (const m of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']) {
        // An event stream never ends by itself: the client leaves once the head has arrived.
        const r =
          route.path === '/v1/events' && m === 'GET'
            ? await inject(
                (req, res) => {
                  svc.handler(req, res);
                  setTimeout(() => res.destroy(), 50);
                },
                { url, headers: AUTH },
              )
            : await svc.get(url, AUTH, m);
        const allowed = route.methods.split(', ').includes(m);
        if (allowed) assert.notEqual(r.status, 405, `${m} ${url}`);
        else {
          assert.equal(r.status, 405, `${m} ${url}`);
          assert.equal(r.headers['allow'], route.methods, `${m} ${url}`);
        }
      }
    }
  });

  test('GIVEN a body larger than maxBodyBytes, a chunked body or a URL longer than maxUrlBytes THEN 413, 413, 414 with Connection: close; a small body is ignored', async () => {
    const big = await inject(svc.handler, {
      method: 'POST',
      url: '/v1/ids/next',
      headers: { 'Content-Length': '5000' },
      body: 'x'.repeat(5000),
    });
    assert.equal(big.status, 413);
    assert.equal(errorOf(big.body).code, 'FLURRY_E_BODY_TOO_LARGE');
    assert.equal(big.headers['connection'], 'close');
    const chunked = await inject(svc.handler, {
      url: '/v1/ids/next',
      headers: { 'Transfer-Encoding': 'chunked' },
      body: '5\r\nhello\r\n0\r\n\r\n',
    });
    assert.equal(chunked.status, 413);
    assert.equal(errorOf(chunked.body).code, 'FLURRY_E_BODY_TOO_LARGE');
    const smuggled = await inject(svc.handler, {
      url: '/v1/ids/next',
      headers: { ...AUTH, 'Content-Length': '0', 'content-length': '5000' },
    });
    assert.equal(smuggled.status, 413, 'the largest of repeated Content-Length values counts');
    const long = await expectError(svc, '/v1/ids/next?' + 'a'.repeat(5000), 414, 'FLURRY_E_URL_TOO_LONG');
    assert.equal(long.headers['connection'], 'close');
    const small = await inject(svc.handler, {
      url: '/v1/ids/next',
      headers: { ...AUTH, 'Content-Length': '2' },
      body: '{}',
    });
    assert.equal(small.status, 200, small.body);
  });

  test('GIVEN public IDs THEN next issues them and decode (with the token) returns the ID; a typo, a wrong key, an unknown key or a wrong length is 400 with its code', async () => {
    const n = await svc.get('/v1/public-ids/next', AUTH);
    assert.equal(n.status, 200, n.body);
    const pub = (JSON.parse(n.body) as { publicId: string }).publicId;
    assert.match(pub, /^C[0-9A-Za-z]{15}$/, 'key ID, 11 characters for the 63-bit ID, 3 for the tag, check character');
    const t = await svc.get('/v1/public-ids/next', { ...AUTH, accept: 'text/plain' });
    assert.match(t.body, /^C[0-9A-Za-z]{15}$/);
    const d = await svc.get(`/v1/public-ids/${encodeURIComponent(pub)}`, AUTH);
    assert.equal(d.status, 200, d.body);
    const dec = JSON.parse(d.body) as { publicId: string; id: string; fields: object };
    assert.equal(dec.publicId, pub);
    assert.match(dec.id, /^[0-9]+$/);
    assert.deepEqual(Object.keys(dec.fields).sort(), ['datacenter', 'worker']);
    const typo = pub.slice(0, -1) + (pub.at(-1) === 'z' ? 'y' : 'z');
    await expectError(svc, `/v1/public-ids/${typo}`, 400, 'FLURRY_E_PUBLIC_ID_CHECKSUM');
    await expectError(svc, '/v1/public-ids/!!', 400, 'FLURRY_E_PUBLIC_ID_MALFORMED');
    // Another key under the same key ID C (a regenerated key, another deployment's): refused, not a wrong ID.
    const foreign = PublicIdCodec.create({ keys: generateKey('C'), bits: twitter.totalBits }).encode(BigInt(dec.id));
    const w = await expectError(svc, `/v1/public-ids/${foreign}`, 400, 'FLURRY_E_PUBLIC_ID_WRONG_KEY');
    assert.match(errorOf(w.body).message, /decoded with a key that did not issue it.*Check the key for key ID "C"/);
    const unknown = PublicIdCodec.create({ keys: generateKey('D'), bits: twitter.totalBits }).encode(1n);
    await expectError(svc, `/v1/public-ids/${unknown}`, 400, 'FLURRY_E_PUBLIC_ID_UNKNOWN_KEY');
    await expectError(svc, `/v1/public-ids/${pub.slice(0, 13)}`, 400, 'FLURRY_E_PUBLIC_ID_MALFORMED');
  });

  test("GIVEN the Leaf routes THEN a bare decimal ID as text and Leaf's decode JSON; a bad or missing snowflakeId is 400", async () => {
    const g = await svc.get('/api/snowflake/get/leaf-segment-test', AUTH);
    assert.equal(g.status, 200);
    assert.match(g.headers['content-type'], /^text\/plain/);
    assert.match(g.body, /^[0-9]+$/);
    const id = BigInt(g.body);
    const d = await svc.get(`/decodeSnowflakeId?snowflakeId=${id}`, AUTH);
    assert.equal(d.status, 200);
    const body = JSON.parse(d.body) as Record<string, string>;
    assert.deepEqual(Object.keys(body), ['timestamp', 'sequenceId', 'workerId']);
    assert.equal(body.workerId, ((id >> 12n) & 1023n).toString());
    assert.equal(body.sequenceId, (id & 4095n).toString());
    assert.equal((await svc.get('/decodeSnowflakeId?snowflakeId=abc', AUTH)).status, 400);
    await expectError(svc, '/decodeSnowflakeId?snowflakeId=abc', 400, 'FLURRY_E_ID_MALFORMED');
    await expectError(svc, '/decodeSnowflakeId', 400, 'FLURRY_E_QUERY');
    const twice = await expectError(svc, '/decodeSnowflakeId?snowflakeId=1&snowflakeId=2', 400, 'FLURRY_E_QUERY');
    assert.match(errorOf(twice.body).message, /given 2 times/);
  });

  test('GIVEN /metrics THEN Prometheus text with IDs issued, requests by route and status, latency, exhaustion, clock regressions and lease figures', async () => {
    await svc.get('/v1/ids?count=5000', AUTH);
    await svc.get('/nope');
    const r = await svc.get('/metrics');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    const issued = Number(/^flurry_ids_issued_total (\d+)/m.exec(r.body)?.[1]);
    assert.ok(issued >= 5000, `issued ${issued}`);
    assert.match(r.body, /^flurry_http_requests_total\{route="ids_batch",status="200"\} \d+/m);
    assert.match(r.body, /^flurry_http_requests_total\{route="unmatched",status="404"\} \d+/m);
    assert.match(r.body, /^flurry_http_request_duration_seconds_bucket\{le="0.001",route="ids_next"\} \d+/m);
    assert.match(r.body, /^flurry_http_request_duration_seconds_count\{route="ids_batch"\} \d+/m);
    for (const m of [
      'flurry_sequence_exhausted_waits_total',
      'flurry_clock_regression_ms_count',
      'flurry_lease_renewals_total',
      'flurry_lease_renew_failures_total',
      'flurry_lease_lost_total',
      'process_resident_memory_bytes',
    ]) {
      assert.match(r.body, new RegExp(`^${m} \\d+`, 'm'), m);
    }
    const deadline = Number(/^flurry_lease_deadline_seconds (\S+)/m.exec(r.body)?.[1]);
    assert.ok(deadline > 0, `deadline ${deadline}`);
    assert.match(r.body, /^flurry_ready 1$/m);
    // Every route of the table is a metrics label, and only those plus "unmatched".
    assert.deepEqual(ROUTE_NAMES, [...ROUTES.map((x) => x.name), 'unmatched']);
    assert.match(r.body, /^flurry_http_requests_total\{route="metrics",status="200"\} \d+/m);
  });

  test('GIVEN /openapi.json THEN it is the document kept in docs/openapi.json and lists every route of the table', async () => {
    const r = await svc.get('/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body, readFileSync(path.join(root, 'docs', 'openapi.json'), 'utf8'));
    const doc = JSON.parse(r.body) as { paths: Record<string, unknown> };
    for (const p of [
      '/v1/ids/next',
      '/v1/ids',
      '/v1/ids/{id}',
      '/v1/layout',
      '/v1/public-ids/next',
      '/v1/public-ids/{publicId}',
      '/api/snowflake/get/{key}',
      '/decodeSnowflakeId',
      '/healthz',
      '/readyz',
      '/metrics',
      '/openapi.json',
    ]) {
      assert.ok(doc.paths[p], p);
    }
    assert.deepEqual(
      Object.keys(doc.paths),
      ROUTES.map((x) => x.path),
    );
  });
});

describe('a service without a token, with the leaf layout (in-process)', () => {
  let svc: InProcess;
  before(async () => {
    svc = await inProcess(['--layout', 'leaf'], { FLURRY_PUBLIC_KEY: KEY });
  });
  after(async () => {
    await svc.stop();
  });

  test('GIVEN no token THEN ID routes need none, and public-ID decode is disabled with 403', async () => {
    const r = await svc.get('/v1/ids/next');
    assert.equal(r.status, 200);
    const pub = (JSON.parse((await svc.get('/v1/public-ids/next')).body) as { publicId: string }).publicId;
    const e = await expectError(svc, `/v1/public-ids/${pub}`, 403, 'FLURRY_E_PUBLIC_DECODE_DISABLED', {});
    assert.match(errorOf(e.body).message, /--token/);
  });

  test("GIVEN the leaf layout THEN Leaf's decoder reports the 10-bit worker ID of this node", async () => {
    const id = BigInt((await svc.get('/api/snowflake/get/anykey')).body);
    const node = (JSON.parse((await svc.get('/readyz')).body) as { node: { worker: number } }).node;
    const body = JSON.parse((await svc.get(`/decodeSnowflakeId?snowflakeId=${id}`)).body) as { workerId: string };
    assert.equal(body.workerId, String(node.worker));
  });
});

describe('a service with health authentication and no public-ID key (in-process)', () => {
  let svc: InProcess;
  before(async () => {
    svc = await inProcess(['--auth-health', '--max-batch', '50', '--token', TOKEN]);
  });
  after(async () => {
    await svc.stop();
  });

  test('GIVEN authHealth THEN /healthz, /readyz and /metrics need the token; /openapi.json does not', async () => {
    for (const p of ['/healthz', '/readyz', '/metrics']) {
      await expectError(svc, p, 401, 'FLURRY_E_UNAUTHORIZED', {});
      assert.equal((await svc.get(p, AUTH)).status, 200, p);
    }
    assert.equal((await svc.get('/openapi.json')).status, 200);
  });

  test('GIVEN no public-ID key THEN the public routes are 404 FLURRY_E_PUBLIC_IDS_DISABLED; a configured max-batch bounds count', async () => {
    await expectError(svc, '/v1/public-ids/next', 404, 'FLURRY_E_PUBLIC_IDS_DISABLED');
    await expectError(svc, '/v1/public-ids/abc', 404, 'FLURRY_E_PUBLIC_IDS_DISABLED');
    assert.equal((await svc.get('/v1/ids?count=50', AUTH)).status, 200);
    const e = await expectError(svc, '/v1/ids?count=51', 400, 'FLURRY_E_BATCH_COUNT');
    assert.match(errorOf(e.body).message, /from 1 to 50/);
  });
});
