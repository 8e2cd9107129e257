// The client against one real `flurry serve` process on loopback: prefetching, the
// synchronous fast path, batches, decode, a wrong token, close.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout } from '@flurry/core';
import { createClient } from './client.js';
import { startFlurry, type FlurryProcess } from './testing/flurry-process.js';

const twitter = Layout.from('twitter');
const TOKEN = 'right-token-0123';
let dir: string;
let server: FlurryProcess;
let secured: FlurryProcess;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'flurry-client-'));
  [server, secured] = await Promise.all([
    startFlurry({ registryDir: dir }),
    startFlurry({ registryDir: dir, args: ['--token', TOKEN] }),
  ]);
});

after(async () => {
  await Promise.all([server?.stop(), secured?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const coded = (code: string) => (e: unknown) => e instanceof FlurryError && e.code === code;

test('GIVEN prefetching THEN 50,000 next() calls cost a handful of batch requests, no /v1/ids/next request, and every ID is distinct', async () => {
  const client = createClient({ servers: [server.url], prefetch: { size: 10_000 } });
  const beforeBatch = await server.requests('ids_batch');
  const beforeNext = await server.requests('ids_next');
  try {
    const seen = new Set<bigint>();
    for (let k = 0; k < 50_000; k++) seen.add(await client.next());
    assert.equal(seen.size, 50_000);
    const batches = (await server.requests('ids_batch')) - beforeBatch;
    const stats = client.stats();
    // The last refill may still be in flight when the loop ends.
    assert.ok(
      batches === stats.refills || batches === stats.refills - 1,
      `server saw ${batches} batch requests, client sent ${stats.refills}`,
    );
    // Adaptive growth starts at 64 IDs and reaches 10,000 after a few refills.
    assert.ok(batches >= 5 && batches <= 60, `expected 5..60 batch requests for 50,000 IDs, saw ${batches}`);
    assert.equal((await server.requests('ids_next')) - beforeNext, 0);
    assert.ok(stats.targetSize > 1_000, `the buffer grew with the rate (target ${stats.targetSize})`);
    assert.equal(stats.taken, 50_000);
  } finally {
    await client.close();
  }
});

test('GIVEN a full buffer THEN tryNext() returns IDs synchronously, strictly increasing within the chunk, off the network', async () => {
  const client = createClient({ servers: [server.url], prefetch: { size: 5_000, lowWater: 1_000, adaptive: false } });
  try {
    assert.equal(client.tryNext(), undefined, 'nothing buffered before the first refill');
    const first = await client.next(); // waits for the first chunk of 5,000
    const requestsBefore = client.stats().requests;
    let prev = first;
    for (let k = 0; k < 3_000; k++) {
      const v = client.tryNext();
      assert.equal(typeof v, 'bigint');
      assert.ok(v! > prev, 'one chunk comes out strictly increasing');
      prev = v!;
    }
    assert.equal(client.stats().requests, requestsBefore, 'no request while above the low-water mark');
    const d = twitter.decode(first);
    assert.ok(Math.abs(d.unixMs - Date.now()) < 10_000);
    assert.match(await client.nextString(), /^[0-9]{15,20}$/);
  } finally {
    await client.close();
  }
});

test('GIVEN batch(n) THEN n distinct IDs come back, from the buffer when it holds them and fetched in ≤ 10,000 pieces when not', async () => {
  const client = createClient({ servers: [server.url], prefetch: { size: 2_000, adaptive: false } });
  try {
    await client.next();
    const small = await client.batch(100);
    assert.equal(small.length, 100);
    const big = await client.batch(25_000);
    assert.equal(big.length, 25_000);
    const all = new Set([...small, ...big]);
    assert.equal(all.size, 25_100);
    // Fetched in 3 pieces (10,000 + 10,000 + 5,000), each strictly increasing.
    for (const [from, to] of [
      [0, 10_000],
      [10_000, 20_000],
      [20_000, 25_000],
    ] as const) {
      for (let k = from + 1; k < to; k++) assert.ok(big[k] > big[k - 1]);
    }
    await assert.rejects(client.batch(0), coded('FLURRY_E_CLIENT_ARGUMENT'));
    await assert.rejects(client.batch(1.5), coded('FLURRY_E_CLIENT_ARGUMENT'));
    await assert.rejects(client.batch(1_000_001), coded('FLURRY_E_CLIENT_ARGUMENT'));
  } finally {
    await client.close();
  }
});

test('GIVEN decode(id) THEN the server decodes it under its layout; a malformed ID is refused locally, one too wide for the layout by the server', async () => {
  const client = createClient({ servers: [server.url] });
  try {
    const id = await client.next();
    const d = await client.decode(id);
    const local = twitter.decode(id);
    assert.equal(d.id, id);
    assert.equal(d.unixMs, local.unixMs);
    assert.equal(d.sequence, local.sequence);
    assert.deepEqual(d.fields, { ...local.fields });
    assert.deepEqual((await client.decode(id.toString())).fields, d.fields);
    for (const bad of ['abc', '-1', '', '18446744073709551616', -5, 1.5] as const) {
      await assert.rejects(client.decode(bad), coded('FLURRY_E_CLIENT_ARGUMENT'), String(bad));
    }
    // 2^64 − 1 is a valid u64 but wider than twitter's 63 bits: the server's own code comes back.
    await assert.rejects(client.decode((1n << 64n) - 1n), coded('FLURRY_E_ID_TOO_WIDE'));
    // The server stays in rotation after a caller's mistake.
    assert.equal(client.stats().servers[0].state, 'up');
  } finally {
    await client.close();
  }
});

test('GIVEN a wrong or missing token THEN next() rejects with FLURRY_E_CLIENT_UNAUTHORIZED and the server is not asked again; the right token works', async () => {
  for (const token of ['wrong-token', undefined]) {
    const client = createClient({ servers: [secured.url], ...(token ? { token } : {}) });
    try {
      await assert.rejects(
        client.next(),
        (e: unknown) => coded('FLURRY_E_CLIENT_UNAUTHORIZED')(e) && /401/.test((e as Error).message),
      );
      await assert.rejects(client.next(), coded('FLURRY_E_CLIENT_UNAUTHORIZED'));
      await assert.rejects(client.batch(5), coded('FLURRY_E_CLIENT_UNAUTHORIZED'));
      assert.equal(client.stats().requests, 1, 'a 401 is a configuration error: not retried');
      assert.equal(client.stats().servers[0].state, 'unauthorized');
    } finally {
      await client.close();
    }
  }
  const good = createClient({ servers: [secured.url], token: TOKEN });
  try {
    assert.equal(typeof (await good.next()), 'bigint');
    assert.equal((await good.batch(3)).length, 3);
  } finally {
    await good.close();
  }
});

test('GIVEN one server refusing the token and one accepting none THEN the client fails over to the open one', async () => {
  const client = createClient({ servers: [secured.url, server.url], token: 'wrong-token' });
  try {
    // The open server ignores the token; the secured one answers 401 and drops out.
    const ids = new Set<bigint>();
    for (let k = 0; k < 2_000; k++) ids.add(await client.next());
    assert.equal(ids.size, 2_000);
    const states = client.stats().servers.map((s) => s.state);
    assert.deepEqual(states, ['unauthorized', 'up']);
  } finally {
    await client.close();
  }
});

test('GIVEN buffered IDs older than maxAgeMs THEN they are discarded, not handed out, and the next ID is fresh', async () => {
  const client = createClient({ servers: [server.url], prefetch: { size: 1_000, maxAgeMs: 150, adaptive: false } });
  try {
    const first = await client.next();
    assert.ok(client.stats().buffered > 900);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const id = await client.next();
    assert.ok(id > first);
    assert.ok(twitter.decode(id).unixMs >= t0 - 5, 'issued after the wait, not taken from the old chunk');
    assert.ok(client.stats().discarded >= 900, `discarded ${client.stats().discarded}`);
  } finally {
    await client.close();
  }
});

test('GIVEN close() while next() waits for a refill THEN the waiting call rejects with FLURRY_E_CLIENT_CLOSED', async () => {
  const client = createClient({ servers: [server.url] });
  const waiting = client.next();
  await client.close();
  await assert.rejects(waiting, coded('FLURRY_E_CLIENT_CLOSED'));
});
