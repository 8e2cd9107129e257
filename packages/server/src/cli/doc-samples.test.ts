// The HTTP samples of docs/service-api.md (curl against a running service), which
// scripts/check-docs.mjs does not run: each must be what the code answers. CLI and library
// samples are checked by scripts/check-docs.mjs through their `<!-- check: … -->` markers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Layout } from '@flurry/core';
import { leafDecodeBody } from '../http/routes/leaf.js';
import { runCli } from './main.js';
import { PassThrough } from 'node:stream';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../..');
const doc = (name: string) => readFileSync(path.join(root, 'docs', name), 'utf8');

async function cli(argv: string[]): Promise<string> {
  const out = new PassThrough();
  let stdout = '';
  out.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const code = await runCli({ argv, env: { TZ: 'UTC' }, stdout: out, stderr: new PassThrough() });
  assert.equal(code, 0, argv.join(' '));
  return stdout;
}

test('GIVEN the decode samples in docs/service-api.md THEN each is what the code answers for that ID', async () => {
  const text = doc('service-api.md');
  const samples = [...text.matchAll(/\$ curl -s localhost:8080\/v1\/ids\/(\d+)\n(\{.*\})\n/g)];
  assert.ok(samples.length >= 1, 'a GET /v1/ids/{id} sample');
  for (const [, id, body] of samples)
    assert.equal(body + '\n', await cli(['decode', id, '--json']), `sample for ${id}`);
  const leaf = [...text.matchAll(/decodeSnowflakeId\?snowflakeId=(\d+)'\n(\{.*\})\n/g)];
  assert.ok(leaf.length >= 1, 'a Leaf decode sample');
  const twitter = Layout.from('twitter');
  for (const [, id, body] of leaf) assert.equal(body, leafDecodeBody(twitter.decode(BigInt(id)), twitter), id);
});
