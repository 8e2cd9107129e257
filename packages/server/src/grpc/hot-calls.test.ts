// gRPC NextId and StreamIds on node:http2's stream API (./hot-calls.ts) against Connect's answer to the same
// bytes on the same port: a request with an Origin header is left to Connect, so each case
// is sent twice and the headers, body and trailers must match (CORS headers, the date and
// the ID itself aside). Over a real file: registry lease, in this process, on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fromBinary, toBinary, create } from '@bufbuild/protobuf';
import { loadServeConfig } from '../config/index.js';
import { createServiceCore, httpContext } from '../service-core.js';
import { idServiceContext, leaseGenerator, type ServiceLogger } from '../service.js';
import { tempDir } from '../test-support.js';
import {
  NextIdResponseSchema,
  StreamIdsRequestSchema,
  StreamIdsResponseSchema,
} from './gen-proto/flurry/v1/id_service_pb.js';
import { startGrpcServer } from './server.js';
import { hotCalls, nextIdAnswer } from './hot-calls.js';

const quiet: ServiceLogger = { info() {}, warn() {}, error() {}, debug() {}, child: () => quiet };
const TOKEN = 'unary-test-token-0123456789';

interface Answer {
  headers: Record<string, unknown>;
  body: Buffer;
  trailers: Record<string, unknown>;
}

function call(port: number, headers: Record<string, string>, body: Buffer, path = 'NextId'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', reject);
    const r = s.request({
      ':method': 'POST',
      ':path': `/flurry.v1.IdService/${path}`,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    const chunks: Buffer[] = [];
    let head: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    r.on('response', (h) => (head = { ...h }));
    r.on('trailers', (t: http2.IncomingHttpHeaders) => (trailers = { ...t }));
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('error', reject);
    r.on('close', () => {
      s.close();
      resolve({ headers: head, body: Buffer.concat(chunks), trailers });
    });
    if (r.writable) r.end(body); // a GET has ended its side already
  });
}

/** The answer without what may differ: the date, the CORS headers of the Origin request. */
function comparable(a: Answer): { headers: Record<string, unknown>; trailers: Record<string, unknown> } {
  const headers = Object.fromEntries(
    Object.entries(a.headers).filter(([k]) => k !== 'date' && !k.startsWith('access-control-')),
  );
  return { headers, trailers: a.trailers };
}

const env = (flags: number, payload: Buffer): Buffer => {
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(payload.length, 1);
  return Buffer.concat([h, payload]);
};
const EMPTY = env(0, Buffer.alloc(0));

