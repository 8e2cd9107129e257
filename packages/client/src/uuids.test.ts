// client.uuid() / client.uuids(n) against real `flurry serve` processes on loopback:
// prefetching (few batch requests, no /v1/uuids/next), the UUIDs' node values (the servers'
// Snowflake nodes), failover when a server is killed mid-stream, and the checks on answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { FlurryError, decodeUuid, isUuidV7 } from '@flurry/core';
import { createClient } from './client.js';
import { startFlurry, type FlurryProcess } from './testing/flurry-process.js';
import { parseUuidsBody } from './uuids.js';

let dir: string;
let servers: FlurryProcess[];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'flurry-client-uuids-'));
  servers = await Promise.all([0, 1, 2].map(() => startFlurry({ registryDir: dir })));
});

after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const coded = (code: string) => (e: unknown) => e instanceof FlurryError && e.code === code;

test('GIVEN prefetching THEN 30,000 uuid() calls cost a handful of /v1/uuids batch requests, no /v1/uuids/next, every UUID a distinct v7, strictly increasing within each server', async () => {
  const server = servers[0];
  const client = createClient({ servers: [server.url], prefetch: { size: 10_000 } });
  const beforeBatch = await server.requests('uuids_batch');
  const beforeNext = await server.requests('uuids_next');
  try {
    const seen = new Set<string>();
    let prev = '';
    for (let k = 0; k < 30_000; k++) {
      const u = await client.uuid();
      assert.ok(u > prev, `${u} after ${prev}`);
      prev = u;
      seen.add(u);
    }
    assert.equal(seen.size, 30_000);
    assert.ok(isUuidV7(prev));
    const batches = (await server.requests('uuids_batch')) - beforeBatch;
    assert.ok(batches >= 3 && batches <= 60, `expected 3..60 batch requests for 30,000 UUIDs, saw ${batches}`);
    assert.equal((await server.requests('uuids_next')) - beforeNext, 0);
    const many = await client.uuids(25_000); // more than one server answer (maxBatch 10,000)
    assert.equal(many.length, 25_000);
    assert.equal(new Set([...many, ...seen]).size, 55_000);
    await assert.rejects(client.uuids(0), coded('FLURRY_E_CLIENT_ARGUMENT'));
  } finally {
    await client.close();
  }
  await assert.rejects(client.uuid(), coded('FLURRY_E_CLIENT_CLOSED'));
});

test('GIVEN three servers WHEN one is killed (SIGKILL) mid-stream THEN every uuid() still resolves, none repeats, and the UUIDs carry three distinct node values', async () => {
  const extra = await Promise.all([0, 1, 2].map(() => startFlurry({ registryDir: dir })));
  const client = createClient({
    servers: extra.map((s) => s.url),
    prefetch: { size: 500, lowWater: 200, adaptive: false },
    backoff: { initialMs: 50, maxMs: 500 },
    timeoutMs: 2_000,
  });
  try {
    const seen = new Set<string>();
    const nodes = new Set<number>();
    let killed: Promise<void> | undefined;
    for (let k = 0; k < 20_000; k++) {
      const u = await client.uuid();
      assert.ok(!seen.has(u), `UUID ${u} handed out twice`);
      seen.add(u);
      if (k < 5_000) nodes.add(decodeUuid(u).node);
      if (k === 5_000) killed = extra[1].kill();
      if (k % 100 === 0) await yieldLoop();
    }
    await killed;
    assert.equal(nodes.size, 3, 'the three servers hold three node values');
    assert.equal(seen.size, 20_000);
    const batch = await client.uuids(3_000);
    assert.equal(new Set([...batch, ...seen]).size, 23_000);
  } finally {
    await client.close();
    await Promise.all(extra.map((s) => s.stop()));
  }
});

test('GIVEN every server down THEN uuid() rejects with FLURRY_E_CLIENT_UNAVAILABLE naming them', async () => {
  const client = createClient({ servers: ['http://127.0.0.1:9'], timeoutMs: 500, backoff: { initialMs: 50 } });
  try {
    await assert.rejects(client.uuid(), coded('FLURRY_E_CLIENT_UNAVAILABLE'));
    await assert.rejects(client.uuids(5), coded('FLURRY_E_CLIENT_UNAVAILABLE'));
  } finally {
    await client.close();
  }
});

test('GIVEN a server answer with the wrong count, a non-v7 UUID or a decrease THEN parseUuidsBody refuses it with FLURRY_E_CLIENT_BAD_RESPONSE', () => {
  const a = '017f22e2-79b0-7cc3-98c4-dc0c0c07398f';
  const b = '017f22e2-79b0-7cc3-98c4-dc0c0c073990';
  assert.deepEqual(parseUuidsBody(Buffer.from(JSON.stringify({ uuids: [a, b] })), 2), [a, b]);
  const bad = coded('FLURRY_E_CLIENT_BAD_RESPONSE');
  assert.throws(() => parseUuidsBody(Buffer.from(JSON.stringify({ uuids: [a] })), 2), bad);
  assert.throws(() => parseUuidsBody(Buffer.from(JSON.stringify({ uuids: [b, a] })), 2), bad);
  assert.throws(() => parseUuidsBody(Buffer.from(JSON.stringify({ uuids: [a.replace('-7cc3', '-4cc3')] })), 1), bad);
  assert.throws(() => parseUuidsBody(Buffer.from('{"ids":["1"]}'), 1), bad);
  assert.throws(() => parseUuidsBody(Buffer.from('not json'), 1), bad);
});
