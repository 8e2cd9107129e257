import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { FlurryError, ManualClock, systemClock } from '@flurry/core';
import { freePort, startEngine, type RunningEngine } from '../testing/harness.js';
import type { Claim, RegistryDriver } from '../driver.js';
import { createZooKeeperDriver, type ZooKeeperClaim } from './zookeeper.js';
import { parseZooKeeperUrl } from './zookeeper-client.js';
import { ZkSession } from './zookeeper-session.js';
import { ChildProcessDriver, holder, rejectsWith, sleep } from './test-kit.js';

/** A raw ZooKeeper session for inspecting what the driver wrote. */
async function inspector(engine: RunningEngine): Promise<ZkSession> {
  return ZkSession.open({
    hosts: [engine.address],
    url: engine.url,
    sessionTimeoutMs: 10_000,
    connectTimeoutMs: 5_000,
  });
}

/** A high-water node's JSON without `updatedAtMs` (the writer's clock, for holders()), which must be a number. */
async function readJson(s: ZkSession, path: string): Promise<Record<string, unknown> | null> {
  const got = await s.getData(path);
  if (!got) return null;
  const { updatedAtMs, ...rest } = JSON.parse(got.data.toString('utf8')) as Record<string, unknown>;
  assert.equal(typeof updatedAtMs, 'number', `${path} carries the writer's clock`);
  return rest;
}

/**
 * A holder in its own process, driven line by line over stdin/stdout, so it can be
 * stopped with SIGSTOP like a paused production process.
 */
function childHolder(url: string, ttlMs: number): ChildProcessDriver {
  const mod = fileURLToPath(new URL('./zookeeper.js', import.meta.url));
  const src = `
      import { createZooKeeperDriver } from ${JSON.stringify(mod)};
      import { createInterface } from 'node:readline';
      const clock = { now: () => Date.now(), monotonic: () => performance.now(), sleep: () => {} };
      const driver = await createZooKeeperDriver(process.env.ZK_URL, { clock, connectTimeoutMs: 3000 });
      let claim;
      const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
      out({ ready: true });
      for await (const line of createInterface({ input: process.stdin })) {
        try {
          if (line === 'claim') { claim = await driver.claim({ namespace: 'child', slots: 4, ttlMs: ${ttlMs}, holder: { id: 'child:' + process.pid, hostname: 'child', pid: process.pid } }); out({ ok: true, slot: claim.slot }); }
          else if (line === 'renew') { await driver.renew(claim, { ttlMs: ${ttlMs}, highWaterMs: Date.now() }); out({ ok: true }); }
          else if (line === 'close') { await driver.close(); out({ ok: true }); break; }
        } catch (e) { out({ ok: false, code: e.code, message: e.message }); }
      }
    `;
  return new ChildProcessDriver(src, { ZK_URL: url });
}