async function withPort(
  args: string[],
  leased: boolean,
  fn: (port: number, calls: string[]) => Promise<void>,
): Promise<void> {
  const dir = tempDir('grpc-unary');
  const config = loadServeConfig(['--port', '0', '--registry', `file:${path.join(dir, 'reg')}`, ...args], {});
  const core = createServiceCore(config, quiet);
  if (leased) await leaseGenerator(config, core, 0, quiet, { stateDir: path.join(dir, 'state') });
  const calls: string[] = [];
  const server = await startGrpcServer({
    port: 0,
    ids: idServiceContext(httpContext(config, core, quiet)),
    ready: () => core.notReady() === null,
    maxMessageBytes: 64,
    ...(config.token !== undefined ? { token: config.token } : {}),
    record: (protocol, method, code) => calls.push(`${protocol} ${method} ${code}`),
  });
  try {
    await fn(server.port, calls);
  } finally {
    await server.close();
    await core.issuer.leased?.close().catch(() => undefined);
    await core.registry?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sends one case to the fast path and to Connect; asserts they agree and returns the fast answer. */
async function same(port: number, headers: Record<string, string>, body: Buffer, path = 'NextId'): Promise<Answer> {
  const fast = await call(port, headers, body, path);
  const connect = await call(port, { ...headers, origin: 'http://example.test' }, body, path);
  assert.ok('access-control-allow-origin' in connect.headers, 'the Origin request went to Connect');
  assert.deepEqual(comparable(fast), comparable(connect));
  return fast;
}

test('GIVEN NextId over gRPC THEN the stream path answers what Connect answers: headers, message and trailers', async () => {
  await withPort([], true, async (port, calls) => {
    const seen: bigint[] = [];
    const cases: [string, Record<string, string>, Buffer][] = [
      ['plain', {}, EMPTY],
      [
        '+proto, gzip offered, a deadline',
        {
          'content-type': 'application/grpc+proto',
          'grpc-accept-encoding': 'identity,deflate,gzip',
          'grpc-timeout': '5S',
        },
        EMPTY,
      ],
      ['an unknown field', {}, env(0, Buffer.from([0x28, 0x01]))],
      ['encoding identity', { 'grpc-encoding': 'identity' }, EMPTY],
    ];
    for (const [name, headers, body] of cases) {
      const fast = await same(port, headers, body);
      assert.equal(fast.trailers['grpc-status'], '0', name);
      const m = fromBinary(NextIdResponseSchema, fast.body.subarray(5));
      assert.equal(fast.body.readUInt32BE(1), fast.body.length - 5, name);
      assert.equal(m.idString, m.id.toString(), name);
      seen.push(m.id);
    }
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `ID ${i} increases`);
    assert.equal(calls.filter((c) => c === 'grpc IdService/NextId ok').length, 2 * cases.length);
  });
});

test('GIVEN malformed NextId bodies THEN the same gRPC errors as Connect, and no ID is issued', async () => {
  await withPort([], true, async (port, calls) => {
    const cases: [string, Buffer, number][] = [
      ['no message', Buffer.alloc(0), 12],
      ['a cut envelope head', Buffer.from([0, 0, 0]), 3],
      ['a cut message', Buffer.from([0, 0, 0, 0, 9, 1, 2]), 3],
      ['two messages', Buffer.concat([EMPTY, EMPTY]), 12],
      ['a message and a cut one', Buffer.concat([EMPTY, Buffer.from([0, 0])]), 3],
      ['compressed without an encoding', env(1, Buffer.from([1, 2, 3])), 13],
      ['a length past maxMessageBytes', Buffer.from([0, 0, 0, 1, 0]), 8],
      ['not protobuf', env(0, Buffer.from([0x0a, 0xff])), 13],
    ];
    for (const [name, body, code] of cases) {
      const fast = await same(port, {}, body);
      assert.equal(fast.trailers['grpc-status'], String(code), name);
      assert.equal(fast.body.length, 0, `${name}: no message`);
    }
    // Connect refuses these before its interceptors, so only the stream path's answers are counted.
    assert.equal(calls.length, cases.length);
  });
});

test('GIVEN a token THEN NextId without it or with a wrong one is UNAUTHENTICATED as from Connect; with it, an ID', async () => {
  await withPort(['--token', TOKEN], true, async (port) => {
    for (const auth of [undefined, 'Bearer wrong-token', 'Basic abc']) {
      const fast = await same(port, auth === undefined ? {} : { authorization: auth }, EMPTY);
      assert.equal(fast.trailers['grpc-status'], '16');
      assert.equal(fast.trailers['flurry-error-code'], 'FLURRY_E_UNAUTHORIZED');
    }
    const ok = await same(port, { authorization: `Bearer ${TOKEN}` }, EMPTY);
    assert.equal(ok.trailers['grpc-status'], '0');
  });
});

test('GIVEN no lease THEN NextId is UNAVAILABLE with FLURRY_E_UNAVAILABLE as from Connect', async () => {
  await withPort([], false, async (port, calls) => {
    const fast = await same(port, {}, EMPTY);
    assert.equal(fast.trailers['grpc-status'], '14');
    assert.equal(fast.trailers['flurry-error-code'], 'FLURRY_E_UNAVAILABLE');
    assert.deepEqual(calls, ['grpc IdService/NextId unavailable', 'grpc IdService/NextId unavailable']);
  });
});

test('GIVEN random IDs THEN the hand-built NextIdResponse is protobuf-es own encoding in a gRPC envelope', () => {
  for (const id of [
    0n,
    1n,
    9n,
    10n,
    2n ** 63n,
    2n ** 64n - 1n,
    ...Array.from({ length: 200 }, () =>
      BigInt.asUintN(64, BigInt(Math.floor(Math.random() * 2 ** 53)) << BigInt(Math.floor(Math.random() * 12))),
    ),
  ]) {
    const want = toBinary(NextIdResponseSchema, create(NextIdResponseSchema, { id, idString: id.toString() }));
    assert.deepEqual(nextIdAnswer(id), env(0, Buffer.from(want)));
  }
});

test('GIVEN the stream path alone THEN it takes gRPC NextId and leaves Connect, gRPC-Web, browsers, compression, bad deadlines and other methods', async () => {
  let next = 100n;
  const fast = hotCalls({
    ids: {
      next: () => next++,
      nextString: () => String(next++),
      fill: (a, at, n) => {
        for (let i = 0; i < n; i++) a[at + i] = next++;
        return n;
      },
    },
    maxBatch: 10,
    maxMessageBytes: 64,
    token: undefined,
    record: undefined,
  });
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    if (!fast(stream, headers)) stream.respond({ ':status': 404 }, { endStream: true });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const ok = await call(port, {}, EMPTY);
    assert.equal(ok.headers[':status'], 200);
    assert.equal(fromBinary(NextIdResponseSchema, ok.body.subarray(5)).id, 100n);
    const streamed = await call(port, {}, streamReq(2, 3), 'StreamIds');
    assert.deepEqual(chunksOf(streamed.body), [[101n, 102n], [103n]]);
    const declined: Record<string, string>[] = [
      { origin: 'http://example.test' },
      { 'content-type': 'application/grpc-web+proto' },
      { 'content-type': 'application/grpc+json' },
      { 'content-type': 'application/proto' },
      { 'grpc-encoding': 'gzip' },
      { 'grpc-timeout': 'soon' },
      { ':path': '/flurry.v1.IdService/BatchIds' },
      { ':method': 'GET' },
      { ':path': '/flurry.v1.IdService/StreamIds', 'grpc-timeout': '5S' },
    ];
    for (const h of declined) assert.equal((await call(port, h, EMPTY)).headers[':status'], 404, JSON.stringify(h));
    assert.equal(next, 104n, 'only the calls it took issued IDs');
  } finally {
    await new Promise((r) => server.close(r));
  }
});

