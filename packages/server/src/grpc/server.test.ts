// The gRPC port in this process, over the service's real core before any lease is held
// (its issuer refuses with FLURRY_E_UNAVAILABLE, readiness is false), called by
// @grpc/grpc-js; server reflection; and the checked-in generated code against proto/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { FlurryError } from '@flurry/core';
import { openSequences } from '@flurry/segments';
import { loadServeConfig } from '../config/index.js';
import { createServiceCore, httpContext } from '../service-core.js';
import { idServiceContext } from '../service.js';
import { startGrpcServer, type GrpcServer } from './server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../../..');
const PROTO = path.join(ROOT, 'proto');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

function client(
  port: number,
  file: string,
  name: string,
): grpc.Client & Record<string, grpc.MethodDefinition<object, object>> {
  const def = protoLoader.loadSync(file, { includeDirs: [PROTO], longs: String, enums: String, defaults: true });
  let o: unknown = grpc.loadPackageDefinition(def);
  for (const part of name.split('.')) o = (o as Record<string, unknown>)[part];
  const Ctor = o as grpc.ServiceClientConstructor;
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as never;
}

function unary(c: grpc.Client, method: string, req: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) =>
    (c as unknown as Record<string, (r: object, cb: (e: grpc.ServiceError | null, r?: object) => void) => void>)[
      method
    ](req, (e, r) => (e ? reject(e) : resolve(r as Record<string, unknown>))),
  );
}

/** A reflection answer as proto-loader decodes it. */
interface ReflectionAnswer {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number };
}