describe('zookeeper:// driver', () => {
  let engine: RunningEngine;
  const drivers: RegistryDriver[] = [];
  const open = async (url?: string, clock = systemClock): Promise<RegistryDriver> => {
    const d = await createZooKeeperDriver(url ?? engine.url, { clock, connectTimeoutMs: 3000 });
    drivers.push(d);
    return d;
  };

  before(async () => {
    engine = await startEngine('zookeeper');
    // The harness returns once the port is open; under load ZooKeeper may need a few more seconds to serve sessions.
    await (
      await ZkSession.open({
        hosts: [engine.address],
        url: engine.url,
        sessionTimeoutMs: 10_000,
        connectTimeoutMs: 30_000,
      })
    ).close();
  });
  after(async () => {
    try {
      await Promise.all(drivers.map((d) => d.close()));
    } finally {
      await engine?.stop();
    }
  });

  it('GIVEN two holders THEN they get distinct slots, renew, and a released slot is claimable again with its clean high-water mark', async () => {
    const a = await open();
    const b = await open();
    const ca = (await a.claim({ namespace: 'basic', slots: 8, ttlMs: 2000, holder: holder('a') })) as ZooKeeperClaim;
    const cb = await b.claim({ namespace: 'basic', slots: 8, ttlMs: 2000, holder: holder('b') });
    assert.notEqual(ca.slot, cb.slot);
    assert.ok(ca.sessionTimeoutMs >= 2000, `negotiated ${ca.sessionTimeoutMs}`);
    assert.deepEqual([ca.highWaterMs, ca.releasedCleanly], [0, true]);
    const mark = Date.now() + 5;
    await a.renew(ca, { ttlMs: 2000, highWaterMs: mark });
    const z = await inspector(engine);
    try {
      const slotNode = await z.exists(`/flurry/basic/slots/${ca.slot}`);
      assert.ok(slotNode && slotNode.ephemeralOwner.readBigUInt64BE() !== 0n, 'slot node is ephemeral');
      assert.deepEqual(await readJson(z, `/flurry/basic/hw/${ca.slot}`), { highWaterMs: mark, releasedCleanly: false });
      await a.release(ca, { highWaterMs: mark + 1 });
      assert.equal(await z.exists(`/flurry/basic/slots/${ca.slot}`), null);
      assert.deepEqual(await readJson(z, `/flurry/basic/hw/${ca.slot}`), {
        highWaterMs: mark + 1,
        releasedCleanly: true,
      });
      await a.release(ca, { highWaterMs: mark + 1 }); // idempotent
      await rejectsWith(a.renew(ca, { ttlMs: 2000, highWaterMs: mark }), 'FLURRY_E_LEASE_LOST');
      const again = await b.claim({
        namespace: 'basic',
        slots: 8,
        ttlMs: 2000,
        holder: holder('b2'),
        preferredSlot: ca.slot,
      });
      assert.equal(again.slot, ca.slot);
      assert.deepEqual([again.highWaterMs, again.releasedCleanly], [mark + 1, true]);
    } finally {
      await z.close();
    }
  });

  it('GIVEN a stored mark WHEN a renewal reports a lower one THEN the stored mark never goes down', async () => {
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const d = await open(undefined, clock);
    const c = await d.claim({ namespace: 'mono', slots: 2, ttlMs: 2000, holder: holder('m') });
    const z = await inspector(engine);
    try {
      assert.deepEqual(
        await readJson(z, `/flurry/mono/hw/${c.slot}`),
        { highWaterMs: Date.UTC(2030, 0, 1), releasedCleanly: false },
        'claim marks the slot in use at the clock',
      );
      await d.renew(c, { ttlMs: 2000, highWaterMs: Date.UTC(2020, 0, 1) });
      assert.equal((await readJson(z, `/flurry/mono/hw/${c.slot}`))?.highWaterMs, Date.UTC(2030, 0, 1));
      await d.release(c, { highWaterMs: Date.UTC(2031, 0, 1) });
      assert.deepEqual(await readJson(z, `/flurry/mono/hw/${c.slot}`), {
        highWaterMs: Date.UTC(2031, 0, 1),
        releasedCleanly: true,
      });
    } finally {
      await z.close();
    }
  });

  it('GIVEN every slot held THEN claim fails FLURRY_E_REGISTRY_EXHAUSTED saying how many and by whom; a free preferred slot is taken first', async () => {
    const d = await open();
    const c1 = await d.claim({ namespace: 'full', slots: 2, ttlMs: 2000, holder: holder('f1'), preferredSlot: 1 });
    assert.equal(c1.slot, 1);
    const c0 = await d.claim({ namespace: 'full', slots: 2, ttlMs: 2000, holder: holder('f0'), preferredSlot: 1 });
    assert.equal(c0.slot, 0);
    const e = await rejectsWith(
      d.claim({ namespace: 'full', slots: 2, ttlMs: 2000, holder: holder('f2') }),
      'FLURRY_E_REGISTRY_EXHAUSTED',
    );
    assert.equal(e.details.held, 2);
    assert.deepEqual(
      (e.details.holders as Array<{ id: string }>).map((h) => h.id).sort(),
      [holder('f0').id, holder('f1').id].sort(),
    );
    assert.match(e.message, /all 2 node IDs of "full"/);
  });

  it("GIVEN a holder process paused past its session timeout WHEN another claims THEN it gets the slot, and the resumed holder's renewal fails LEASE_LOST, then it claims anew", async () => {
    const child = childHolder(engine.url, 1000);
    const d = await open();
    try {
      assert.deepEqual(await child.next(), { ready: true });
      const first = await child.send('claim');
      assert.equal(first.ok, true);
      // All 4 slots: the child holds one, we take the other 3.
      const ours: Claim[] = [];
      for (let i = 0; i < 3; i++)
        ours.push(await d.claim({ namespace: 'child', slots: 4, ttlMs: 1000, holder: holder(`p${i}`) }));
      await rejectsWith(
        d.claim({ namespace: 'child', slots: 4, ttlMs: 1000, holder: holder('p3') }),
        'FLURRY_E_REGISTRY_EXHAUSTED',
      );
      child.signal('SIGSTOP');
      const t0 = Date.now();
      let taken: Claim | undefined;
      for (let i = 0; i < 40 && !taken; i++) {
        await sleep(250);
        // keep our own sessions busy so that only the child's expires
        for (const c of ours) await d.renew(c, { ttlMs: 1000, highWaterMs: Date.now() });
        try {
          taken = await d.claim({ namespace: 'child', slots: 4, ttlMs: 1000, holder: holder('p3') });
        } catch (e) {
          assert.equal((e as FlurryError).code, 'FLURRY_E_REGISTRY_EXHAUSTED');
        }
      }
      assert.ok(taken, "the paused holder's slot was never freed");
      assert.equal(taken.slot, first.slot);
      assert.ok(
        Date.now() - t0 >= 600,
        `freed after ${Date.now() - t0} ms, before the 1000 ms session timeout could have run out`,
      );
      assert.equal(taken.releasedCleanly, false);
      assert.ok(taken.highWaterMs > 0);
      child.signal('SIGCONT');
      // On waking, the client first sees its connection dropped (UNREACHABLE), then learns
      // from the server that the session expired (LEASE_LOST). It never renews.
      let renew = await child.send('renew');
      for (let i = 0; i < 30 && renew.code === 'FLURRY_E_REGISTRY_UNREACHABLE'; i++) {
        await sleep(100);
        renew = await child.send('renew');
      }
      assert.deepEqual([renew.ok, renew.code], [false, 'FLURRY_E_LEASE_LOST']);
      await d.release(ours.pop()!, { highWaterMs: Date.now() });
      const again = await child.send('claim');
      assert.equal(again.ok, true, String(again.message));
      assert.equal((await child.send('renew')).ok, true);
      assert.equal((await child.send('close')).ok, true);
    } finally {
      await child.kill();
      await d.close();
    }
  });

  it('GIVEN the engine killed THEN renew fails UNREACHABLE at once; after a restart claims work again', async () => {
    const d = await open();
    const c = await d.claim({ namespace: 'kill', slots: 4, ttlMs: 2000, holder: holder('k') });
    await engine.kill();
    try {
      const t0 = Date.now();
      await rejectsWith(d.renew(c, { ttlMs: 2000, highWaterMs: Date.now() }), 'FLURRY_E_REGISTRY_UNREACHABLE');
      assert.ok(Date.now() - t0 < 1000, 'a disconnected session fails fast');
    } finally {
      await engine.restart();
    }
    // The old session may have survived the restart (ZooKeeper restores sessions) or not:
    // either renew succeeds on a slot that is still ours, or it reports the loss.
    let outcome = '';
    for (let i = 0; i < 40 && !outcome; i++) {
      try {
        await d.renew(c, { ttlMs: 2000, highWaterMs: Date.now() });
        outcome = 'renewed';
      } catch (e) {
        if ((e as FlurryError).code === 'FLURRY_E_LEASE_LOST') outcome = 'lost';
        else {
          assert.equal((e as FlurryError).code, 'FLURRY_E_REGISTRY_UNREACHABLE');
          await sleep(250);
        }
      }
    }
    assert.ok(outcome, 'the driver never reconnected after the restart');
    const d2 = await open();
    const c2 = await d2.claim({ namespace: 'kill', slots: 4, ttlMs: 2000, holder: holder('k2') });
    if (outcome === 'renewed') assert.notEqual(c2.slot, c.slot);
    const fresh = await d.claim({ namespace: 'kill', slots: 4, ttlMs: 2000, holder: holder('k3') });
    assert.notEqual(fresh.slot, c2.slot);
  });

  it('GIVEN the engine stalled (SIGSTOP) THEN renew fails UNREACHABLE within its time limit', async () => {
    const d = await open();
    const c = await d.claim({ namespace: 'stall', slots: 4, ttlMs: 1500, holder: holder('s') });
    engine.pause();
    try {
      const t0 = Date.now();
      await rejectsWith(d.renew(c, { ttlMs: 1500, highWaterMs: Date.now() }), 'FLURRY_E_REGISTRY_UNREACHABLE');
      assert.ok(Date.now() - t0 < 1500, `renew took ${Date.now() - t0} ms`);
    } finally {
      engine.resume();
    }
  });

  it("GIVEN a TTL above the server's maxSessionTimeout THEN claim fails FLURRY_E_REGISTRY_OPTION", async () => {
    const d = await open();
    const e = await rejectsWith(
      d.claim({ namespace: 'ttl', slots: 4, ttlMs: 120_000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    assert.equal(e.details.sessionTimeoutMs, 60_000);
    await rejectsWith(
      d.claim({ namespace: '../x', slots: 4, ttlMs: 2000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    await rejectsWith(
      d.claim({ namespace: 'ok', slots: 0, ttlMs: 2000, holder: holder('t') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
  });

  it('GIVEN no server on the port THEN opening fails UNREACHABLE naming the URL and the hosts, within the connect timeout', async () => {
    const p1 = await freePort();
    const p2 = await freePort();
    const url = `zookeeper://127.0.0.1:${p1},127.0.0.1:${p2}/x`;
    const t0 = Date.now();
    const e = await rejectsWith(
      createZooKeeperDriver(url, { clock: systemClock, connectTimeoutMs: 600 }),
      'FLURRY_E_REGISTRY_UNREACHABLE',
    );
    assert.ok(Date.now() - t0 < 3000);
    assert.ok(e.message.includes(url), e.message);
    assert.ok(e.message.includes(`127.0.0.1:${p1}`) && e.message.includes(`127.0.0.1:${p2}`), e.message);
    assert.match(
      e.message,
      /raise connectTimeoutMs \(600 ms now; flurry serve: --registry-connect-timeout-ms or FLURRY_REGISTRY_CONNECT_TIMEOUT_MS\)/,
      'names the real setting',
    );
  });

  it('GIVEN a closed driver THEN close is idempotent and claims fail FLURRY_E_REGISTRY_CLOSED', async () => {
    const d = await createZooKeeperDriver(new URL(engine.url), { clock: systemClock, connectTimeoutMs: 3000 });
    await d.claim({ namespace: 'closed', slots: 1, ttlMs: 2000, holder: holder('c') });
    await d.close();
    await d.close();
    await rejectsWith(
      d.claim({ namespace: 'closed', slots: 1, ttlMs: 2000, holder: holder('c') }),
      'FLURRY_E_REGISTRY_CLOSED',
    );
    // closing ended the session: its slot is free at once
    const d2 = await open();
    assert.equal((await d2.claim({ namespace: 'closed', slots: 1, ttlMs: 2000, holder: holder('c2') })).slot, 0);
  });
});

describe('parseZooKeeperUrl', () => {
  it('GIVEN several hosts, a default port and a path THEN it lists them', () => {
    const p = parseZooKeeperUrl('zookeeper://a:1,b/flurry/x/', 'zookeeper');
    assert.deepEqual(p.hosts, ['a:1', 'b:2181']);
    assert.equal(p.path, '/flurry/x');
    assert.equal(parseZooKeeperUrl(new URL('zookeeper://h:2/'), 'zookeeper').path, '');
  });
  it('GIVEN a bad port, a wrong scheme or a bad path THEN FLURRY_E_REGISTRY_URL', () => {
    for (const u of [
      'zookeeper://a:99999/x',
      'etcd://a:1/x',
      'zookeeper://a:1/x/../y',
      'zookeeper://a:1/x y',
      'zookeeper:///x',
    ]) {
      assert.throws(
        () => parseZooKeeperUrl(u, 'zookeeper'),
        (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_URL',
        u,
      );
    }
  });
});
