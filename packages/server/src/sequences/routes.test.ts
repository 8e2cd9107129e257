// The segment-mode routes in-process (routes.ts) over @flurry/segments' memory store and a store
// that goes down on command: JSON and text answers, batches, status, Leaf's segment endpoint, and the status
// codes of unknown keys, bad keys, bad counts, an empty buffer with the store down, and segment mode off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '@flurry/core';
import { createMemoryStore, openSequences, type SegmentStore, type Sequences } from '@flurry/segments';
import { createRequestHandler } from '../http/handler.js';
import { inProcess, type InProcess } from '../http/in-process.js';
import { inject } from '../http/inject.js';
import { httpGet, runFlurry, startFlurry } from '../test-support.js';
import { SEQUENCES, SegmentMode } from './routes.js';
import { loadServeConfig } from '../config/index.js';

let svc: InProcess;
let sequences: Sequences;
let handler: ReturnType<typeof createRequestHandler>;
let down = false;
let delayMs = 0;

before(async () => {
  svc = await inProcess([]);
  const inner = createMemoryStore('http-sequences');
  const store: SegmentStore = {
    ...inner,
    allocate: async (key, step) => {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      if (down) throw new FlurryError('FLURRY_E_SEQUENCE_STORE_UNAVAILABLE', 'store down', { retryAfterMs: 1000 });
      return inner.allocate(key, step);
    },
  };
  sequences = await openSequences(store, { retryMs: 50, maxStep: 10 });
  await sequences.create('order', { start: 1001, step: 10 });
  await sequences.create('fragile', { step: 5 });
  await sequences.create('slow', { step: 5 });
  const ctx = { ...svc.ctx, features: new Map(svc.ctx.features) };
  const mode = new SegmentMode('memory://unused', loadServeConfig([], {}), () => undefined);
  mode.sequences = sequences;
  SEQUENCES.set(ctx, mode);
  handler = createRequestHandler(ctx);
});
after(async () => {
  await sequences.close();
  await svc.stop();
});

const get = (url: string, headers: Record<string, string> = {}) => inject(handler, { url, headers });
const codeOf = (body: string): string => (JSON.parse(body) as { error: { code: string } }).error.code;

test('GIVEN a key THEN /next, ?count=N, text/plain and Leaf /api/segment/get/{key} issue increasing numbers with no repeat', async () => {
  const a = await get('/v1/sequences/order/next');
  assert.equal(a.status, 200, a.body);
  assert.deepEqual(JSON.parse(a.body), { key: 'order', value: '1001' });
  const b = await get('/v1/sequences/order?count=3');
  assert.deepEqual(JSON.parse(b.body), { key: 'order', values: ['1002', '1003', '1004'] });
  const c = await get('/v1/sequences/order/next', { accept: 'text/plain' });
  assert.equal(c.body, '1005');
  const leaf = await get('/api/segment/get/order');
  assert.equal(leaf.status, 200);
  assert.match(String(leaf.headers['content-type']), /^text\/plain/);
  assert.equal(leaf.body, '1006');
  const many = await get('/v1/sequences/order?count=25');
  const values = (JSON.parse(many.body) as { values: string[] }).values.map(Number);
  assert.deepEqual(
    values,
    Array.from({ length: 25 }, (_, i) => 1007 + i),
  );
  const st = await get('/v1/sequences/order/status');
  assert.equal(st.status, 200);
  const status = JSON.parse(st.body) as { key: string; issued: number; step: number };
  assert.equal(status.key, 'order');
  assert.equal(status.issued, 31);
});

test('GIVEN a JSON /next that waits for a fetch WHILE a text/plain request comes in THEN each gets its own format (the route input is reused)', async () => {
  delayMs = 50;
  try {
    const waiting = get('/v1/sequences/slow/next'); // empty buffer: waits for the store
    const text = await get('/v1/sequences/order/next', { accept: 'text/plain' });
    assert.match(text.body, /^[0-9]+$/);
    const json = await waiting;
    assert.equal(json.status, 200, json.body);
    assert.deepEqual(JSON.parse(json.body), { key: 'slow', value: '1' });
  } finally {
    delayMs = 0;
  }
});

