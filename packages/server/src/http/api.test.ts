import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import thrift from 'thrift';
import { Layout, PublicIdCodec, generateKey } from '@flurry/core';
import { httpGet, rawRequest, startFlurry, statusesOf, type FlurryProcess } from '../test-support.js';

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
  port: number,
  p: string,
  status: number,
  code: string | RegExp,
  headers: Record<string, string> = AUTH,
  method = 'GET',
) {
  const r = await httpGet(port, p, headers, method);
  assert.equal(r.status, status, `${method} ${p.slice(0, 60)} → ${r.status} ${r.body.slice(0, 300)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const e = errorOf(r.body);
  if (typeof code === 'string') assert.equal(e.code, code, e.message);
  else assert.match(e.code, code);
  return r;
}

function curl(args: string[]): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['-s', '--max-time', '10', '-o', '-', '-w', '\n%{http_code} %{content_type}', ...args],
      (err, stdout) => {
        if (err) return reject(err);
        const nl = stdout.lastIndexOf('\n');
        const [status, type] = stdout.slice(nl + 1).split(' ');
        resolve({ status: Number(status), body: stdout.slice(0, nl), type: type ?? '' });
      },
    );
  });
}

describe('the HTTP API with a bearer token and a public-ID key', () => {
  let svc: FlurryProcess;
  before(async () => {
    svc = await startFlurry({ env: { FLURRY_TOKEN: TOKEN, FLURRY_PUBLIC_KEY: KEY } });
  });
  after(async () => {
    const r = await svc.stop();
    assert.equal(r.code, 0, svc.stderr());
  });

  test('GIVEN GET /v1/ids/next THEN {"id":"…"} as JSON, or the bare decimal with Accept: text/plain', async () => {
    const j = await httpGet(svc.port, '/v1/ids/next', AUTH);
    assert.equal(j.status, 200);
    assert.match(String(j.headers['content-type']), /^application\/json/);
    const id = BigInt(JSON.parse(j.body).id);
    assert.match(JSON.parse(j.body).id, /^[0-9]+$/);
    const t = await httpGet(svc.port, '/v1/ids/next', { ...AUTH, accept: 'text/plain' });
    assert.equal(t.status, 200);
    assert.match(String(t.headers['content-type']), /^text\/plain/);
    assert.match(t.body, /^[0-9]+$/);
    assert.ok(BigInt(t.body) > id);
  });

  test('GIVEN GET /v1/ids?count=N for N = 1 and the maximum THEN N increasing unique IDs', async () => {
    for (const n of [1, 10_000]) {
      const r = await httpGet(svc.port, `/v1/ids?count=${n}`, AUTH);
      assert.equal(r.status, 200);
      const ids = (JSON.parse(r.body).ids as string[]).map(BigInt);
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
      const r = await expectError(svc.port, `/v1/ids?${q}`, 400, 'FLURRY_E_BATCH_COUNT');
      assert.match(errorOf(r.body).message, /from 1 to 10000/);
    }
  });

  test('GIVEN GET /v1/ids/{id} THEN the decoded ID; malformed, negative or too wide IDs are 400', async () => {
    const id = twitter.compose({ unixMs: Date.UTC(2024, 10, 22), sequence: 9, node: { datacenter: 2, worker: 30 } });
    const r = await httpGet(svc.port, `/v1/ids/${id}`, AUTH);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), {
      id: id.toString(),
      unixMs: Date.UTC(2024, 10, 22),
      timestamp: '2024-11-22T00:00:00.000Z',
      fields: { datacenter: 2, worker: 30 },
      sequence: 9,
    });
    await expectError(svc.port, '/v1/ids/-1', 400, 'FLURRY_E_ID_NEGATIVE');
    await expectError(svc.port, '/v1/ids/18446744073709551616', 400, 'FLURRY_E_ID_TOO_WIDE');
    await expectError(svc.port, '/v1/ids/99999999999999999999999999', 400, 'FLURRY_E_ID_TOO_WIDE');
    await expectError(svc.port, '/v1/ids/12ab', 400, 'FLURRY_E_ID_MALFORMED');
    await expectError(svc.port, '/v1/ids/0x10', 400, 'FLURRY_E_ID_MALFORMED');
    await expectError(svc.port, '/v1/ids/%20', 400, /FLURRY_E_ID_/);
    await expectError(svc.port, '/v1/ids/%zz', 400, 'FLURRY_E_BAD_REQUEST');
    await expectError(svc.port, '/v1/ids/1/2', 404, 'FLURRY_E_NOT_FOUND');
  });

  test('GIVEN GET /v1/layout THEN the layout with end of life, capacity and the node', async () => {
    const r = await httpGet(svc.port, '/v1/layout', AUTH);
    assert.equal(r.status, 200);
    const l = JSON.parse(r.body);
    assert.equal(l.name, 'twitter');
    assert.equal(l.spec, 'timestamp:41,datacenter:5,worker:5,sequence:12');
    assert.equal(l.nodeCount, 1024);
    assert.equal(l.maxIdsPerSecondPerNode, 4_096_000);
    assert.match(l.expiresAt, /^2080-/);
    assert.deepEqual(Object.keys(l.node).sort(), ['datacenter', 'worker']);
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
      const r = await expectError(svc.port, p, 401, 'FLURRY_E_UNAUTHORIZED', {});
      assert.equal(r.headers['www-authenticate'], 'Bearer realm="flurry"');
      await expectError(svc.port, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: `Bearer ${TOKEN}x` });
      await expectError(svc.port, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: `Bearer ${TOKEN.slice(0, -1)}` });
      await expectError(svc.port, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: TOKEN });
      await expectError(svc.port, p, 401, 'FLURRY_E_UNAUTHORIZED', { authorization: `Basic ${TOKEN}` });
    }
    assert.equal((await httpGet(svc.port, '/v1/ids/next', { authorization: `bearer ${TOKEN}` })).status, 200);
    for (const p of ['/healthz', '/readyz', '/metrics', '/openapi.json'])
      assert.equal((await httpGet(svc.port, p)).status, 200, p);
  });

  test('GIVEN /healthz and /readyz THEN 200 with status and the node', async () => {
    assert.deepEqual(JSON.parse((await httpGet(svc.port, '/healthz')).body), { status: 'ok' });
    const r = JSON.parse((await httpGet(svc.port, '/readyz')).body);
    assert.equal(r.status, 'ready');
    assert.deepEqual(Object.keys(r.node).sort(), ['datacenter', 'worker']);
  });

  test('GIVEN unknown paths THEN 404; wrong methods THEN 405 with Allow', async () => {
    for (const p of [
      '/',
      '/v1',
      '/v1/ids/next/',
      '/v2/ids/next',
      '/V1/IDS/NEXT',
      '/api/snowflake/get/',
      '/api/snowflake/get/a/b',
      '/favicon.ico',
    ]) {
      await expectError(svc.port, p, 404, 'FLURRY_E_NOT_FOUND');
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
      const r = await httpGet(svc.port, p, AUTH, m);
      assert.equal(r.status, 405, `${m} ${p}`);
      assert.equal(r.headers['allow'], allow);
      if (m !== 'HEAD') assert.equal(errorOf(r.body).code, 'FLURRY_E_METHOD_NOT_ALLOWED');
    }
    assert.equal((await httpGet(svc.port, '/healthz', {}, 'HEAD')).status, 200);
  });

  test('GIVEN an oversized body, a chunked body, a long URL or a huge header block THEN 413, 413, 414, 431 — and the server still answers', async () => {
    const big = await rawRequest(
      svc.port,
      `POST /v1/ids/next HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n${'x'.repeat(5000)}`,
    );
    assert.deepEqual(statusesOf(big), [413]);
    assert.match(big, /FLURRY_E_BODY_TOO_LARGE/);
    const chunked = await rawRequest(
      svc.port,
      'GET /v1/ids/next HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    );
    assert.deepEqual(statusesOf(chunked), [413]);
    await expectError(svc.port, '/v1/ids/next?' + 'a'.repeat(5000), 414, 'FLURRY_E_URL_TOO_LONG');
    const huge = await rawRequest(svc.port, `GET /v1/ids/${'1'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.deepEqual(statusesOf(huge), [431]);
    assert.match(huge, /FLURRY_E_HEADERS_TOO_LARGE/);
    const garbage = await rawRequest(svc.port, 'HELLO THERE\r\n\r\n');
    assert.deepEqual(statusesOf(garbage), [400]);
    assert.match(garbage, /FLURRY_E_BAD_REQUEST/);
    assert.equal((await httpGet(svc.port, '/healthz')).status, 200);
  });

  test('GIVEN public IDs THEN next issues them and decode (with the token) returns the ID; a typo, a wrong key, an unknown key or a wrong length is 400 with its code', async () => {
    const n = await httpGet(svc.port, '/v1/public-ids/next', AUTH);
    assert.equal(n.status, 200, n.body);
    const pub = JSON.parse(n.body).publicId as string;
    assert.match(pub, /^C[0-9A-Za-z]{15}$/, 'key ID, 11 characters for the 63-bit ID, 3 for the tag, check character');
    const d = await httpGet(svc.port, `/v1/public-ids/${encodeURIComponent(pub)}`, AUTH);
    assert.equal(d.status, 200, d.body);
    const dec = JSON.parse(d.body);
    assert.equal(dec.publicId, pub);
    assert.match(dec.id, /^[0-9]+$/);
    assert.deepEqual(Object.keys(dec.fields).sort(), ['datacenter', 'worker']);
    const typo = pub.slice(0, -1) + (pub.at(-1) === 'z' ? 'y' : 'z');
    await expectError(svc.port, `/v1/public-ids/${typo}`, 400, 'FLURRY_E_PUBLIC_ID_CHECKSUM');
    await expectError(svc.port, '/v1/public-ids/!!', 400, 'FLURRY_E_PUBLIC_ID_MALFORMED');
    // Another key under the same key ID C (a regenerated key, another deployment's): refused, not a wrong ID.
    const foreign = PublicIdCodec.create({ keys: generateKey('C'), bits: twitter.totalBits }).encode(BigInt(dec.id));
    const w = await expectError(svc.port, `/v1/public-ids/${foreign}`, 400, 'FLURRY_E_PUBLIC_ID_WRONG_KEY');
    assert.match(errorOf(w.body).message, /decoded with a key that did not issue it.*Check the key for key ID "C"/);
    const unknown = PublicIdCodec.create({ keys: generateKey('D'), bits: twitter.totalBits }).encode(1n);
    await expectError(svc.port, `/v1/public-ids/${unknown}`, 400, 'FLURRY_E_PUBLIC_ID_UNKNOWN_KEY');
    await expectError(svc.port, `/v1/public-ids/${pub.slice(0, 13)}`, 400, 'FLURRY_E_PUBLIC_ID_MALFORMED');
  });

  test("GIVEN the Leaf routes called as curl does THEN a bare decimal ID and Leaf's decode JSON", async () => {
    const a = `-H`;
    const g = await curl([
      a,
      `Authorization: Bearer ${TOKEN}`,
      `http://127.0.0.1:${svc.port}/api/snowflake/get/leaf-segment-test`,
    ]);
    assert.equal(g.status, 200);
    assert.match(g.type, /^text\/plain/);
    assert.match(g.body, /^[0-9]+$/);
    const id = BigInt(g.body);
    const d = await curl([
      a,
      `Authorization: Bearer ${TOKEN}`,
      `http://127.0.0.1:${svc.port}/decodeSnowflakeId?snowflakeId=${id}`,
    ]);
    assert.equal(d.status, 200);
    const body = JSON.parse(d.body);
    assert.deepEqual(Object.keys(body), ['timestamp', 'sequenceId', 'workerId']);
    assert.equal(body.workerId, ((id >> 12n) & 1023n).toString());
    assert.equal(body.sequenceId, (id & 4095n).toString());
    const ms = (id >> 22n) + 1288834974657n;
    assert.equal(body.timestamp, `${ms}(${new Date(Number(ms)).toISOString().replace('T', ' ').replace('Z', '')})`);
    const bad = await curl([
      a,
      `Authorization: Bearer ${TOKEN}`,
      `http://127.0.0.1:${svc.port}/decodeSnowflakeId?snowflakeId=abc`,
    ]);
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad.body).code, 'FLURRY_E_ID_MALFORMED');
    const missing = await curl([a, `Authorization: Bearer ${TOKEN}`, `http://127.0.0.1:${svc.port}/decodeSnowflakeId`]);
    assert.equal(missing.status, 400);
    assert.equal(errorOf(missing.body).code, 'FLURRY_E_QUERY');
  });

  test('GIVEN /metrics THEN Prometheus text with IDs issued, requests by route and status, latency, exhaustion, clock regressions and lease figures', async () => {
    await httpGet(svc.port, '/v1/ids?count=5000', AUTH);
    await httpGet(svc.port, '/nope');
    const r = await httpGet(svc.port, '/metrics');
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
  });

  test('GIVEN /openapi.json THEN it is the document kept in docs/openapi.json and lists every route', async () => {
    const r = await httpGet(svc.port, '/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body, readFileSync(path.join(root, 'docs', 'openapi.json'), 'utf8'));
    const doc = JSON.parse(r.body);
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
  });

  test('GIVEN 2,000 random requests (paths, queries, headers, methods, raw bytes) THEN never a 500, never a crash, and the server still answers', async () => {
    let seed = 0x5eed1234;
    const rnd = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const chars = 'abcXYZ019-_.~%/?&=+:;,@!$\'()*[]{}|\\^`"<> \t#';
    const str = (max: number) =>
      Array.from({ length: Math.floor(rnd() * max) }, () =>
        rnd() < 0.05 ? String.fromCharCode(Math.floor(rnd() * 0x2fff)) : pick([...chars]),
      ).join('');
    const prefixes = [
      '/v1/ids/next',
      '/v1/ids',
      '/v1/ids/',
      '/v1/layout',
      '/v1/public-ids/next',
      '/v1/public-ids/',
      '/api/snowflake/get/',
      '/decodeSnowflakeId',
      '/healthz',
      '/readyz',
      '/metrics',
      '/openapi.json',
      '/',
      '',
    ];
    const methods = [
      'GET',
      'GET',
      'GET',
      'HEAD',
      'POST',
      'PUT',
      'DELETE',
      'OPTIONS',
      'TRACE',
      'CONNECT',
      'PATCH',
      'BREW',
      'get',
      '',
    ];
    const queries = ['count=', 'snowflakeId=', 'count=1&count=', 'x=', '', '%', '&&', '=='];
    const headerNames = [
      'Accept',
      'Authorization',
      'Content-Type',
      'X-Junk',
      'Accept-Encoding',
      'Content-Length',
      'Transfer-Encoding',
      'Expect',
      'Connection',
    ];
    const make = (): Buffer => {
      if (rnd() < 0.08)
        return Buffer.from(Array.from({ length: Math.floor(rnd() * 200) }, () => Math.floor(rnd() * 256)));
      let target = pick(prefixes) + str(30);
      if (rnd() < 0.5) target += '?' + pick(queries) + str(20);
      if (rnd() < 0.3) target += String(Math.floor(rnd() * 1e6) - 5e5);
      const lines = [`${pick(methods)} ${target} HTTP/1.${rnd() < 0.9 ? 1 : 0}`, 'Host: 127.0.0.1'];
      const nh = Math.floor(rnd() * 4);
      for (let i = 0; i < nh; i++) {
        const name = pick(headerNames);
        let value = str(40);
        if (name === 'Authorization' && rnd() < 0.5) value = rnd() < 0.5 ? `Bearer ${TOKEN}` : `Bearer ${str(30)}`;
        if (name === 'Content-Length') value = String(Math.floor(rnd() * 3000));
        if (name === 'Transfer-Encoding') value = pick(['chunked', 'gzip', str(10)]);
        if (name === 'Connection') value = pick(['close', 'keep-alive', 'upgrade']);
        lines.push(`${name}: ${value}`);
      }
      lines.push('Connection: close');
      return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
    };
    const counts = new Map<number, number>();
    const startedAt = Date.now();
    const total = 2000;
    let sent = 0;
    const worker = async () => {
      while (sent < total && Date.now() - startedAt < 120_000) {
        sent++;
        const req = make();
        const out = await rawRequest(svc.port, req, 150, 3_000);
        for (const s of statusesOf(out)) {
          counts.set(s, (counts.get(s) ?? 0) + 1);
          assert.ok(
            s < 500,
            `status ${s} for ${JSON.stringify(req.toString('latin1').slice(0, 300))}: ${out.slice(0, 500)}`,
          );
        }
        assert.ok(!/\n\s+at .*\.js:\d+/.test(out), `stack trace in ${out.slice(0, 500)}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.equal(sent, total, 'every fuzz request was sent within the time bound');
    assert.ok(
      (counts.get(200) ?? 0) > 0 && (counts.get(404) ?? 0) > 0 && (counts.get(400) ?? 0) > 0,
      JSON.stringify([...counts]),
    );
    assert.equal(svc.process.exitCode, null, 'still running');
    assert.equal((await httpGet(svc.port, '/healthz')).status, 200);
    assert.equal((await httpGet(svc.port, '/v1/ids/next', AUTH)).status, 200);
    assert.ok(
      !svc.logs.some((l) => l.msg === 'unexpected error in a request handler'),
      'no unexpected handler errors logged',
    );
  });
});

describe('a service without a token, with the leaf layout and Thrift', () => {
  let svc: FlurryProcess;
  before(async () => {
    svc = await startFlurry({ args: ['--layout', 'leaf', '--thrift-port', '0'], env: { FLURRY_PUBLIC_KEY: KEY } });
  });
  after(async () => {
    assert.equal((await svc.stop()).code, 0, svc.stderr());
  });

  test('GIVEN no token THEN ID routes need none, and public-ID decode is disabled with 403', async () => {
    const r = await httpGet(svc.port, '/v1/ids/next');
    assert.equal(r.status, 200);
    const pub = JSON.parse((await httpGet(svc.port, '/v1/public-ids/next')).body).publicId;
    const e = await expectError(svc.port, `/v1/public-ids/${pub}`, 403, 'FLURRY_E_PUBLIC_DECODE_DISABLED', {});
    assert.match(errorOf(e.body).message, /--token/);
  });

  test("GIVEN the leaf layout THEN Leaf's decoder reports the 10-bit worker ID of this node", async () => {
    const id = BigInt((await httpGet(svc.port, '/api/snowflake/get/anykey')).body);
    const node = JSON.parse((await httpGet(svc.port, '/readyz')).body).node as { worker: number };
    const body = JSON.parse((await httpGet(svc.port, `/decodeSnowflakeId?snowflakeId=${id}`)).body);
    assert.equal(body.workerId, String(node.worker));
  });

  test('GIVEN --thrift-port THEN a Thrift client built from the IDL gets IDs of this node from the same generator', async () => {
    assert.ok(typeof svc.thriftPort === 'number' && svc.thriftPort > 0);
    const require = createRequire(import.meta.url);
    const Snowflake = require('../../thrift/gen-nodejs/Snowflake.js');
    const conn = thrift.createConnection('127.0.0.1', svc.thriftPort, {
      transport: thrift.TFramedTransport,
      protocol: thrift.TBinaryProtocol,
      max_attempts: 0,
      connect_timeout: 2000,
    });
    conn.on('error', () => {});
    try {
      const client = thrift.createClient(Snowflake, conn) as unknown as {
        get_id(ua: string, cb: (e: unknown, r: unknown) => void): void;
        get_worker_id(cb: (e: unknown, r: unknown) => void): void;
      };
      const call = <T>(f: (cb: (e: unknown, r: unknown) => void) => void) =>
        new Promise<T>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('thrift call timed out')), 5000);
          f((e, r) => {
            clearTimeout(t);
            if (e) reject(e);
            else resolve(r as T);
          });
        });
      const httpId = BigInt(JSON.parse((await httpGet(svc.port, '/v1/ids/next')).body).id);
      const raw = await call<{ toOctetString(): string }>((cb) => client.get_id('flurry-test', cb));
      const id = BigInt('0x' + raw.toOctetString());
      assert.ok(id > httpId, `thrift ID ${id} above the earlier HTTP ID ${httpId}`);
      const node = JSON.parse((await httpGet(svc.port, '/readyz')).body).node as { worker: number };
      assert.equal(Layout.from('leaf').decode(id).fields.worker, node.worker);
      const worker = await call<{ toOctetString(): string }>((cb) => client.get_worker_id(cb));
      assert.equal(Number(BigInt('0x' + worker.toOctetString())), node.worker);
    } finally {
      conn.end();
    }
  });
});

describe('a service with health authentication and no public-ID key', () => {
  let svc: FlurryProcess;
  before(async () => {
    svc = await startFlurry({ args: ['--auth-health', '--max-batch', '50', '--token', TOKEN] });
  });
  after(async () => {
    assert.equal((await svc.stop()).code, 0, svc.stderr());
  });

  test('GIVEN authHealth THEN /healthz, /readyz and /metrics need the token; /openapi.json does not', async () => {
    for (const p of ['/healthz', '/readyz', '/metrics']) {
      await expectError(svc.port, p, 401, 'FLURRY_E_UNAUTHORIZED', {});
      assert.equal((await httpGet(svc.port, p, AUTH)).status, 200, p);
    }
    assert.equal((await httpGet(svc.port, '/openapi.json')).status, 200);
  });

  test('GIVEN no public-ID key THEN the public routes are 404 FLURRY_E_PUBLIC_IDS_DISABLED; a configured max-batch bounds count', async () => {
    await expectError(svc.port, '/v1/public-ids/next', 404, 'FLURRY_E_PUBLIC_IDS_DISABLED');
    await expectError(svc.port, '/v1/public-ids/abc', 404, 'FLURRY_E_PUBLIC_IDS_DISABLED');
    assert.equal((await httpGet(svc.port, '/v1/ids?count=50', AUTH)).status, 200);
    const e = await expectError(svc.port, '/v1/ids?count=51', 400, 'FLURRY_E_BATCH_COUNT');
    assert.match(errorOf(e.body).message, /from 1 to 50/);
  });
});
