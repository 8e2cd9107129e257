import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout, ManualClock } from '@flurry/core';
import { k8sOrdinal } from './static.js';
import { openRegistry } from '../open-registry.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-static-'));
after(() => rmSync(base, { recursive: true, force: true }));

describe('static and k8s registries', () => {
  test('GIVEN static:N inside the layout THEN the lease is node N and never expires', async () => {
    const clock = new ManualClock();
    const reg = await openRegistry('static:5', { stateDir: path.join(base, 's1'), clock, autoRenew: false });
    assert.equal(reg.kind, 'static');
    const lease = await reg.acquire(Layout.from('twitter'), { pin: { datacenter: 2 } });
    assert.deepEqual(lease.node, { datacenter: 2, worker: 5 });
    assert.equal(lease.deadline, Infinity);
    clock.advanceMonotonic(10 ** 9);
    assert.ok(lease.valid(), 'a pause does not fence a static ID');
    await reg.close();
  });

  test('GIVEN static:N WHEN holders() THEN it lists this process only (no engine), offset 0, never expiring; gone after release', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const reg = await openRegistry('static:5', { stateDir: path.join(base, 'sh'), clock, autoRenew: false });
    const layout = Layout.from('twitter');
    assert.deepEqual(await reg.holders({ layout, pin: { datacenter: 2 } }), []);
    const lease = await reg.acquire(layout, { pin: { datacenter: 2 } });
    clock.advance(250);
    const [h, ...rest] = await reg.holders();
    assert.equal(rest.length, 0);
    assert.equal(h.slot, 5);
    assert.equal(h.namespace, 'default/datacenter-2');
    assert.deepEqual(h.node, { datacenter: 2, worker: 5 });
    assert.equal(h.pid, process.pid);
    assert.equal(typeof h.version, 'string');
    assert.equal(h.expiresAtMs, null, 'a static ID never expires');
    assert.equal(h.clockOffsetMs, 0, 'its own clock');
    assert.equal(h.ageMs, 250);
    await lease.release();
    assert.deepEqual(await reg.holders({ layout, pin: { datacenter: 2 } }), []);
    await reg.close();
  });

  test('GIVEN static:N outside the layout THEN FLURRY_E_REGISTRY_STATIC_NODE gives the range', async () => {
    const reg = await openRegistry('static:32', { stateDir: path.join(base, 's2') });
    await assert.rejects(reg.acquire(Layout.from('twitter')), (e: FlurryError) => {
      assert.equal(e.code, 'FLURRY_E_REGISTRY_STATIC_NODE');
      assert.match(e.message, /0 to 31/);
      return true;
    });
    await reg.close();
  });

  test('GIVEN a restart on the same disk THEN the static high-water mark survives (clean release and crash)', async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    const stateDir = path.join(base, 's3');
    const layout = Layout.parse('timestamp:41,worker:4,sequence:12');
    const r1 = await openRegistry('static:3', { stateDir, clock, autoRenew: false, ttlMs: 1000 });
    const l1 = await r1.acquire(layout);
    const issued = clock.now() + 40;
    l1.attach(() => issued);
    await r1.close();
    const r2 = await openRegistry('static:3', { stateDir, clock, autoRenew: false, ttlMs: 1000 });
    const l2 = await r2.acquire(layout);
    assert.equal(l2.notBeforeMs, issued, 'clean release: the exact mark');
    clock.advance(10);
    await l2.renewNow(); // reports now; then "crashes" (no release)
    const reported = Math.max(clock.now(), issued); // the mark never goes below the inherited floor
    const r3 = await openRegistry('static:3', { stateDir, clock, autoRenew: false, ttlMs: 1000 });
    const l3 = await r3.acquire(layout);
    const o = r3.options!;
    assert.equal(
      l3.notBeforeMs,
      reported + o.renewIntervalMs + o.marginMs,
      'crash: the mark plus one renewal interval and the margin',
    );
  });

  test('GIVEN a StatefulSet pod name THEN k8s: takes its ordinal; otherwise a coded error says what to set', async () => {
    assert.deepEqual(k8sOrdinal({ HOSTNAME: 'orders-12' }), { slot: 12, source: 'HOSTNAME=orders-12' });
    assert.deepEqual(k8sOrdinal({ POD_NAME: 'id-svc-0', HOSTNAME: 'node7' }), { slot: 0, source: 'POD_NAME=id-svc-0' });
    assert.throws(
      () => k8sOrdinal({ HOSTNAME: 'laptop' }),
      (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_STATIC_NODE' && /POD_NAME/.test(e.message),
    );
    const saved = { POD_NAME: process.env.POD_NAME, HOSTNAME: process.env.HOSTNAME };
    try {
      process.env.POD_NAME = 'flurry-40';
      const reg = await openRegistry('k8s:', { stateDir: path.join(base, 'k') });
      await assert.rejects(
        reg.acquire(Layout.parse('timestamp:41,worker:5,sequence:12')),
        (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_STATIC_NODE' && /replicas/.test(e.message),
      );
      const lease = await reg.acquire(Layout.from('leaf'));
      assert.equal(lease.slot, 40);
      await reg.close();
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
  test('GIVEN a state directory that cannot be written THEN acquire fails with a coded error naming the directory, why and what to set', async () => {
    // A regular file where the directory should be: mkdir fails even for root.
    const blocker = path.join(base, 'blocker');
    writeFileSync(blocker, 'not a directory');
    const stateDir = path.join(blocker, 'flurry');
    const reg = await openRegistry('static:3', { stateDir, autoRenew: false });
    await assert.rejects(reg.acquire(Layout.from('twitter')), (e: FlurryError) => {
      assert.equal(e.code, 'FLURRY_E_REGISTRY_UNREACHABLE');
      assert.equal(e.details.stateDir, stateDir);
      assert.ok(e.message.includes(`The state directory ${stateDir} keeps`), e.message);
      assert.match(e.message, /ENOTDIR/);
      assert.match(e.message, /repeat IDs; refusing to start without it\./);
      assert.match(e.message, /XDG_STATE_HOME/);
      assert.doesNotMatch(e.message, /continuing without it/);
      return true;
    });
    await reg.close();
  });

  test('GIVEN the state directory becomes unwritable after start-up THEN every renewal fails and says so (never silently once)', async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    const stateDir = path.join(base, 's4');
    const reg = await openRegistry('static:2', { stateDir, clock, autoRenew: false });
    const lease = await reg.acquire(Layout.from('twitter'));
    assert.equal(await lease.renewNow(), true);
    rmSync(path.join(stateDir, 'static'), { recursive: true, force: true });
    writeFileSync(path.join(stateDir, 'static'), 'not a directory');
    const errors: FlurryError[] = [];
    lease.on('renew-failed', (e: FlurryError) => errors.push(e));
    assert.equal(await lease.renewNow(), false);
    assert.equal(await lease.renewNow(), false);
    assert.equal(errors.length, 2, 'the second renewal fails too');
    for (const e of errors) {
      assert.equal(e.code, 'FLURRY_E_REGISTRY_UNREACHABLE');
      assert.match(e.message, /retried at the next renewal/);
    }
    assert.ok(lease.valid(), 'a static ID keeps issuing');
    rmSync(path.join(stateDir, 'static'));
    mkdirSync(path.join(stateDir, 'static'));
    assert.equal(await lease.renewNow(), true, 'writable again: the renewal succeeds');
    await reg.close();
  });
});