describe('the gRPC port over a service core that holds no lease yet', () => {
  let server: GrpcServer;
  let ids: grpc.Client;
  let health: grpc.Client;
  before(async () => {
    const config = loadServeConfig(['--port', '0', '--registry', 'file:/nonexistent-flurry-registry'], {});
    const core = createServiceCore(config, quiet);
    server = await startGrpcServer({
      port: 0,
      ids: idServiceContext(httpContext(config, core, quiet)),
      ready: () => core.notReady() === null,
    });
    ids = client(server.port, 'flurry/v1/id_service.proto', 'flurry.v1.IdService');
    health = client(server.port, 'grpc/health/v1/health.proto', 'grpc.health.v1.Health');
  });
  after(async () => {
    ids.close();
    health.close();
    await server.close();
  });

  test('GIVEN no lease THEN NextId and StreamIds are UNAVAILABLE with FLURRY_E_UNAVAILABLE, and no ID is issued', async () => {
    await assert.rejects(unary(ids, 'NextId', {}), (e: grpc.ServiceError) => {
      assert.equal(e.code, grpc.status.UNAVAILABLE);
      assert.deepEqual(e.metadata.get('flurry-error-code'), ['FLURRY_E_UNAVAILABLE']);
      assert.match(e.details, /no node-ID lease/);
      return true;
    });
    await assert.rejects(
      unary(ids, 'BatchIds', { count: 3 }),
      (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE,
    );
  });

  test('GIVEN no lease THEN Health answers NOT_SERVING (the /readyz rule)', async () => {
    assert.equal((await unary(health, 'Check', { service: '' })).status, 'NOT_SERVING');
    assert.equal((await unary(health, 'Check', { service: 'flurry.v1.IdService' })).status, 'NOT_SERVING');
  });

  test('GIVEN layout calls THEN they answer without a lease (no ID is issued)', async () => {
    assert.equal((await unary(ids, 'GetLayout', {})).name, 'twitter');
  });

  test('GIVEN server reflection THEN it lists the services and serves the descriptor of a symbol', async () => {
    const r = client(server.port, 'grpc/reflection/v1/reflection.proto', 'grpc.reflection.v1.ServerReflection');
    const stream = (
      r as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<object, ReflectionAnswer> }
    ).ServerReflectionInfo();
    const answers: ReflectionAnswer[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (m: ReflectionAnswer) => answers.push(m));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write({ listServices: '' });
    stream.write({ fileContainingSymbol: 'flurry.v1.IdService.StreamIds' });
    stream.write({ fileByFilename: 'nope.proto' });
    stream.end();
    await done;
    r.close();
    assert.deepEqual(
      answers[0].listServicesResponse?.service.map((s) => s.name),
      ['flurry.v1.IdService', 'grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection'],
    );
    const files = answers[1].fileDescriptorResponse?.fileDescriptorProto ?? [];
    assert.equal(files.length, 1);
    assert.ok(files[0].includes('flurry/v1/id_service.proto') && files[0].includes('StreamIds'));
    assert.equal(answers[2].errorResponse?.errorCode, grpc.status.NOT_FOUND);
  });

  test('GIVEN bad options THEN startGrpcServer refuses with FLURRY_E_INVALID_OPTION', async () => {
    await assert.rejects(
      startGrpcServer({ port: 70_000, ids: undefined as never, ready: () => true }),
      (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_INVALID_OPTION',
    );
  });
});

test('GIVEN Health/Watch THEN it sends the state at once, then each change of readiness, and a quiet Watch outlives the idle timeout', async () => {
  const config = loadServeConfig(['--port', '0', '--registry', 'file:/nonexistent-flurry-registry'], {});
  const core = createServiceCore(config, quiet);
  let ready = false;
  const server = await startGrpcServer({
    port: 0,
    ids: idServiceContext(httpContext(config, core, quiet)),
    ready: () => ready,
    healthWatchMs: 20,
    idleTimeoutMs: 200,
  });
  const health = client(server.port, 'grpc/health/v1/health.proto', 'grpc.health.v1.Health');
  try {
    const seen: string[] = [];
    const stream = (health as unknown as { Watch(req: object): grpc.ClientReadableStream<{ status: string }> }).Watch({
      service: '',
    });
    stream.on('error', () => undefined);
    const until = async (n: number) => {
      for (let i = 0; seen.length < n && i < 250; i++) await new Promise((r) => setTimeout(r, 20));
    };
    stream.on('data', (m: { status: string }) => seen.push(m.status));
    await until(1);
    await new Promise((r) => setTimeout(r, 800)); // a quiet Watch outlives the idle timeout
    ready = true;
    await until(2);
    ready = false;
    await until(3);
    stream.cancel();
    assert.deepEqual(seen, ['NOT_SERVING', 'SERVING', 'NOT_SERVING']);
  } finally {
    health.close();
    await server.close();
  }
});

test('GIVEN --sequences THEN NextSequence answers increasing numbers; an unknown key is NOT_FOUND, a count past maxBatch RESOURCE_EXHAUSTED', async () => {
  const config = loadServeConfig(['--port', '0', '--registry', 'file:/nonexistent-flurry-registry'], {});
  const core = createServiceCore(config, quiet);
  const sequences = await openSequences('memory://grpc-server-test');
  await sequences.create('order', { start: 1000 });
  const server = await startGrpcServer({
    port: 0,
    ids: { ...idServiceContext(httpContext(config, core, quiet)), sequences },
    ready: () => true,
  });
  const ids = client(server.port, 'flurry/v1/id_service.proto', 'flurry.v1.IdService');
  try {
    const r = await unary(ids, 'NextSequence', { key: 'order', count: 3 });
    assert.deepEqual(r, { key: 'order', values: ['1000', '1001', '1002'] });
    await assert.rejects(unary(ids, 'NextSequence', { key: 'nope', count: 1 }), (e: grpc.ServiceError) => {
      assert.equal(e.code, grpc.status.NOT_FOUND);
      assert.deepEqual(e.metadata.get('flurry-error-code'), ['FLURRY_E_SEQUENCE_KEY_UNKNOWN']);
      return true;
    });
    await assert.rejects(
      unary(ids, 'NextSequence', { key: 'order', count: config.maxBatch + 1 }),
      (e: grpc.ServiceError) => e.code === grpc.status.RESOURCE_EXHAUSTED,
    );
  } finally {
    ids.close();
    await server.close();
    await sequences.close();
  }
});

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? listFiles(p).map((f) => path.join(n, f)) : [n];
  });
}

test('GIVEN proto/ THEN buf lint passes and the checked-in gen-proto is what buf generate makes of it today', async () => {
  const buf = path.join(ROOT, 'node_modules', '.bin', 'buf');
  const run = (args: string[]) =>
    new Promise<void>((resolve, reject) =>
      execFile(
        buf,
        args,
        {
          cwd: ROOT,
          timeout: 120_000,
          env: {
            ...process.env,
            PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
          },
        },
        (err, out, errOut) => (err ? reject(new Error(`buf ${args.join(' ')}: ${out}${errOut}`)) : resolve()),
      ),
    );
  await run(['lint']);
  const out = mkdtempSync(path.join(tmpdir(), 'flurry-gen-proto-'));
  try {
    const template = JSON.stringify({
      version: 'v2',
      inputs: [{ directory: 'proto' }],
      plugins: [{ local: 'protoc-gen-es', out, opt: ['target=ts', 'import_extension=js'] }],
    });
    await run(['generate', '--template', template]);
    const checkedIn = path.join(ROOT, 'packages/server/src/grpc/gen-proto');
    const made = listFiles(out).sort();
    assert.deepEqual(listFiles(checkedIn).sort(), made, 'the same files');
    for (const f of made) {
      assert.equal(
        readFileSync(path.join(checkedIn, f), 'utf8'),
        readFileSync(path.join(out, f), 'utf8'),
        `${f} is stale: run npx buf generate`,
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
