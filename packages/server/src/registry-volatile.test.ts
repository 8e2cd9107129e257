// `flurry serve --registry redis://…` against a Redis that can lose acknowledged writes (issue 24): refused at
// start with FLURRY_E_REGISTRY_VOLATILE and exit 2 (restarting cannot fix a server's configuration), as segment
// mode refuses the same server; accepted with `?allowVolatile=true`, which the log then warns about.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEngine, type RunningEngine } from '@flurry/coordination/testing';
import { Redis } from 'ioredis';
import { runFlurry, startFlurry } from './test-support.js';

let redis: RunningEngine;
let raw: Redis;
before(async () => {
  redis = await startEngine('redis');
  raw = new Redis(redis.url);
  await raw.config('SET', 'appendonly', 'no');
});
after(async () => {
  raw?.disconnect();
  await redis?.stop();
});

test('GIVEN a Redis with appendonly no WHEN flurry serve uses it as its registry THEN exit 2 with FLURRY_E_REGISTRY_VOLATILE explaining the risk; with ?allowVolatile=true it serves and warns', async () => {
  const r = await runFlurry(['serve', '--port', '0', '--allow-root', '--registry', redis.url], {}, 15_000);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^flurry: FLURRY_E_REGISTRY_VOLATILE: the Redis registry redis:\/\/127\.0\.0\.1:\d+\/0 runs with appendonly no/m,
  );
  assert.match(r.stderr, /Configure appendonly yes and appendfsync always/);
  assert.match(r.stderr, /allowVolatile=true/);
  const svc = await startFlurry({ registry: `${redis.url}?allowVolatile=true` });
  try {
    assert.ok(
      svc.logs.some(
        (l) => l.level === 'warn' && /accepted because the URL says allowVolatile=true/.test(String(l.msg)),
      ),
      JSON.stringify(svc.logs.slice(0, 6)),
    );
  } finally {
    await svc.stop();
  }
});
