/**
 * The staleness rule of `/v1/cluster` in fake time: a real `file:` registry driven by one
 * `ManualClock` (its expiry follows the clock's monotonic time), this service and a second
 * holder that renews only when told. Every step is exact: live below `renewIntervalMs +
 * STALE_SLACK_MS`, stale above it, gone once its TTL has passed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Layout, ManualClock } from '@flurry/core';
import { openRegistry } from '@flurry/coordination';
import { inProcess } from '../http/in-process.js';
import { tempDir } from '../test-support.js';
import { STALE_SLACK_MS } from './cluster.js';
import type { ClusterBody } from './types.js';

const TTL_MS = 10_000;
const RENEW_MS = 3000;

test('GIVEN a holder that stops renewing (fake time, file registry) THEN live up to renew + slack, stale after, gone after its TTL', async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const dir = tempDir('cluster-clock');
  const url = `file:${path.join(dir, 'reg')}`;
  const svc = await inProcess(['--registry', url, '--cluster', 'fake', '--layout', 'leaf'], {}, clock, {
    ttlMs: TTL_MS,
    renewIntervalMs: RENEW_MS,
  });
  const other = await openRegistry(url, {
    cluster: 'fake',
    ttlMs: TTL_MS,
    renewIntervalMs: RENEW_MS,
    clock,
    autoRenew: false,
    stateDir: path.join(dir, 'other'),
  });
  const lease = await other.acquire(Layout.from('leaf'));
  const own = svc.core.issuer.leased!.lease;
  const read = async (): Promise<ClusterBody> => {
    const r = await svc.get('/v1/cluster');
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as ClusterBody;
  };
  const theirs = (b: ClusterBody) => b.holders.find((h) => h.slot === lease.slot);
  // Advance (each step longer than the 1 s cache, so every read is fresh), renewing this service each time.
  const step = async (ms: number): Promise<ClusterBody> => {
    clock.advance(ms);
    assert.ok(await own.renewNow(), 'this service renews');
    return read();
  };
  try {
    let b = await read();
    assert.equal(b.holders.length, 2);
    assert.equal(theirs(b)?.state, 'live');
    assert.equal(theirs(b)?.ageMs, 0);
    assert.equal(theirs(b)?.clockOffsetMs, 0, 'one clock');
    b = await step(RENEW_MS + STALE_SLACK_MS); // exactly renew + slack (a fresh read: the cache is 1 s): not yet stale
    assert.equal(theirs(b)?.ageMs, RENEW_MS + STALE_SLACK_MS);
    assert.equal(theirs(b)?.state, 'live', JSON.stringify(theirs(b)));
    b = await step(1001); // past it (and past the 1 s cache)
    assert.equal(theirs(b)?.state, 'stale', JSON.stringify(theirs(b)));
    assert.ok(b.holders.find((h) => h.self)?.state === 'live', 'this service stays live');
    assert.equal(theirs(b)?.expiresAtMs, clock.now() + TTL_MS - (RENEW_MS + STALE_SLACK_MS + 1001));
    b = await step(TTL_MS - (RENEW_MS + STALE_SLACK_MS + 1001)); // exactly its TTL after its last renewal
    assert.equal(theirs(b), undefined, 'gone once the TTL has passed');
    assert.equal(b.holders.length, 1);
  } finally {
    await other.close();
    await svc.stop();
  }
});