test('GIVEN unknown keys, bad keys and bad counts THEN 404, 400 and 400 with codes, never a 500', async () => {
  for (const url of ['/v1/sequences/nope/next', '/api/segment/get/nope', '/v1/sequences/nope?count=2']) {
    const r = await get(url);
    assert.equal(r.status, 404, `${url}: ${r.body}`);
    assert.equal(codeOf(r.body), 'FLURRY_E_SEQUENCE_KEY_UNKNOWN');
  }
  for (const url of [
    '/v1/sequences/a%2Fb/next',
    `/api/segment/get/${'x'.repeat(129)}`,
    '/v1/sequences/%E0%A4%A/next',
  ]) {
    const r = await get(url);
    assert.equal(r.status, 400, `${url}: ${r.body}`);
  }
  for (const q of ['count=0', 'count=abc', 'count=10001', 'count=1&count=2', 'n=2']) {
    const r = await get(`/v1/sequences/order?${q}`);
    assert.equal(r.status, 400, `${q}: ${r.body}`);
  }
});

test('GIVEN the store down and the buffer empty THEN 503 with Retry-After; once it is back the key answers again', async () => {
  assert.equal((await get('/v1/sequences/fragile/next')).status, 200);
  down = true;
  let r = await get('/v1/sequences/fragile/next');
  for (let i = 0; i < 50 && r.status === 200; i++) r = await get('/v1/sequences/fragile/next');
  assert.equal(r.status, 503, r.body);
  assert.equal(codeOf(r.body), 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE');
  assert.ok(Number(r.headers['retry-after']) >= 1);
  down = false;
  let ok = 0;
  for (let i = 0; i < 100 && ok === 0; i++) {
    await new Promise((res) => setTimeout(res, 20));
    if ((await get('/v1/sequences/fragile/next')).status === 200) ok++;
  }
  assert.equal(ok, 1);
});

test('GIVEN a service without --sequences THEN the segment routes are 404 FLURRY_E_NOT_FOUND naming the flag', async () => {
  const plain = createRequestHandler(svc.ctx);
  for (const url of ['/v1/sequences/order/next', '/api/segment/get/order', '/v1/sequences/order/status']) {
    const r = await inject(plain, { url });
    assert.equal(r.status, 404);
    assert.equal(codeOf(r.body), 'FLURRY_E_NOT_FOUND');
    assert.match(r.body, /--sequences/);
  }
});

test('GIVEN flurry serve --sequences memory://… --auto-create THEN a real process serves the routes; a malformed store URL stops the start with its code', async () => {
  const svc = await startFlurry({ args: ['--sequences', 'memory://serve-test', '--auto-create'] });
  try {
    const a = await httpGet(svc.port, '/v1/sequences/ticket/next');
    assert.equal(a.status, 200, a.body);
    assert.deepEqual(JSON.parse(a.body), { key: 'ticket', value: '1' });
    const b = await httpGet(svc.port, '/api/segment/get/ticket');
    assert.equal(b.body, '2');
  } finally {
    await svc.stop();
  }
  const bad = await runFlurry([
    'serve',
    '--port',
    '0',
    '--allow-root',
    '--sequences',
    'postgres://u:hunter2@127.0.0.1/x?tabel=y',
  ]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr + bad.stdout, /FLURRY_E_SEQUENCE_URL/);
  assert.ok(!(bad.stderr + bad.stdout).includes('hunter2'), 'the password is never printed');
});

test('GIVEN flurry serve --sequences holding two keys WHEN it gets SIGTERM THEN "sequences closed" reports both keys handed back, logged before "stopped" (issue 24)', async () => {
  const svc = await startFlurry({ args: ['--sequences', 'memory://serve-close', '--auto-create'] });
  let stopped = false;
  try {
    for (const key of ['order', 'tiny']) {
      for (let i = 0; i < 2; i++) assert.equal((await httpGet(svc.port, `/v1/sequences/${key}/next`)).status, 200);
    }
    const exit = await svc.stop('SIGTERM');
    stopped = true;
    assert.equal(exit.code, 0, svc.stderr());
    const msgs = svc.logs.map((l) => l.msg);
    const closedAt = msgs.indexOf('sequences closed');
    assert.ok(closedAt >= 0, `logged: ${msgs.join(' | ')}`);
    assert.ok(closedAt < msgs.indexOf('stopped'), `"sequences closed" before "stopped": ${msgs.join(' | ')}`);
    // Each key fetched the default step of 1000 and issued 2: 998 + 998 went back.
    assert.deepEqual(
      { handedBack: svc.logs[closedAt].handedBack, wasted: svc.logs[closedAt].wasted },
      { handedBack: '1996', wasted: '0' },
    );
  } finally {
    if (!stopped) await svc.stop();
  }
});
