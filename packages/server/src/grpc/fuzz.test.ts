// Hostile input on the gRPC port of a real `flurry serve`: malformed HTTP/2 frames,
// random bytes, oversized and malformed gRPC messages, wrong content types. The process
// never crashes, answers each with an error (or closes that connection), and stays ready
// and issuing afterwards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { httpGet, rawRequest, startFlurry, type FlurryProcess } from '../test-support.js';

const TOKEN = 'fuzz-grpc-token-0123456789';
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** A deterministic PRNG (xorshift32), so a failure replays. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

function bytes(rand: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

function frame(type: number, flags: number, stream: number, payload: Buffer, claimedLength = payload.length): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(claimedLength, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([h, payload]);
}

/** Sends `data` on a new connection and waits until the server closes it or 500 ms pass. */
function blast(port: number, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(data));
    const t = setTimeout(() => s.destroy(), 500);
    s.on('data', () => undefined);
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

function h2call(
  port: number,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer,
): Promise<{ status: number; headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const c = http2.connect(`http://127.0.0.1:${port}`);
    c.on('error', reject);
    const req = c.request({ ':method': 'POST', ...headers });
    let trailers: http2.IncomingHttpHeaders = {};
    let head: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (head = h));
    req.on('trailers', (t: http2.IncomingHttpHeaders) => (trailers = t));
    req.on('data', () => undefined);
    req.on('end', () => {
      c.close();
      resolve({ status: Number(head[':status']), headers: head, trailers });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function grpcFrame(msg: Buffer, flags = 0, claimed = msg.length): Buffer {
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(claimed, 1);
  return Buffer.concat([h, msg]);
}

describe('hostile input on the gRPC port', () => {
  let svc: FlurryProcess;
  let port: number;
  const auth = { authorization: `Bearer ${TOKEN}` };
  before(async () => {
    svc = await startFlurry({ args: ['--grpc-port', '0'], env: { FLURRY_TOKEN: TOKEN } });
    port = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
  });
  after(async () => {
    assert.equal((await svc.stop()).code, 0, svc.stderr());
  });

  async function stillServing(): Promise<void> {
    assert.equal(svc.process.exitCode, null, 'the process is alive');
    assert.equal((await httpGet(svc.port, '/readyz')).status, 200);
    const r = await h2call(
      port,
      { ':path': '/flurry.v1.IdService/NextId', 'content-type': 'application/grpc', te: 'trailers', ...auth },
      grpcFrame(Buffer.alloc(0)),
    );
    assert.equal(r.status, 200);
    assert.equal(r.trailers['grpc-status'], '0');
  }

  test('GIVEN random bytes, after the HTTP/2 preface or without it THEN each connection is dropped or refused; the server stays ready', async () => {
    const rand = rng(27);
    for (let i = 0; i < 60; i++) {
      const junk = bytes(rand, 1 + Math.floor(rand() * 600));
      await blast(port, i % 2 === 0 ? Buffer.concat([PREFACE, junk]) : junk);
    }
    await stillServing();
  });

  test('GIVEN malformed HTTP/2 frames (bad lengths, HPACK garbage, frames on stream 0, oversized SETTINGS) THEN the server stays ready', async () => {
    const rand = rng(2027);
    const settings = frame(4, 0, 0, Buffer.alloc(0));
    const cases = [
      frame(1, 0x4, 1, bytes(rand, 40)), // HEADERS with garbage HPACK
      frame(0, 0x1, 0, bytes(rand, 10)), // DATA on stream 0
      frame(4, 0, 0, bytes(rand, 7)), // SETTINGS of a bad length
      frame(8, 0, 1, Buffer.from([0, 0, 0, 0])), // WINDOW_UPDATE of 0 on an idle stream
      frame(1, 0x4, 1, Buffer.alloc(0), 16_000_000), // a length past the maximum frame size
      frame(9, 0x4, 3, bytes(rand, 8)), // CONTINUATION with no HEADERS
      frame(6, 0, 1, bytes(rand, 8)), // PING on a stream
    ];
    for (let i = 0; i < 40; i++) {
      const type = Math.floor(rand() * 12);
      cases.push(frame(type, Math.floor(rand() * 256), Math.floor(rand() * 8), bytes(rand, 64)));
    }
    // Eight connections at a time: a frame the server does not close on costs blast's 500 ms.
    for (let i = 0; i < cases.length; i += 8) {
      await Promise.all(cases.slice(i, i + 8).map((c) => blast(port, Buffer.concat([PREFACE, settings, c]))));
    }
    await stillServing();
  });

  test('GIVEN an oversized message, a lying length prefix, a compressed flag without an encoding, a non-protobuf body THEN gRPC errors, no crash', async () => {
    const path = {
      ':path': '/flurry.v1.IdService/DecodeId',
      'content-type': 'application/grpc',
      te: 'trailers',
      ...auth,
    };
    const big = await h2call(port, path, grpcFrame(Buffer.alloc(200_000, 0x41)));
    assert.equal(big.trailers['grpc-status'] ?? big.headers['grpc-status'], '8', 'RESOURCE_EXHAUSTED');
    const lying = await h2call(port, path, grpcFrame(Buffer.alloc(10), 0, 4_000_000_000));
    assert.notEqual(lying.trailers['grpc-status'] ?? lying.headers['grpc-status'], '0');
    const compressed = await h2call(port, path, grpcFrame(Buffer.alloc(10), 1));
    assert.notEqual(compressed.trailers['grpc-status'] ?? compressed.headers['grpc-status'], '0');
    const garbage = await h2call(port, path, grpcFrame(bytes(rng(5), 50)));
    assert.equal(garbage.trailers['grpc-status'] ?? garbage.headers['grpc-status'], '13', 'INTERNAL: cannot decode');
    await stillServing();
  });

  test('GIVEN wrong content types and methods THEN 415 / 405 / 404, never an ID', async () => {
    const post = (p: string, type: string, body: string) =>
      rawRequest(
        port,
        `POST ${p} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    const text = await post('/flurry.v1.IdService/NextId', 'text/plain', '{}');
    assert.match(text, /^HTTP\/1\.1 415/);
    assert.doesNotMatch(text, /"id"/);
    assert.match(await post('/flurry.v1.IdService/NextId', 'application/json', '{not json'), /^HTTP\/1\.1 400/);
    assert.match(await post('/flurry.v1.IdService/Nope', 'application/json', '{}'), /^HTTP\/1\.1 404/);
    assert.match(await post('/nope', 'application/grpc', ''), /^HTTP\/1\.1 404/);
    const h2text = await h2call(
      port,
      { ':path': '/flurry.v1.IdService/NextId', 'content-type': 'text/html', ...auth },
      Buffer.from('x'),
    );
    assert.equal(h2text.status, 415);
    await stillServing();
    assert.ok(!svc.logs.some((l) => l.level === 50 || l.level === 60), 'no error logged');
  });
});
