// High availability against real `flurry serve` processes on loopback: a server killed
// mid-stream, every server down and back, slow servers and timeouts (the slow server is a
// real HTTP proxy that delays answers from a real flurry serve).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay, setImmediate as yieldLoop } from 'node:timers/promises';
import { FlurryError, Layout } from '@flurry/core';
import { createClient } from './client.js';
import { startDelayProxy, startFlurry, type FlurryProcess } from './testing/flurry-process.js';

const twitter = Layout.from('twitter');
const coded = (code: string) => (e: unknown) => e instanceof FlurryError && e.code === code;
const nodeOf = (id: bigint): string => {
  const f = twitter.decode(id).fields;
  return `${f.datacenter}/${f.worker}`;
};

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-failover-'));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Retries `fn` every 50 ms, at most `attempts` times; returns its first success. */
async function eventually<T>(fn: () => Promise<T>, attempts: number): Promise<T> {
  let last: unknown;
  for (let k = 0; k < attempts; k++) {
    try {
      return await fn();
    } catch (e) {
      last = e;
      await delay(50);
    }
  }
  throw last;
}

test('GIVEN three servers WHEN one is killed (SIGKILL) mid-stream THEN every next() still resolves, no ID repeats, and the dead server is marked down', async () => {
  await withDir(async (dir) => {
    const servers = await Promise.all([0, 1, 2].map(() => startFlurry({ registryDir: dir })));
    const client = createClient({
      servers: servers.map((s) => s.url),
      prefetch: { size: 1_000, lowWater: 500, adaptive: false },
      backoff: { initialMs: 50, maxMs: 500 },
      timeoutMs: 2_000,
    });
    try {
      const seen = new Set<bigint>();
      const nodesBeforeKill = new Set<string>();
      const total = 30_000;
      const killAt = 10_000;
      let killed: Promise<void> | undefined;
      for (let k = 0; k < total; k++) {
        const id = await client.next();
        assert.ok(!seen.has(id), `ID ${id} handed out twice`);
        seen.add(id);
        if (k < killAt) nodesBeforeKill.add(nodeOf(id));
        if (k === killAt) killed = servers[1].kill();
        if (k % 250 === 0) await yieldLoop(); // let refills and the kill happen while consuming
      }
      await killed;
      assert.equal(seen.size, total);
      assert.equal(nodesBeforeKill.size, 3, 'all three servers served before the kill');
      // Go on until the client has noticed the dead server (bounded).
      for (let k = 0; k < 20 && client.stats().servers[1].state === 'up'; k++) {
        for (let j = 0; j < 1_000; j++) seen.add(await client.next());
        await delay(20);
      }
      const dead = client.stats().servers[1];
      assert.equal(dead.state, 'down');
      assert.match(dead.lastError!.code, /^FLURRY_E_CLIENT_(NETWORK|TIMEOUT)$/);
      assert.equal(seen.size, client.stats().taken, 'every ID handed out was distinct');
    } finally {
      await client.close();
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});

test('GIVEN every server stopped THEN buffered IDs are still handed out, then next() rejects with FLURRY_E_CLIENT_UNAVAILABLE listing each server; WHEN they come back THEN next() succeeds again', async () => {
  await withDir(async (dir) => {
    let servers: FlurryProcess[] = await Promise.all([0, 1].map(() => startFlurry({ registryDir: dir })));
    const ports = servers.map((s) => s.port);
    const client = createClient({
      servers: servers.map((s) => s.url),
      prefetch: { size: 500, lowWater: 100, adaptive: false },
      backoff: { initialMs: 50, maxMs: 200 },
      timeoutMs: 1_000,
    });
    try {
      const seen = new Set<bigint>([await client.next()]);
      await Promise.all(servers.map((s) => s.stop()));
      // The buffer still holds what was fetched: those come out although no server is up.
      let served = 1;
      let failure: unknown;
      for (let k = 0; k < 2_000; k++) {
        try {
          seen.add(await client.next());
          served++;
        } catch (e) {
          failure = e;
          break;
        }
      }
      assert.ok(served >= 400, `the buffer served ${served} IDs after the servers stopped`);
      assert.equal(seen.size, served);
      assert.ok(coded('FLURRY_E_CLIENT_UNAVAILABLE')(failure), String(failure));
      const details = (failure as FlurryError).details as {
        servers: Array<{ url: string; state: string; lastError: { code: string } | null }>;
      };
      assert.deepEqual(
        details.servers.map((s) => s.url),
        servers.map((s) => s.url),
      );
      for (const s of details.servers) {
        assert.equal(s.state, 'down');
        assert.equal(s.lastError?.code, 'FLURRY_E_CLIENT_NETWORK');
        assert.ok((failure as Error).message.includes(s.url));
      }

      servers = await Promise.all(ports.map((port) => startFlurry({ registryDir: dir, port })));
      const again = await eventually(() => client.next(), 60);
      assert.ok(!seen.has(again));
      for (let k = 0; k < 1_000; k++) {
        const id = await client.next();
        assert.ok(!seen.has(id));
        seen.add(id);
      }
    } finally {
      await client.close();
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});

test('GIVEN a server slower than timeoutMs first in the list THEN next() fails over to the fast one within about the timeout, and the slow one is marked down with FLURRY_E_CLIENT_TIMEOUT', async () => {
  await withDir(async (dir) => {
    const server = await startFlurry({ registryDir: dir });
    const slow = await startDelayProxy(server.url, 3_000);
    const client = createClient({
      servers: [slow.url, server.url],
      timeoutMs: 300,
      backoff: { initialMs: 50, maxMs: 200 },
    });
    try {
      const t0 = performance.now();
      const id = await client.next();
      const took = performance.now() - t0;
      assert.equal(typeof id, 'bigint');
      assert.ok(took >= 250 && took < 2_500, `next() took ${Math.round(took)} ms`);
      const [s0, s1] = client.stats().servers;
      assert.equal(s0.state, 'down');
      assert.equal(s0.lastError!.code, 'FLURRY_E_CLIENT_TIMEOUT');
      assert.equal(s1.state, 'up');
    } finally {
      await client.close();
      await slow.close();
      await server.stop();
    }
  });
});

test('GIVEN only a slow server THEN next() rejects with FLURRY_E_CLIENT_UNAVAILABLE naming the timeout; WHEN it speeds up THEN next() succeeds after the backoff', async () => {
  await withDir(async (dir) => {
    const server = await startFlurry({ registryDir: dir });
    const slow = await startDelayProxy(server.url, 2_000);
    const client = createClient({ servers: [slow.url], timeoutMs: 200, backoff: { initialMs: 50, maxMs: 100 } });
    try {
      await assert.rejects(
        client.next(),
        (e: unknown) => coded('FLURRY_E_CLIENT_UNAVAILABLE')(e) && /FLURRY_E_CLIENT_TIMEOUT/.test((e as Error).message),
      );
      // Still backing off: fails at once without a request.
      const requests = client.stats().requests;
      await assert.rejects(client.next(), coded('FLURRY_E_CLIENT_UNAVAILABLE'));
      assert.equal(client.stats().requests, requests);
      slow.delayMs = 0;
      assert.equal(typeof (await eventually(() => client.next(), 40)), 'bigint');
      assert.equal(client.stats().servers[0].state, 'up');
    } finally {
      await client.close();
      await slow.close();
      await server.stop();
    }
  });
});

test('GIVEN least-latency with a server behind a 40 ms delay and a direct one THEN most refills go to the direct one', async () => {
  await withDir(async (dir) => {
    const server = await startFlurry({ registryDir: dir });
    const slow = await startDelayProxy(server.url, 40);
    const client = createClient({
      servers: [slow.url, server.url],
      strategy: 'least-latency',
      prefetch: { size: 200, lowWater: 20, adaptive: false },
    });
    try {
      for (let k = 0; k < 6_000; k++) {
        await client.next();
        if (k % 100 === 0) await delay(1);
      }
      const [viaProxy, direct] = client.stats().servers;
      assert.ok(
        direct.requests > 2 * viaProxy.requests,
        `direct ${direct.requests} vs delayed ${viaProxy.requests} requests`,
      );
      assert.ok(viaProxy.latencyMs! > direct.latencyMs!);
    } finally {
      await client.close();
      await slow.close();
      await server.stop();
    }
  });
});
