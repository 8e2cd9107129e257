// The HTTP API through a real `flurry serve` process, where a process is the point: bytes
// Node's HTTP parser refuses (431, malformed requests), a real client (curl), random raw
// requests that must never crash the process, and Thrift. Routing, errors, methods, auth,
// limits and every route's answers are tested in-process in handler.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import thrift from 'thrift';
import { Layout, generateKey } from '@flurry/core';
import { httpGet, rawRequest, startFlurry, statusesOf, type FlurryProcess } from '../test-support.js';

const TOKEN = 'test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const KEY = generateKey('C');

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
        if (err) return reject(new Error(`curl failed: ${err.message}`, { cause: err }));
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
    const body = JSON.parse(d.body) as Record<string, string>;
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

  test('GIVEN --thrift-port THEN a Thrift client built from the IDL gets IDs of this node from the same generator', async () => {
    assert.ok(typeof svc.thriftPort === 'number' && svc.thriftPort > 0);
    const require = createRequire(import.meta.url);
    type SnowflakeClient = {
      get_id(ua: string, cb: (e: unknown, r: unknown) => void): void;
      get_worker_id(cb: (e: unknown, r: unknown) => void): void;
    };
    const Snowflake = require('../../thrift/gen-nodejs/Snowflake.js') as thrift.TClientConstructor<SnowflakeClient>;
    const conn = thrift.createConnection('127.0.0.1', svc.thriftPort, {
      transport: thrift.TFramedTransport,
      protocol: thrift.TBinaryProtocol,
      max_attempts: 0,
      connect_timeout: 2000,
    });
    conn.on('error', () => {});
    try {
      const client = thrift.createClient(Snowflake, conn);
      const call = <T>(f: (cb: (e: unknown, r: unknown) => void) => void) =>
        new Promise<T>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('thrift call timed out')), 5000);
          f((e, r) => {
            clearTimeout(t);
            if (e) reject(e instanceof Error ? e : new Error(JSON.stringify(e)));
            else resolve(r as T);
          });
        });
      const httpId = BigInt((JSON.parse((await httpGet(svc.port, '/v1/ids/next')).body) as { id: string }).id);
      const raw = await call<{ toOctetString(): string }>((cb) => client.get_id('flurry-test', cb));
      const id = BigInt('0x' + raw.toOctetString());
      assert.ok(id > httpId, `thrift ID ${id} above the earlier HTTP ID ${httpId}`);
      const node = (JSON.parse((await httpGet(svc.port, '/readyz')).body) as { node: { worker: number } }).node;
      assert.equal(Layout.from('leaf').decode(id).fields.worker, node.worker);
      const worker = await call<{ toOctetString(): string }>((cb) => client.get_worker_id(cb));
      assert.equal(Number(BigInt('0x' + worker.toOctetString())), node.worker);
    } finally {
      conn.end();
    }
  });
});
