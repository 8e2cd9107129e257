// `flurry serve --tls-cert --tls-key`: HTTPS on the HTTP port (h2 and HTTP/1.1 by ALPN), gRPC
// over TLS (h2 by ALPN) and Connect over TLS on the gRPC port, with self-signed certificates
// made by Debian's openssl at test time; SIGHUP re-reads the pair (new connections get the new
// certificate), a bad pair on reload keeps the old one, one file without the other stops the
// start, and SIGTERM sends open h2 connections a GOAWAY.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, execFile } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { httpGet, runFlurry, startFlurry, tempDir, type FlurryProcess } from './test-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PROTO = path.join(ROOT, 'proto');

function makeCert(dir: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      `/CN=flurry-test-${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

/** GET over HTTPS (ALPN `http/1.1`) trusting `ca`; resolves to the status, body, headers, ALPN and the server certificate's fingerprint. */
function httpsGet(
  port: number,
  p: string,
  ca: Buffer,
): Promise<{ status: number; body: string; fingerprint: string; alpn: string | false | null; headers: object }> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: p, ca, agent: false, timeout: 5_000, ALPNProtocols: ['http/1.1'] };
    const req = https.get(options, (res) => {
      const socket = res.socket as tls.TLSSocket;
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      const alpn = socket.alpnProtocol;
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint, alpn, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** GETs over one h2 connection (`http2.connect`) trusting `ca`. */
function h2Client(port: number, ca: Buffer | Buffer[]) {
  const session = http2.connect(`https://127.0.0.1:${port}`, { ca });
  session.on('error', () => undefined);
  const get = (p: string) =>
    new Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = session.request({ ':path': p });
      let headers: http2.IncomingHttpHeaders = {};
      let body = '';
      req.setEncoding('utf8');
      req.on('response', (h) => (headers = h));
      req.on('data', (d: string) => (body += d));
      req.on('end', () => resolve({ status: Number(headers[':status']), headers, body }));
      req.on('error', reject);
    });
  return { session, get, alpn: new Promise<unknown>((r) => session.once('connect', () => r(session.alpnProtocol))) };
}

/** Sends `bytes` over TLS with the ALPN `protocol` (or plain TCP without one); resolves once the server closes or after 1 s. */
function sendRaw(port: number, bytes: Buffer | string, protocol?: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = protocol
      ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: [protocol] }, () =>
          socket.write(bytes),
        )
      : net.connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.on('close', () => resolve());
    setTimeout(() => socket.destroy(), 1_000);
  });
}

type Unary = (req: object, cb: (err: grpc.ServiceError | null, res?: { idString: string }) => void) => void;

function grpcNextId(port: number, ca: Buffer): Promise<string> {
  const def = protoLoader.loadSync('flurry/v1/id_service.proto', { includeDirs: [PROTO], longs: String });
  const pkg = grpc.loadPackageDefinition(def) as { flurry: { v1: { IdService: grpc.ServiceClientConstructor } } };
  const client = new pkg.flurry.v1.IdService(
    `127.0.0.1:${port}`,
    grpc.credentials.createSsl(ca),
  ) as unknown as grpc.Client & { NextId: Unary };
  return new Promise<string>((resolve, reject) =>
    client.NextId.call(client, {}, (err, res) => (err ? reject(err) : resolve(res?.idString ?? ''))),
  ).finally(() => client.close());
}

