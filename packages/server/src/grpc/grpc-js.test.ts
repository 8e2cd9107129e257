// flurry serve --grpc-port, called by clients that others wrote: @grpc/grpc-js with the
// repository's .proto loaded at run time (@grpc/proto-loader), and curl for Connect's JSON.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Layout, generateKey } from '@flurry/core';
import { httpGet, startFlurry, type FlurryProcess } from '../test-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const PROTO = path.join(ROOT, 'proto');
const TOKEN = 'grpc-test-token-0123456789';
const KEY = generateKey('G');

type Callback<T> = (err: grpc.ServiceError | null, res?: T) => void;
type Unary<Req, Res> = (req: Req, md: grpc.Metadata, cb: Callback<Res>) => grpc.ClientUnaryCall;
interface IdClient extends grpc.Client {
  NextId: Unary<object, { id: string; idString: string }>;
  BatchIds: Unary<{ count: number }, { ids: string[] }>;
  StreamIds(
    req: { chunk: number; limit: number | string },
    md: grpc.Metadata,
  ): grpc.ClientReadableStream<{ ids: string[] }>;
  DecodeId: Unary<{ id?: string; idString?: string }, Record<string, unknown>>;
  GetLayout: Unary<object, { name: string; totalBits: number; fields: { name: string; bits: number }[] }>;
  IdRange: Unary<{ from: string; to: string }, { min: string; maxExclusive: string; minString: string }>;
  NextSequence: Unary<{ key: string; count: number }, { values: string[] }>;
  EncodePublicId: Unary<{ id: string }, { publicId: string }>;
  DecodePublicId: Unary<{ publicId: string }, { id: string; idString: string }>;
}
interface HealthClient extends grpc.Client {
  Check: Unary<{ service: string }, { status: string }>;
}

function load(file: string): grpc.GrpcObject {
  const def = protoLoader.loadSync(file, { includeDirs: [PROTO], longs: String, enums: String, defaults: true });
  return grpc.loadPackageDefinition(def);
}

function call<Req, Res>(fn: Unary<Req, Res>, client: grpc.Client, req: Req, md = auth()): Promise<Res> {
  return new Promise((resolve, reject) =>
    fn.call(client, req, md, (err, res) => (err ? reject(err) : resolve(res as Res))),
  );
}

function auth(token = TOKEN): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
}

async function refused(p: Promise<unknown>, code: grpc.status, flurryCode: string): Promise<grpc.ServiceError> {
  const err = await p.then(
    () => assert.fail('the call should have failed'),
    (e: grpc.ServiceError) => e,
  );
  assert.equal(err.code, code, `${err.code} ${err.details}`);
  assert.deepEqual(err.metadata.get('flurry-error-code'), [flurryCode]);
  assert.match(err.details, new RegExp(flurryCode));
  return err;
}

async function issuedTotal(port: number): Promise<number> {
  const m = /^flurry_ids_issued_total (\d+)/m.exec(
    (await httpGet(port, '/metrics', { authorization: `Bearer ${TOKEN}` })).body,
  );
  return Number(m?.[1]);
}

function curl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('curl', ['-sS', '-i', ...args], { timeout: 10_000 }, (err, out) =>
      err ? reject(new Error(err.message)) : resolve(out),
    ),
  );
}

