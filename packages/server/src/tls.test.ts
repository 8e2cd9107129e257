// `flurry serve --tls-cert --tls-key`: HTTPS on the HTTP port, gRPC over TLS (h2 by ALPN)
// and Connect over TLS on the gRPC port, with self-signed certificates made by Debian's
// openssl at test time; SIGHUP re-reads the pair (new connections get the new certificate),
// a bad pair on reload keeps the old one, and one file without the other stops the start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, execFile } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { httpGet, runFlurry, startFlurry, tempDir, type FlurryProcess } from './test-support.js';

const PROTO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../proto');

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

/** GET over HTTPS trusting `ca`; resolves to the status, body and the server certificate's fingerprint. */
function httpsGet(port: number, p: string, ca: Buffer): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path: p, ca, agent: false, timeout: 5_000 }, (res) => {
      const fingerprint = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
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
    svc = await startFlurry({ args: ['--grpc-port', '0', '--tls-cert', live.cert, '--tls-key', live.key] });
    grpcPort = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
  });
  after(async () => {
    if (svc) assert.equal((await svc.stop()).code, 0, svc.stderr());
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
});