/** The messages of a gRPC body: each one's IDs (StreamIdsResponse's packed field 1). */
function chunksOf(body: Buffer): bigint[][] {
  const out: bigint[][] = [];
  for (let at = 0; at < body.length;) {
    const length = body.readUInt32BE(at + 1);
    assert.equal(body[at], 0, 'an uncompressed message');
    out.push(fromBinary(StreamIdsResponseSchema, body.subarray(at + 5, at + 5 + length)).ids);
    at += 5 + length;
  }
  return out;
}

const streamReq = (chunk: number, limit: number): Buffer =>
  env(
    0,
    Buffer.from(toBinary(StreamIdsRequestSchema, create(StreamIdsRequestSchema, { chunk, limit: BigInt(limit) }))),
  );

test('GIVEN StreamIds over gRPC THEN the stream path sends what Connect sends: the same chunks, headers and trailers, new increasing IDs', async () => {
  await withPort(['--max-batch', '5'], true, async (port, calls) => {
    const seen: bigint[] = [];
    for (const [headers, req, sizes] of [
      [{}, streamReq(3, 10), [3, 3, 3, 1]],
      [{ 'grpc-accept-encoding': 'identity,deflate,gzip' }, streamReq(5, 5), [5]],
      [{}, streamReq(0, 7), [5, 2]],
    ] as [Record<string, string>, Buffer, number[]][]) {
      const fast = await call(port, headers, req, 'StreamIds');
      const connect = await call(port, { ...headers, origin: 'http://example.test' }, req, 'StreamIds');
      assert.deepEqual(comparable(fast), comparable(connect));
      assert.equal(fast.trailers['grpc-status'], '0');
      for (const a of [fast, connect]) {
        const chunks = chunksOf(a.body);
        assert.deepEqual(
          chunks.map((c) => c.length),
          sizes,
        );
        seen.push(...chunks.flat());
      }
    }
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `ID ${i} increases`);
    assert.equal(calls.filter((c) => c === 'grpc IdService/StreamIds ok').length, 6);
  });
});

test('GIVEN bad StreamIds calls THEN the same gRPC errors as Connect and no ID', async () => {
  await withPort(['--max-batch', '5', '--token', TOKEN], true, async (port) => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const [name, headers, body, code] of [
      ['no token', {}, streamReq(1, 1), 16],
      ['chunk past maxBatch', auth, streamReq(6, 1), 8],
      ['no message', auth, Buffer.alloc(0), 12],
      ['two messages', auth, Buffer.concat([streamReq(1, 1), streamReq(1, 1)]), 12],
      ['not protobuf', auth, env(0, Buffer.from([0x08])), 13],
    ] as [string, Record<string, string>, Buffer, number][]) {
      const fast = await same(port, headers, body, 'StreamIds');
      assert.equal(fast.trailers['grpc-status'], String(code), name);
      assert.equal(fast.body.length, 0, name);
    }
  });
  await withPort([], false, async (port) => {
    const fast = await same(port, {}, streamReq(2, 4), 'StreamIds');
    assert.equal(fast.trailers['grpc-status'], '14');
    assert.equal(fast.trailers['flurry-error-code'], 'FLURRY_E_UNAVAILABLE');
  });
});

test('GIVEN a long StreamIds read at full speed THEN 200,000 IDs, each new and larger than the one before (buffers are reused only once sent)', async () => {
  await withPort([], true, async (port) => {
    const a = await call(port, {}, streamReq(1000, 200_000), 'StreamIds');
    assert.equal(a.trailers['grpc-status'], '0');
    const ids = chunksOf(a.body).flat();
    assert.equal(ids.length, 200_000);
    for (let i = 1; i < ids.length; i++)
      if (!(ids[i] > ids[i - 1])) assert.fail(`ID ${i} (${ids[i]}) after ${ids[i - 1]}`);
  });
});