describe('flurry serve --grpc-port with a token and a public-ID key', () => {
  let svc: FlurryProcess;
  let port: number;
  let ids: IdClient;
  let health: HealthClient;
  const layout = Layout.from('twitter');
  before(async () => {
    svc = await startFlurry({
      args: ['--grpc-port', '0', '--max-batch', '5000'],
      env: { FLURRY_TOKEN: TOKEN, FLURRY_PUBLIC_KEY: KEY },
    });
    port = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
    assert.ok(port > 0, 'the ready line names the gRPC port');
    const flurry = load('flurry/v1/id_service.proto') as {
      flurry: { v1: { IdService: grpc.ServiceClientConstructor } };
    };
    ids = new flurry.flurry.v1.IdService(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as IdClient;
    const h = load('grpc/health/v1/health.proto') as {
      grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
    };
    health = new h.grpc.health.v1.Health(
      `127.0.0.1:${port}`,
      grpc.credentials.createInsecure(),
    ) as unknown as HealthClient;
  });
  after(async () => {
    ids?.close();
    health?.close();
    assert.equal((await svc.stop()).code, 0, svc.stderr());
  });

  test('GIVEN the token THEN NextId answers an ID of this node, as fixed64 and decimal, above an earlier HTTP ID', async () => {
    const httpId = BigInt(
      (
        JSON.parse((await httpGet(svc.port, '/v1/ids/next', { authorization: `Bearer ${TOKEN}` })).body) as {
          id: string;
        }
      ).id,
    );
    const r = await call(ids.NextId, ids, {});
    assert.equal(r.id, r.idString);
    assert.ok(BigInt(r.id) > httpId);
    const node = (
      JSON.parse((await httpGet(svc.port, '/readyz')).body) as { node: { worker: number; datacenter: number } }
    ).node;
    assert.deepEqual(layout.decode(BigInt(r.id)).fields, node);
  });

  test('GIVEN no token or a wrong one THEN UNAUTHENTICATED with FLURRY_E_UNAUTHORIZED', async () => {
    await refused(call(ids.NextId, ids, {}, new grpc.Metadata()), grpc.status.UNAUTHENTICATED, 'FLURRY_E_UNAUTHORIZED');
    await refused(
      call(ids.NextId, ids, {}, auth('wrong-token-0123456789')),
      grpc.status.UNAUTHENTICATED,
      'FLURRY_E_UNAUTHORIZED',
    );
  });

  test('GIVEN BatchIds THEN count increasing IDs; 0 is INVALID_ARGUMENT, past maxBatch RESOURCE_EXHAUSTED', async () => {
    const r = await call(ids.BatchIds, ids, { count: 5000 });
    assert.equal(r.ids.length, 5000);
    for (let i = 1; i < r.ids.length; i++) assert.ok(BigInt(r.ids[i]) > BigInt(r.ids[i - 1]));
    await refused(call(ids.BatchIds, ids, { count: 0 }), grpc.status.INVALID_ARGUMENT, 'FLURRY_E_BAD_REQUEST');
    await refused(call(ids.BatchIds, ids, { count: 5001 }), grpc.status.RESOURCE_EXHAUSTED, 'FLURRY_E_BATCH_COUNT');
  });

  test('GIVEN StreamIds(chunk 1000, limit 10000) THEN 10 chunks of increasing unique IDs, then the end', async () => {
    const chunks: string[][] = [];
    await new Promise<void>((resolve, reject) => {
      const s = ids.StreamIds({ chunk: 1000, limit: '10000' }, auth());
      s.on('data', (m: { ids: string[] }) => chunks.push(m.ids));
      s.on('error', reject);
      s.on('end', resolve);
    });
    assert.equal(chunks.length, 10);
    const all = chunks.flat().map(BigInt);
    assert.equal(all.length, 10_000);
    for (let i = 1; i < all.length; i++) assert.ok(all[i] > all[i - 1]);
  });

  test('GIVEN an endless StreamIds whose reader stops reading THEN issuing stops too (flow control), and cancelling ends it', async () => {
    const s = ids.StreamIds({ chunk: 1000, limit: 0 }, auth());
    let got = 0;
    s.on('data', () => {
      if (++got === 50) s.pause();
    });
    s.on('error', () => undefined);
    for (let i = 0; got < 50 && i < 500; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(got, 50);
    // The windows and socket buffers fill: wait until the count holds for three reads 250 ms
    // apart (a loaded machine takes longer than an idle one), at most 15 s.
    let a = await issuedTotal(svc.port);
    for (let held = 0, i = 0; held < 3 && i < 60; i++) {
      await new Promise((r) => setTimeout(r, 250));
      const now = await issuedTotal(svc.port);
      held = now === a ? held + 1 : 0;
      a = now;
    }
    await new Promise((r) => setTimeout(r, 700));
    const b = await issuedTotal(svc.port);
    assert.equal(b, a, `nothing issued while the reader is paused (${a} then ${b})`);
    s.cancel();
    s.resume();
    await new Promise((r) => setTimeout(r, 300));
    const c = await issuedTotal(svc.port);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await issuedTotal(svc.port), c, 'nothing issued after the cancel');
    assert.ok(c - a < 1_000_000, `a bounded amount was buffered: ${c - a} IDs`);
  });

  test('GIVEN DecodeId, GetLayout and IdRange THEN the answers of the core decoder and bounds', async () => {
    const { id } = await call(ids.NextId, ids, {});
    const d = layout.decode(BigInt(id));
    for (const req of [{ id }, { idString: id }]) {
      const r = await call(ids.DecodeId, ids, req);
      assert.equal(r.idString, id);
      assert.equal(Number(r.unixMs), d.unixMs);
      assert.equal(r.timestamp, d.timestamp);
      assert.equal(r.sequence, d.sequence);
      assert.deepEqual(r.fields, d.fields);
    }
    await refused(call(ids.DecodeId, ids, { idString: 'nope' }), grpc.status.INVALID_ARGUMENT, 'FLURRY_E_ID_MALFORMED');
    const l = await call(ids.GetLayout, ids, {});
    assert.equal(l.name, 'twitter');
    assert.equal(l.totalBits, 63);
    assert.deepEqual(
      l.fields.map((f) => f.name),
      layout.describe().fields.map((f) => f.name),
    );
    const b = layout.bounds(Date.parse('2026-11-01'), Date.parse('2026-12-01'));
    const r = await call(ids.IdRange, ids, { from: '2026-11-01', to: '2026-12-01' });
    assert.equal(r.min, b.min.toString());
    assert.equal(r.maxExclusive, b.maxExclusive.toString());
    await refused(
      call(ids.IdRange, ids, { from: 'yesterday', to: '2026-12-01' }),
      grpc.status.INVALID_ARGUMENT,
      'FLURRY_E_INVALID_OPTION',
    );
  });

  test('GIVEN the public-ID key THEN EncodePublicId and DecodePublicId round-trip; NextSequence is UNIMPLEMENTED without --sequences', async () => {
    const { id } = await call(ids.NextId, ids, {});
    const { publicId } = await call(ids.EncodePublicId, ids, { id });
    assert.ok(publicId.length > 0);
    const back = await call(ids.DecodePublicId, ids, { publicId });
    assert.equal(back.idString, id);
    await refused(
      call(ids.DecodePublicId, ids, { publicId: 'x' }),
      grpc.status.INVALID_ARGUMENT,
      'FLURRY_E_PUBLIC_ID_MALFORMED',
    );
    await refused(
      call(ids.NextSequence, ids, { key: 'k', count: 1 }),
      grpc.status.UNIMPLEMENTED,
      'FLURRY_E_SEQUENCES_DISABLED',
    );
  });

  test('GIVEN grpc.health.v1 THEN SERVING for the server and IdService (no token needed), NOT_FOUND for others', async () => {
    assert.equal((await call(health.Check, health, { service: '' }, new grpc.Metadata())).status, 'SERVING');
    assert.equal(
      (await call(health.Check, health, { service: 'flurry.v1.IdService' }, new grpc.Metadata())).status,
      'SERVING',
    );
    await refused(call(health.Check, health, { service: 'nope.Service' }), grpc.status.NOT_FOUND, 'FLURRY_E_NOT_FOUND');
  });

  test('GIVEN Connect JSON from curl THEN NextId answers JSON; without the token 401 unauthenticated with the code header', async () => {
    const ok = await curl([
      '-H',
      'content-type: application/json',
      '-H',
      `authorization: Bearer ${TOKEN}`,
      '-d',
      '{}',
      `http://127.0.0.1:${port}/flurry.v1.IdService/NextId`,
    ]);
    assert.match(ok, /^HTTP\/1\.1 200/);
    const body = JSON.parse(ok.slice(ok.indexOf('\r\n\r\n') + 4)) as { id: string; idString: string };
    assert.equal(body.id, body.idString);
    assert.ok(layout.decode(BigInt(body.id)).unixMs > Date.now() - 60_000);
    const no = await curl([
      '-H',
      'content-type: application/json',
      '-d',
      '{"count":3}',
      `http://127.0.0.1:${port}/flurry.v1.IdService/BatchIds`,
    ]);
    assert.match(no, /^HTTP\/1\.1 401/);
    assert.match(no, /flurry-error-code: FLURRY_E_UNAUTHORIZED/i);
    assert.match(no, /"code":"unauthenticated"/);
    const streamed = await curl([
      '--http2-prior-knowledge',
      '-H',
      'content-type: application/json',
      '-H',
      `authorization: Bearer ${TOKEN}`,
      '-d',
      '{"count":3}',
      `http://127.0.0.1:${port}/flurry.v1.IdService/BatchIds`,
    ]);
    assert.match(streamed, /^HTTP\/2 200/);
    assert.equal((JSON.parse(streamed.slice(streamed.indexOf('\r\n\r\n') + 4)) as { ids: string[] }).ids.length, 3);
  });

  test('GIVEN calls THEN /metrics counts them by protocol, method and code', async () => {
    const text = (await httpGet(svc.port, '/metrics', { authorization: `Bearer ${TOKEN}` })).body;
    assert.match(
      text,
      /flurry_protocol_requests_total\{protocol="grpc",command="IdService\/NextId",outcome="ok"\} \d+/,
    );
    assert.match(
      text,
      /flurry_protocol_requests_total\{protocol="grpc",command="IdService\/NextId",outcome="unauthenticated"\} 2/,
    );
    assert.match(
      text,
      /flurry_protocol_requests_total\{protocol="connect",command="IdService\/NextId",outcome="ok"\} 1/,
    );
    assert.match(
      text,
      /flurry_protocol_request_duration_seconds_count\{protocol="grpc",command="IdService\/StreamIds"\} \d+/,
    );
    assert.match(text, /flurry_http_requests_total\{/);
  });
});
