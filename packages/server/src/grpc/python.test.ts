// flurry serve --grpc-port called from Python: Debian's python3-grpcio, with stubs that
// python3-grpc-tools generates at run time from the repository's .proto files
// (test-clients/grpc_client.py), answers checked against the core's decoder.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Layout } from '@flurry/core';
import { startFlurry, type FlurryProcess } from '../test-support.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../../..');
const CLIENT = path.resolve(HERE, '../../test-clients/grpc_client.py');
const TOKEN = 'python-grpc-token-0123456789';
// The system Python (Debian's packages), not a version manager's shim on PATH.
const PYTHON = '/usr/bin/python3';

interface PyAnswers {
  next: { id: string; idString: string };
  batch: string[];
  stream: string[][];
  decode: { id: string; unixMs: number; timestamp: string; sequence: number; fields: Record<string, number> };
  noToken: { code: string; flurry: string };
  wrongToken: { code: string; flurry: string };
  tooMany: { code: string; flurry: string };
  health: string;
}

describe('python3-grpcio against flurry serve --grpc-port', () => {
  let svc: FlurryProcess;
  before(async () => {
    assert.ok(existsSync(PYTHON), `${PYTHON} is missing: apt-get install python3-grpcio python3-grpc-tools`);
    svc = await startFlurry({ args: ['--grpc-port', '0'], env: { FLURRY_TOKEN: TOKEN } });
  });
  after(async () => {
    assert.equal((await svc.stop()).code, 0, svc.stderr());
  });

  test('GIVEN stubs generated from proto/ THEN NextId, BatchIds, StreamIds (10 chunks), DecodeId, health and the token path answer as the decoder says', async () => {
    const port = svc.logs.find((l) => l.msg === 'ready')?.grpcPort as number;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        PYTHON,
        [CLIENT, path.join(ROOT, 'proto'), `127.0.0.1:${port}`, TOKEN],
        { timeout: 60_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    const got = JSON.parse(out) as PyAnswers;
    const layout = Layout.from('twitter');
    assert.equal(got.next.id, got.next.idString);
    const first = BigInt(got.next.id);
    const batch = got.batch.map(BigInt);
    assert.equal(batch.length, 100);
    assert.ok(batch[0] > first);
    for (let i = 1; i < batch.length; i++) assert.ok(batch[i] > batch[i - 1]);
    assert.equal(got.stream.length, 10);
    const streamed = got.stream.flat().map(BigInt);
    assert.equal(streamed.length, 5000);
    assert.ok(streamed[0] > batch[batch.length - 1]);
    for (let i = 1; i < streamed.length; i++) assert.ok(streamed[i] > streamed[i - 1]);
    const d = layout.decode(first);
    assert.deepEqual(got.decode, {
      id: got.next.id,
      unixMs: d.unixMs,
      timestamp: d.timestamp,
      sequence: d.sequence,
      fields: d.fields,
    });
    assert.deepEqual(got.noToken, { code: 'UNAUTHENTICATED', flurry: 'FLURRY_E_UNAUTHORIZED' });
    assert.deepEqual(got.wrongToken, { code: 'UNAUTHENTICATED', flurry: 'FLURRY_E_UNAUTHORIZED' });
    assert.deepEqual(got.tooMany, { code: 'RESOURCE_EXHAUSTED', flurry: 'FLURRY_E_BATCH_COUNT' });
    assert.equal(got.health, 'SERVING');
  });
});
