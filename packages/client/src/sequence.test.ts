// client.sequence(key) against real `flurry serve --sequences memory://…` processes on loopback: dense numbers
// without prefetch, batches split by the server's maxBatch, opt-in prefetch, coded errors (bad arguments, an
// unknown key thrown as the server's code without putting the server in backoff), and failover past a dead
// server and a server without --sequences, then a coded UNAVAILABLE once no server can give a number.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError } from '@flurry/core';
import { createClient } from './client.js';
import { startFlurry, type FlurryProcess } from './testing/flurry-process.js';

const coded = (code: string) => (e: unknown) => e instanceof FlurryError && e.code === code;

let dir: string;
let seq: FlurryProcess;
let strict: FlurryProcess;
let plain: FlurryProcess;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'flurry-client-seq-'));
  [seq, strict, plain] = await Promise.all([
    startFlurry({ registryDir: dir, args: ['--sequences', 'memory://client-a', '--auto-create', '--max-batch', '10'] }),
    startFlurry({ registryDir: dir, args: ['--sequences', 'memory://client-b'] }),
    startFlurry({ registryDir: dir }),
  ]);
});
after(async () => {
  await Promise.all([seq.stop(), strict.stop(), plain.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

test('GIVEN no prefetch THEN next() and batch(n) give dense increasing numbers, one request each, batches split by maxBatch', async () => {
  const client = createClient({ servers: [seq.url] });
  try {
    const order = client.sequence('order');
    assert.equal(client.sequence('order'), order, 'one object per key');
    const got: bigint[] = [];
    for (let i = 0; i < 50; i++) got.push(await order.next());
    assert.deepEqual(
      got,
      Array.from({ length: 50 }, (_, i) => BigInt(i + 1)),
    );
    assert.equal(order.tryNext(), undefined, 'nothing is buffered without prefetch');
    const b = await order.batch(25); // the server's maxBatch is 10: three requests
    assert.deepEqual(
      b,
      Array.from({ length: 25 }, (_, i) => BigInt(51 + i)),
    );
    assert.equal(order.stats().buffered, 0);
    assert.equal(order.stats().taken, 75);
    assert.ok(order.stats().requests >= 53, `50 next() + 3 batch requests at least, saw ${order.stats().requests}`);
  } finally {
    await client.close();
  }
});

test('GIVEN prefetch 40 THEN tryNext() serves from memory after the first refill, increasing, at most 40 held', async () => {
  const client = createClient({ servers: [seq.url] });
  try {
    const t = client.sequence('ticket', { prefetch: 40 });
    const first = await t.next();
    const got = [first];
    for (let i = 0; i < 200; i++) got.push(t.tryNext() ?? (await t.next()));
    for (let i = 1; i < got.length; i++) assert.ok(got[i] > got[i - 1], `increasing at ${i}`);
    assert.ok(t.stats().buffered <= 40);
    assert.ok(
      t.stats().requests < 100,
      `refills of up to 40 numbers (by 10, the server's maxBatch), saw ${t.stats().requests}`,
    );
    assert.throws(
      () => client.sequence('ticket'),
      coded('FLURRY_E_CLIENT_ARGUMENT'),
      'another prefetch for the same key',
    );
  } finally {
    await client.close();
  }
});

test('GIVEN prefetch and a consumer slower than the refills THEN memory holds at most prefetch numbers', async () => {
  // A refill starts at half and lands before the buffer drains; the numbers already taken must not pile up.
  const client = createClient({ servers: [seq.url] });
  try {
    const t = client.sequence('slow', { prefetch: 20 });
    const held = () =>
      (t as unknown as { buf: { chunks: { ids: bigint[] }[] } }).buf.chunks.reduce((n, c) => n + c.ids.length, 0);
    let prev = await t.next();
    let most = 0;
    for (let i = 0; i < 120; i++) {
      await new Promise((r) => setTimeout(r, 3)); // the refill in flight lands meanwhile
      const v = t.tryNext() ?? (await t.next());
      assert.ok(v > prev, `increasing at ${i}`);
      prev = v;
      most = Math.max(most, held());
    }
    assert.ok(most <= 20, `the array behind the buffer held at most 20 numbers, saw ${most}`);
    assert.equal(t.stats().taken, 121);
  } finally {
    await client.close();
  }
});

test('GIVEN bad arguments or an unknown key THEN coded errors; the server is not put in backoff', async () => {
  const client = createClient({ servers: [strict.url] });
  try {
    for (const key of ['', 'a/b', 'x'.repeat(129), 'sp ace']) {
      assert.throws(() => client.sequence(key), coded('FLURRY_E_CLIENT_ARGUMENT'), key);
    }
    assert.throws(() => client.sequence('k', { prefetch: -1 }), coded('FLURRY_E_CLIENT_ARGUMENT'));
    assert.throws(() => client.sequence('k', { prefech: 1 } as never), coded('FLURRY_E_CLIENT_ARGUMENT'));
    await assert.rejects(client.sequence('k').batch(0), coded('FLURRY_E_CLIENT_ARGUMENT'));
    await assert.rejects(client.sequence('nope').next(), coded('FLURRY_E_SEQUENCE_KEY_UNKNOWN'));
    await assert.rejects(client.sequence('nope').batch(3), coded('FLURRY_E_SEQUENCE_KEY_UNKNOWN'));
    assert.equal(client.stats().servers[0].state, 'up');
    assert.equal(typeof (await client.next()), 'bigint', 'IDs still come from that server');
  } finally {
    await client.close();
  }
  const closed = createClient({ servers: [seq.url] });
  const s = closed.sequence('order');
  await closed.close();
  await assert.rejects(s.next(), coded('FLURRY_E_CLIENT_CLOSED'));
});

test('GIVEN a dead server and one without --sequences in front THEN calls fail over; once the only sequence server is gone, a coded UNAVAILABLE', async () => {
  const extra = await startFlurry({ registryDir: dir, args: ['--sequences', 'memory://client-c', '--auto-create'] });
  const dead = await startFlurry({ registryDir: dir });
  const deadUrl = dead.url;
  await dead.kill();
  const client = createClient({
    servers: [deadUrl, plain.url, extra.url],
    strategy: 'round-robin',
    backoff: { initialMs: 50, maxMs: 200 },
    timeoutMs: 2_000,
  });
  try {
    const inv = client.sequence('invoice');
    const got: bigint[] = [];
    for (let i = 0; i < 30; i++) got.push(await inv.next());
    assert.deepEqual(
      got,
      Array.from({ length: 30 }, (_, i) => BigInt(i + 1)),
      'one sequence server: dense and increasing',
    );
    assert.deepEqual(await inv.batch(4), [31n, 32n, 33n, 34n]);
    const plainState = client.stats().servers.find((s) => s.url === plain.url);
    assert.equal(plainState?.state, 'up', 'a server without --sequences is skipped, not put in backoff');
    await extra.kill();
    const err = await inv.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(coded('FLURRY_E_CLIENT_UNAVAILABLE')(err), String(err));
    assert.equal(typeof (await client.next()), 'bigint', 'IDs still come from the plain server');
  } finally {
    await client.close();
    await extra.stop();
  }
});
