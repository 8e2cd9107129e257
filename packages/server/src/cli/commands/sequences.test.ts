// `flurry sequences create|list|show` as a process against a real Redis (started by the harness) with
// appendfsync always, and its refusals: exit 2 with a coded line for a duplicate or unknown key, a bad
// number, a malformed store URL (password not printed) and a Redis that can lose writes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEngine, type RunningEngine } from '@flurry/coordination/testing';
import { Redis } from 'ioredis';
import { runFlurry } from '../../test-support.js';

let redis: RunningEngine;
before(async () => {
  redis = await startEngine('redis');
  const r = new Redis(redis.url);
  await r.config('SET', 'appendfsync', 'always');
  r.disconnect();
});
after(async () => {
  await redis?.stop();
});

test('GIVEN a Redis store THEN create, list and show work and a duplicate, an unknown key, a bad number or URL exit 2 with a code', async () => {
  const env = { FLURRY_SEQUENCES: redis.url };
  const c = await runFlurry(
    ['sequences', 'create', 'order', '--start', '10000', '--step', '500', '--description', 'orders'],
    env,
  );
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stdout, /^created order\tnext 10000\tstep 500\torders$/m);
  const l = await runFlurry(['sequences', 'list', '--store', redis.url]);
  assert.equal(l.code, 0, l.stderr);
  assert.match(l.stdout, /^order\tnext 10000\tstep 500/m);
  const s = await runFlurry(['sequences', 'show', 'order', '--json'], env);
  assert.equal(s.code, 0, s.stderr);
  assert.deepEqual(
    { ...(JSON.parse(s.stdout) as Record<string, unknown>), updateTime: null },
    { key: 'order', maxId: '10000', step: 500, description: 'orders', updateTime: null },
  );
  for (const [args, code] of [
    [['sequences', 'create', 'order'], 'FLURRY_E_SEQUENCE_KEY_EXISTS'],
    [['sequences', 'show', 'nope'], 'FLURRY_E_SEQUENCE_KEY_UNKNOWN'],
    [['sequences', 'create', 'bad/key'], 'FLURRY_E_SEQUENCE_KEY_INVALID'],
    [['sequences', 'create', 'x', '--step', '-5'], 'FLURRY_E_USAGE'],
    [['sequences', 'create', 'x', '--step', '0'], 'FLURRY_E_SEQUENCE_OPTION'],
    [['sequences', 'frobnicate'], 'FLURRY_E_USAGE'],
  ] as const) {
    const r = await runFlurry([...args], env);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(code), args.join(' '));
  }
  const bad = await runFlurry(['sequences', 'list', '--store', 'postgres://u:hunter2@127.0.0.1/x?tabel=y']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /FLURRY_E_SEQUENCE_URL/);
  assert.ok(!bad.stderr.includes('hunter2'));
  const r = new Redis(redis.url);
  try {
    await r.config('SET', 'appendfsync', 'everysec');
    const v = await runFlurry(['sequences', 'list'], env);
    assert.equal(v.code, 2);
    assert.match(v.stderr, /FLURRY_E_SEQUENCE_STORE_VOLATILE/);
    const ok = await runFlurry(['sequences', 'list', '--allow-volatile-store'], env);
    assert.equal(ok.code, 0, ok.stderr);
  } finally {
    await r.config('SET', 'appendfsync', 'always');
    r.disconnect();
  }
});