describe('flurry serve --tls-cert --tls-key', () => {
  const dir = tempDir('tls');
  let svc: FlurryProcess;
  let grpcPort: number;
  const live = { cert: path.join(dir, 'live.crt'), key: path.join(dir, 'live.key') };
  let a: { cert: string; key: string };
  let b: { cert: string; key: string };
  const fp = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
  before(async () => {
    a = makeCert(dir, 'a');
    b = makeCert(dir, 'b');
    copyFileSync(a.cert, live.cert);
    copyFileSync(a.key, live.key);
    svc = await startFlurry({
      args: ['--grpc-port', '0', '--tls-cert', live.cert, '--tls-key', live.key, '--shutdown-timeout-ms', '10000'],
    });
    grpcPort = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
  });
  after(async () => {
    if (svc) assert.equal((await svc.stop()).code, 0, svc.stderr()); // stopped already by the last test
    rmSync(dir, { recursive: true, force: true });
  });

  test('GIVEN the certificate THEN the HTTP port answers HTTPS (the console too), and plain HTTP gets no ID', async () => {
    const ca = readFileSync(a.cert);
    const r = await httpsGet(svc.port, '/v1/ids/next', ca);
    assert.equal(r.status, 200, r.body);
    assert.match((JSON.parse(r.body) as { id: string }).id, /^\d+$/);
    assert.equal(r.fingerprint, fp(a.cert));
    assert.equal((await httpsGet(svc.port, '/', ca)).status, 200);
    const plain = await httpGet(svc.port, '/v1/ids/next').then(
      (x) => x.status,
      () => 0,
    );
    assert.notEqual(plain, 200);
  });

  test('GIVEN the certificate THEN h2 (by ALPN) and HTTP/1.1 (by ALPN) give the same answers, h2 without HTTP/1-only headers', async () => {
    const ca = readFileSync(a.cert);
    const h2 = h2Client(svc.port, ca);
    try {
      assert.equal(await h2.alpn, 'h2');
      const h1 = await httpsGet(svc.port, '/v1/ids/next', ca);
      assert.equal(h1.alpn, 'http/1.1');
      for (const p of ['/v1/ids/next', '/v1/ids?count=5', '/readyz']) {
        const [r2, r1] = await Promise.all([h2.get(p), httpsGet(svc.port, p, ca)]);
        assert.equal(r2.status, 200, r2.body);
        assert.equal(r1.status, 200, r1.body);
        assert.deepEqual(Object.keys(JSON.parse(r2.body) as object), Object.keys(JSON.parse(r1.body) as object));
      }
      assert.equal((JSON.parse((await h2.get('/v1/ids?count=5')).body) as { ids: string[] }).ids.length, 5);
      // A URL past maxUrlBytes closes an HTTP/1.1 connection (`connection: close`); on h2 only the stream ends.
      const long = `/v1/ids/next?${'x'.repeat(9_000)}`;
      const [r2, r1] = await Promise.all([h2.get(long), httpsGet(svc.port, long, ca)]);
      assert.equal(r2.status, 414);
      assert.equal(r2.headers.connection, undefined);
      assert.doesNotMatch(svc.stderr(), /connection header/, 'no HTTP/1-only header was set on an h2 response');
      assert.equal((r1.headers as { connection?: string }).connection, 'close');
      assert.equal((await h2.get('/v1/ids/next')).status, 200, 'the h2 connection still serves');
    } finally {
      h2.session.close();
    }
  });

  test('GIVEN h2 THEN /v1/events streams its frames', async () => {
    const h2 = h2Client(svc.port, readFileSync(a.cert));
    const req = h2.session.request({ ':path': '/v1/events' });
    let text = '';
    req.setEncoding('utf8');
    const [headers] = (await Promise.all([
      new Promise((r) => req.once('response', r)),
      new Promise<void>((r) =>
        req.on('data', (d: string) => {
          text += d;
          if (text.includes('event: cluster')) r();
        }),
      ),
    ])) as [http2.IncomingHttpHeaders, void];
    assert.equal(headers[':status'], 200);
    assert.match(String(headers['content-type']), /^text\/event-stream/);
    assert.match(text, /^retry: 2000\n\nevent: status\ndata: \{.*\n\nevent: cluster\ndata: /s);
    req.close();
    h2.session.close();
  });

  test('GIVEN a malformed h2 preface, garbage over TLS or bytes without TLS THEN the server keeps serving', async () => {
    await sendRaw(svc.port, 'GET / HTTP/1.1\r\n\r\n', 'h2');
    await sendRaw(
      svc.port,
      Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.alloc(64, 0xff)]),
      'h2',
    );
    await sendRaw(svc.port, Buffer.alloc(4096, 0x07), 'h2');
    await sendRaw(svc.port, 'GARBAGE\r\n\r\n', 'http/1.1');
    await sendRaw(svc.port, Buffer.alloc(4096, 0x16));
    const h2 = h2Client(svc.port, readFileSync(a.cert));
    assert.equal((await h2.get('/readyz')).status, 200);
    h2.session.close();
    assert.equal(svc.process.exitCode, null, 'still running');
  });

  test('GIVEN the certificate THEN @flurry/client (node:https) gets IDs from the https:// URL', async () => {
    const script = `import { createClient } from '@flurry/client';
      const c = createClient({ servers: process.argv[1] });
      const ids = [await c.next(), ...(await c.batch(100))];
      await c.close();
      console.log(new Set(ids.map(String)).size);`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script, `https://127.0.0.1:${svc.port}`],
        { cwd: ROOT, env: { ...process.env, NODE_EXTRA_CA_CERTS: a.cert }, timeout: 15_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)),
      ),
    );
    assert.equal(out.trim(), '101');
  });

  test('GIVEN the certificate WHEN flurry status --url https:// THEN it trusts --ca or NODE_EXTRA_CA_CERTS, and says what to do otherwise', async () => {
    const url = `https://127.0.0.1:${svc.port}`;
    const withCa = await runFlurry(['status', '--url', url, '--ca', a.cert]);
    assert.equal(withCa.code, 0, withCa.stderr);
    assert.match(withCa.stdout, /1 holder/);
    const extra = await runFlurry(['status', '--url', url, '--json'], { NODE_EXTRA_CA_CERTS: a.cert });
    assert.equal(extra.code, 0, extra.stderr);
    assert.equal((JSON.parse(extra.stdout) as { holders: unknown[] }).holders.length, 1);
    for (const args of [[], ['--ca', b.cert]]) {
      const untrusted = await runFlurry(['status', '--url', url, ...args]);
      assert.equal(untrusted.code, 2, untrusted.stderr);
      assert.match(
        untrusted.stderr,
        /^flurry: FLURRY_E_TLS_UNTRUSTED: the service at https:\/\/127\.0\.0\.1:\d+ presented a certificate this machine does not trust \(\w+.*--ca FILE/,
      );
    }
    const missing = await runFlurry(['status', '--url', url, '--ca', path.join(dir, 'nope.pem')]);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /^flurry: FLURRY_E_CONFIG: --ca .*nope\.pem cannot be used \(ENOENT.*give the PEM file of the CA/,
    );
    const notPem = await runFlurry(['status', '--url', url, '--ca', a.key]);
    assert.equal(notPem.code, 2);
    assert.match(notPem.stderr, /FLURRY_E_CONFIG: --ca .* cannot be used \(it holds no PEM certificate\)/);
    const plain = await runFlurry(['status', '--url', `http://127.0.0.1:${svc.port}`, '--ca', a.cert]);
    assert.equal(plain.code, 2);
    assert.match(plain.stderr, /FLURRY_E_USAGE: --ca applies to an https:\/\/ --url only/);
  });

  test('GIVEN the certificate THEN gRPC over TLS (h2 by ALPN) and Connect JSON over TLS (HTTP/2 and HTTP/1.1) answer', async () => {
    const ca = readFileSync(a.cert);
    assert.match(await grpcNextId(grpcPort, ca), /^\d+$/);
    for (const version of ['--http2', '--http1.1']) {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          'curl',
          ['-sS', '-i', version, '--cacert', a.cert, '-H', 'content-type: application/json', '-d', '{}'].concat(
            `https://127.0.0.1:${grpcPort}/flurry.v1.IdService/NextId`,
          ),
          { timeout: 10_000 },
          (err, stdout) => (err ? reject(new Error(err.message)) : resolve(stdout)),
        ),
      );
      assert.match(out, version === '--http2' ? /^HTTP\/2 200/ : /^HTTP\/1\.1 200/, out);
      assert.match(out, /"idString":"\d+"/);
    }
  });

  test('GIVEN new files and SIGHUP THEN new connections get the new certificate; a bad pair keeps the one in use', async () => {
    copyFileSync(b.cert, live.cert);
    copyFileSync(b.key, live.key);
    svc.process.kill('SIGHUP');
    await svc.waitForLog((l) => l.msg === 'TLS certificate and key reloaded');
    const caB = readFileSync(b.cert);
    const r = await httpsGet(svc.port, '/v1/ids/next', caB);
    assert.equal(r.status, 200);
    const h2 = h2Client(svc.port, caB);
    assert.equal((await h2.get('/v1/ids/next')).status, 200, 'h2 with the new certificate');
    h2.session.close();
    assert.equal(r.fingerprint, fp(b.cert));
    assert.match(await grpcNextId(grpcPort, caB), /^\d+$/);
    await assert.rejects(grpcNextId(grpcPort, readFileSync(a.cert)), 'the old certificate is no longer served');

    copyFileSync(a.key, live.key); // a key that does not match the certificate
    svc.process.kill('SIGHUP');
    const failed = await svc.waitForLog((l) => l.msg === 'TLS reload failed; the certificate in use stays');
    assert.equal(failed.code, 'FLURRY_E_CONFIG');
    assert.match(String(failed.error), /key values mismatch/);
    assert.equal((await httpsGet(svc.port, '/v1/ids/next', caB)).fingerprint, fp(b.cert));
    assert.equal(svc.process.exitCode, null, 'still running');
  });

  test('GIVEN one file without the other or an unreadable one THEN the start stops with FLURRY_E_CONFIG', async () => {
    const only = await runFlurry(['serve', '--port', '0', '--allow-root', '--tls-cert', a.cert]);
    assert.equal(only.code, 2, only.stderr);
    assert.match(only.stderr, /FLURRY_E_CONFIG: --tls-cert is set without --tls-key/);
    const garbage = path.join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a pem');
    const bad = await runFlurry(['serve', '--port', '0', '--allow-root', '--tls-cert', garbage, '--tls-key', a.key]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /FLURRY_E_CONFIG: the TLS certificate .* cannot be used/);
  });

  test('GIVEN an open h2 connection with a live event stream WHEN SIGTERM THEN a GOAWAY ends it and the exit comes well within the shutdown timeout', async () => {
    const h2 = h2Client(svc.port, [readFileSync(a.cert), readFileSync(b.cert)]);
    assert.equal((await h2.get('/v1/ids/next')).status, 200);
    const events = h2.session.request({ ':path': '/v1/events' });
    await new Promise((r) => events.once('data', r));
    const goaway = new Promise<number>((r) => h2.session.once('goaway', r));
    const ended = new Promise<void>((r) => events.on('end', r).resume());
    const t0 = Date.now();
    const exit = await svc.stop('SIGTERM', 20_000);
    const ms = Date.now() - t0;
    assert.equal(exit.code, 0, svc.stderr());
    assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
    await ended;
    assert.ok(ms < 5_000, `stopped in ${ms} ms; the shutdown timeout (10,000 ms) was not waited out`);
    h2.session.destroy();
  });
});
