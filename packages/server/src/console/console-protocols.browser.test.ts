// The console's per-route table in chromium (playwright-core, ./browser.ts) beside the HTTP
// routes: the gRPC, Connect and memcached front-ends of a real `flurry serve`, called by
// @grpc/grpc-js, fetch (Connect JSON) and a raw memcached socket, show up with their counts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Browser } from 'playwright-core';
import { httpGet, startFlurry, type FlurryProcess } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';
import type { StatusBody } from './types.js';

const PROTO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../proto');

type Unary = (req: object, cb: (err: grpc.ServiceError | null) => void) => void;

function memcachedGets(port: number, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    let left = n;
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      while (buf.includes('END\r\n')) {
        buf = buf.slice(buf.indexOf('END\r\n') + 5);
        if (--left === 0) {
          sock.end();
          resolve();
        }
      }
    });
    sock.on('error', reject);
    sock.write('get a\r\n'.repeat(n));
  });
}

describe('the console per-route table with gRPC, Connect and memcached', () => {
  let browser: Browser;
  let svc: FlurryProcess;
  let grpcPort: number;
  before(async () => {
    browser = await launchChromium();
    svc = await startFlurry({ args: ['--grpc-port', '0', '--memcached-port', '0'] });
    grpcPort = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
    assert.ok(grpcPort > 0 && svc.memcachedPort, 'both ports are on');
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('GIVEN calls on every protocol THEN /v1/status counts them and the page lists them under their protocol', async () => {
    const def = protoLoader.loadSync('flurry/v1/id_service.proto', { includeDirs: [PROTO] });
    const pkg = grpc.loadPackageDefinition(def) as { flurry: { v1: { IdService: grpc.ServiceClientConstructor } } };
    const client = new pkg.flurry.v1.IdService(
      `127.0.0.1:${grpcPort}`,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & { NextId: Unary; BatchIds: Unary };
    const unary = (fn: Unary, req: object) =>
      new Promise<grpc.ServiceError | null>((resolve) => fn.call(client, req, (err) => resolve(err)));
    for (let i = 0; i < 3; i++) assert.equal(await unary(client.NextId, {}), null);
    assert.equal((await unary(client.BatchIds, { count: 0 }))?.code, grpc.status.INVALID_ARGUMENT);
    client.close();
    const connect = await fetch(`http://127.0.0.1:${grpcPort}/flurry.v1.IdService/NextId`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(connect.status, 200);
    await memcachedGets(svc.memcachedPort as number, 5);
    await httpGet(svc.port, '/v1/ids/next');

    const status = JSON.parse((await httpGet(svc.port, '/v1/status')).body) as StatusBody;
    const row = (protocol: string, command: string) =>
      status.protocols.find((r) => r.protocol === protocol && r.command === command);
    assert.deepEqual([row('grpc', 'IdService/NextId')?.requests, row('grpc', 'IdService/NextId')?.errors], [3, 0]);
    assert.deepEqual([row('grpc', 'IdService/BatchIds')?.requests, row('grpc', 'IdService/BatchIds')?.errors], [1, 1]);
    assert.equal(row('connect', 'IdService/NextId')?.requests, 1);
    assert.equal(row('memcached', 'get')?.requests, 5);
    assert.ok((row('memcached', 'get')?.p99Ms ?? 0) > 0);

    const origin = `http://127.0.0.1:${svc.port}`;
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(15_000);
    const watch = watchPage(page, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    await page.locator('#routes tr', { hasText: 'memcached' }).waitFor();
    const rows = await page.evaluate<string[][]>(
      "[...document.querySelectorAll('#routes tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))",
    );
    const find = (protocol: string, name: string) => rows.find((r) => r[0] === protocol && r[1] === name);
    assert.equal(find('grpc', 'IdService/NextId')?.[2], '3', JSON.stringify(rows));
    assert.equal(find('grpc', 'IdService/BatchIds (1 failed)')?.[2], '1', JSON.stringify(rows));
    assert.equal(find('connect', 'IdService/NextId')?.[2], '1', JSON.stringify(rows));
    assert.equal(find('memcached', 'get')?.[2], '5', JSON.stringify(rows));
    assert.ok(find('http', 'ids_next'), JSON.stringify(rows));
    assert.deepEqual(watch.problems, []);
    await page.close();
  });
});
