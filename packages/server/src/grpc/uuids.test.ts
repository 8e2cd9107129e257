// NextUuid and BatchUuids over gRPC (@grpc/grpc-js, the repository's .proto loaded at run
// time): the UUIDv7 of the HTTP UUID routes' generator, on the same node, interleaved in
// one increasing order with the UUIDs HTTP hands out.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { decodeUuid } from '@flurry/core';
import { httpGet, startFlurry, type FlurryProcess } from '../test-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const PROTO = path.join(ROOT, 'proto');
const TOKEN = 'grpc-uuid-token-0123456789';

type Callback<T> = (err: grpc.ServiceError | null, res?: T) => void;
type Unary<Req, Res> = (req: Req, md: grpc.Metadata, cb: Callback<Res>) => grpc.ClientUnaryCall;
interface UuidClient extends grpc.Client {
  NextUuid: Unary<{ format?: string }, { uuid: string }>;
  BatchUuids: Unary<{ count: number; format?: string }, { uuids: string[] }>;
}

function call<Req, Res>(fn: Unary<Req, Res>, client: grpc.Client, req: Req, md = auth()): Promise<Res> {
  return new Promise((resolve, reject) =>
    fn.call(client, req, md, (err, res) => (err ? reject(err) : resolve(res as Res))),
  );
}

function auth(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${TOKEN}`);
  return md;
}

async function refused(p: Promise<unknown>, code: grpc.status, flurryCode: string): Promise<void> {
  const err = await p.then(
    () => assert.fail('the call should have failed'),
    (e: grpc.ServiceError) => e,
  );
  assert.equal(err.code, code, `${err.code} ${err.details}`);
  assert.deepEqual(err.metadata.get('flurry-error-code'), [flurryCode]);
}

describe('flurry serve --grpc-port: NextUuid and BatchUuids', () => {
  let svc: FlurryProcess;
  let client: UuidClient;
  const http = async (p: string): Promise<unknown> => {
    const r = await httpGet(svc.port, p, { authorization: `Bearer ${TOKEN}` });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body);
  };
  const nodeOf = async (uuid: string): Promise<number> => ((await http(`/v1/uuids/${uuid}`)) as { node: number }).node;
  before(async () => {
    svc = await startFlurry({ args: ['--grpc-port', '0', '--max-batch', '500'], env: { FLURRY_TOKEN: TOKEN } });
    const port = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
    const def = protoLoader.loadSync('flurry/v1/id_service.proto', { includeDirs: [PROTO], defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as { flurry: { v1: { IdService: grpc.ServiceClientConstructor } } };
    client = new pkg.flurry.v1.IdService(
      `127.0.0.1:${port}`,
      grpc.credentials.createInsecure(),
    ) as unknown as UuidClient;
  });
  after(async () => {
    client?.close();
    assert.equal((await svc.stop()).code, 0, svc.stderr());
  });

  test('GIVEN NextUuid THEN a UUIDv7 of the HTTP routes generator (same node), after an earlier HTTP UUID and before a later one', async () => {
    const before = ((await http('/v1/uuids/next')) as { uuid: string }).uuid;
    const { uuid } = await call(client.NextUuid, client, {});
    const later = ((await http('/v1/uuids/next')) as { uuid: string }).uuid;
    assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(before < uuid && uuid < later, `${before} < ${uuid} < ${later}`);
    assert.equal(await nodeOf(uuid), await nodeOf(before));
    assert.ok(Math.abs(decodeUuid(uuid).unixMs - Date.now()) < 60_000);
  });

  test('GIVEN a format THEN that text form of a fresh UUID; an unknown one is INVALID_ARGUMENT with FLURRY_E_UUID_FORMAT', async () => {
    const { uuid } = await call(client.NextUuid, client, { format: 'base32' });
    assert.match(uuid, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(decodeUuid(uuid, { form: 'base32' }).version, 7);
    const { uuid: hex } = await call(client.NextUuid, client, { format: 'hex' });
    assert.match(hex, /^[0-9a-f]{32}$/);
    await refused(
      call(client.NextUuid, client, { format: 'nope' }),
      grpc.status.INVALID_ARGUMENT,
      'FLURRY_E_UUID_FORMAT',
    );
  });

  test('GIVEN BatchUuids THEN count strictly increasing UUIDs; 0 is INVALID_ARGUMENT, past maxBatch RESOURCE_EXHAUSTED', async () => {
    const { uuids } = await call(client.BatchUuids, client, { count: 500 });
    assert.equal(uuids.length, 500);
    for (let i = 1; i < uuids.length; i++) assert.ok(uuids[i] > uuids[i - 1], `${uuids[i - 1]} then ${uuids[i]}`);
    const { uuids: b58 } = await call(client.BatchUuids, client, { count: 3, format: 'base58' });
    for (const u of b58) assert.equal(decodeUuid(u, { form: 'base58' }).version, 7);
    await refused(call(client.BatchUuids, client, { count: 0 }), grpc.status.INVALID_ARGUMENT, 'FLURRY_E_BAD_REQUEST');
    await refused(
      call(client.BatchUuids, client, { count: 501 }),
      grpc.status.RESOURCE_EXHAUSTED,
      'FLURRY_E_BATCH_COUNT',
    );
    await refused(
      call(client.BatchUuids, client, { count: 3 }, new grpc.Metadata()),
      grpc.status.UNAUTHENTICATED,
      'FLURRY_E_UNAUTHORIZED',
    );
  });
});
