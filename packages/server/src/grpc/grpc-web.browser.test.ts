// gRPC-Web and Connect from Chromium (driven by playwright-core): a page served by this
// test on its own origin calls flurry serve's gRPC port with fetch, framing gRPC-Web by
// hand, across origins (CORS), with and without the token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { Layout } from '@flurry/core';
import { launchChromium } from '../testing/browser.js';
import { startFlurry, type FlurryProcess } from '../test-support.js';

const TOKEN = 'browser-grpc-token-0123456789';
let svc: FlurryProcess;
let browser: Browser;
let page: Server;

before(async () => {
  svc = await startFlurry({ args: ['--grpc-port', '0'], env: { FLURRY_TOKEN: TOKEN } });
  browser = await launchChromium();
  page = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>grpc-web</title><p>gRPC-Web test page</p>');
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
});
after(async () => {
  await browser?.close();
  page?.close();
  assert.equal((await svc.stop()).code, 0, svc.stderr());
});

interface WebAnswer {
  http: number;
  ids: string[];
  trailers: string;
}

test('GIVEN a page on another origin THEN gRPC-Web NextId and BatchIds answer IDs of this service, a missing token is grpc-status 16, and Connect JSON works', async () => {
  const grpcPort = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
  const p = await browser.newPage();
  await p.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
  const base = `http://127.0.0.1:${grpcPort}`;
  // Runs in the page: one gRPC-Web call (binary), its fixed64 IDs read from field 1 (packed or not), and the trailer frame.
  const call = (method: string, msg: number[], token: string | null) =>
    p.evaluate(
      async ({ base, method, msg, token }) => {
        const body = new Uint8Array(5 + msg.length);
        new DataView(body.buffer).setUint32(1, msg.length);
        body.set(msg, 5);
        const headers: Record<string, string> = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
        if (token) headers.authorization = `Bearer ${token}`;
        const res = await fetch(`${base}/flurry.v1.IdService/${method}`, { method: 'POST', headers, body });
        const buf = new Uint8Array(await res.arrayBuffer());
        const view = new DataView(buf.buffer);
        const ids: string[] = [];
        let trailers = res.headers.get('grpc-status') !== null ? `grpc-status:${res.headers.get('grpc-status')}` : '';
        for (let at = 0; at + 5 <= buf.length;) {
          const flag = buf[at];
          const len = view.getUint32(at + 1);
          const m = buf.subarray(at + 5, at + 5 + len);
          if (flag & 0x80) trailers += new TextDecoder().decode(m);
          else {
            for (let i = 0; i < m.length;) {
              const tag = m[i++];
              if (tag === 0x09) {
                ids.push(new DataView(m.buffer, m.byteOffset + i, 8).getBigUint64(0, true).toString());
                i += 8;
              } else if (tag === 0x0a) {
                let n = 0;
                let shift = 0;
                while (m[i] & 0x80) {
                  n |= (m[i++] & 0x7f) << shift;
                  shift += 7;
                }
                n |= m[i++] << shift;
                for (let end = i + n; i < end; i += 8)
                  ids.push(new DataView(m.buffer, m.byteOffset + i, 8).getBigUint64(0, true).toString());
              } else break; // id_string and other fields: not needed here
            }
          }
          at += 5 + len;
        }
        return { http: res.status, ids, trailers };
      },
      { base, method, msg, token },
    ) as Promise<WebAnswer>;

  const one = await call('NextId', [], TOKEN);
  assert.equal(one.http, 200);
  assert.match(one.trailers, /grpc-status:\s*0/);
  assert.equal(one.ids.length, 1);
  const layout = Layout.from('twitter');
  assert.ok(Math.abs(layout.decode(BigInt(one.ids[0])).unixMs - Date.now()) < 60_000);

  const batch = await call('BatchIds', [0x08, 5], TOKEN); // count = 5
  assert.equal(batch.ids.length, 5);
  const ids = batch.ids.map(BigInt);
  assert.ok(ids[0] > BigInt(one.ids[0]));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);

  const refused = await call('NextId', [], null);
  assert.equal(refused.ids.length, 0);
  assert.match(refused.trailers, /grpc-status:\s*16/);
  assert.match(refused.trailers, /flurry-error-code:\s*FLURRY_E_UNAUTHORIZED/);

  const json = await p.evaluate(
    async ({ base, token }) => {
      const res = await fetch(`${base}/flurry.v1.IdService/NextId`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: '{}',
      });
      return (await res.json()) as { id: string; idString: string };
    },
    { base, token: TOKEN },
  );
  assert.equal(json.id, json.idString);
  assert.ok(BigInt(json.id) > ids[ids.length - 1]);
  await p.close();
});
