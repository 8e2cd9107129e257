import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlurryError, ManualClock, systemClock } from '@flurry/core';
import { freePort, startEngine, type RunningEngine } from '../testing/harness.js';
import type { RegistryDriver } from '../driver.js';
import { createLeafDriver } from './zookeeper-leaf.js';
import { acquireHostLock, leafCacheFile, readLeafCache } from './zookeeper-leaf-cache.js';
import { parseLeafNodeName } from './zookeeper-leaf-claim.js';
import { CreateMode, ZkSession } from './zookeeper-session.js';
import { ChildProcessDriver, holder, rejectsWith, sleep } from './test-kit.js';

const LEAF_JSON = /^\{"ip":"([^"]+)","port":"(\d+)","timestamp":(\d+)\}$/;

/** Creates a Leaf node the way Leaf's SnowflakeZookeeperHolder.createNode does (Curator, creatingParentsIfNeeded, PERSISTENT_SEQUENTIAL, Jackson JSON). */
async function leafJavaCreate(
  s: ZkSession,
  name: string,
  ip: string,
  port: string,
  timestamp: number,
): Promise<string> {
  await s.mkdirp(`/snowflake/${name}/forever`);
  return s.create(
    `/snowflake/${name}/forever/${ip}:${port}-`,
    Buffer.from(`{"ip":"${ip}","port":"${port}","timestamp":${timestamp}}`),
    CreateMode.PERSISTENT_SEQUENTIAL,
  );
}

/** Leaf's own start-up logic (SnowflakeZookeeperHolder.init), ported literally: the worker ID it would pick for ip:port. */
function leafJavaWorkerId(children: string[], listenAddress: string): number | undefined {
  const nodeMap = new Map<string, number>();
  for (const key of children) {
    const nodeKey = key.split('-');
    nodeMap.set(nodeKey[0], parseInt(nodeKey[1], 10));
  }
  return nodeMap.get(listenAddress);
}

/** A process that takes a Leaf claim (or only the host lock) and waits, so it can be killed. */
function leafChild(env: Record<string, string>): ChildProcessDriver {
  const mod = fileURLToPath(new URL('./zookeeper-leaf.js', import.meta.url));
  const cacheMod = fileURLToPath(new URL('./zookeeper-leaf-cache.js', import.meta.url));
  const src = `
      import { createLeafDriver } from ${JSON.stringify(mod)};
      import { acquireHostLock } from ${JSON.stringify(cacheMod)};
      import { createInterface } from 'node:readline';
      const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
      const clock = { now: () => Date.now(), monotonic: () => performance.now(), sleep: () => {} };
      let d, c;
      try {
        if (process.env.MODE === 'lock') { await acquireHostLock(process.env.DIR, process.env.ADDRESS, 'x'); out({ ok: true }); }
        else {
          d = await createLeafDriver(process.env.URL, { clock, connectTimeoutMs: 3000 });
          c = await d.claim({ namespace: 'ignored', slots: 1024, ttlMs: 1000, holder: { id: 'child', hostname: 'child', pid: process.pid } });
          out({ ok: true, slot: c.slot });
        }
      } catch (e) { out({ ok: false, code: e.code, message: e.message }); }
      for await (const line of createInterface({ input: process.stdin })) {
        if (line !== 'renew') continue;
        try { await d.renew(c, { ttlMs: 1000, highWaterMs: Date.now() }); out({ ok: true }); } catch (e) { out({ ok: false, code: e.code, message: e.message }); }
      }
    `;
  return new ChildProcessDriver(src, env);
}

describe('zookeeper+leaf:// driver', () => {
  let engine: RunningEngine;
  let cacheDir: string;
  let z: ZkSession;
  const drivers: RegistryDriver[] = [];
  const base = (): string => `zookeeper+leaf://${engine.address}`;
  const open = async (query: string, clock = systemClock): Promise<RegistryDriver> => {
    const d = await createLeafDriver(`${base()}?cacheDir=${encodeURIComponent(cacheDir)}&${query}`, {
      clock,
      connectTimeoutMs: 3000,
    });
    drivers.push(d);
    return d;
  };
  const data = async (p: string): Promise<string> => (await z.getData(p))?.data.toString('utf8') ?? '';

  before(async () => {
    engine = await startEngine('zookeeper');
    cacheDir = mkdtempSync(path.join(tmpdir(), 'flurry-leaf-test-'));
    // The harness returns once the port is open; under load ZooKeeper may need a few more seconds to serve sessions.
    z = await ZkSession.open({
      hosts: [engine.address],
      url: engine.url,
      sessionTimeoutMs: 10_000,
      connectTimeoutMs: 30_000,
    });
  });
  after(async () => {
    try {
      await Promise.all(drivers.map((d) => d.close()));
      await z?.close();
    } finally {
      await engine?.stop();
      if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it("GIVEN nodes created the way Leaf (Java) creates them THEN Flurry picks the same worker ID, keeps the bytes Leaf expects, and Leaf would pick Flurry's new nodes", async () => {
    const t = Date.now() - 60_000;
    await leafJavaCreate(z, 'compat', '10.0.0.1', '8080', t);
    await leafJavaCreate(z, 'compat', '10.0.0.2', '8080', t + 1);
    await leafJavaCreate(z, 'compat', '10.0.0.3', '9090', t + 2);
    const cache = leafCacheFile(cacheDir, 'compat', '8080');
    assert.equal(cache, path.join(cacheDir, 'compat', 'leafconf', '8080', 'workerID.properties'));
    mkdirSync(path.dirname(cache), { recursive: true });
    writeFileSync(cache, 'workerID=1'); // FileUtils.writeStringToFile(file, "workerID=" + workerID)

    const d = await open('name=compat&address=10.0.0.2:8080');
    const c = await d.claim({ namespace: 'ignored', slots: 1024, ttlMs: 2000, holder: holder('c') });
    assert.equal(c.slot, 1);
    assert.equal(c.releasedCleanly, false, 'a Leaf predecessor never releases cleanly');
    assert.ok(c.highWaterMs >= t + 1, 'the stored timestamp is the high-water mark');
    const children = (await z.getChildren('/snowflake/compat/forever')).sort();
    assert.deepEqual(
      children,
      ['10.0.0.1:8080-0000000000', '10.0.0.2:8080-0000000001', '10.0.0.3:9090-0000000002'],
      'no new node for a known address',
    );
    const m = LEAF_JSON.exec(await data('/snowflake/compat/forever/10.0.0.2:8080-0000000001'));
    assert.ok(m, "node data is Leaf's JSON, byte for byte");
    assert.deepEqual([m[1], m[2]], ['10.0.0.2', '8080']);
    assert.ok(Number(m[3]) >= Date.now() - 5000);
    assert.equal(readLeafCache(cache).workerId, 1);
    assert.match(readFileSync(cache, 'utf8'), /^workerID=1$/m);

    // A new address gets the next sequence number, in a node Leaf reads back as the same worker ID.
    const d2 = await open('name=compat&address=10.0.0.4:8080');
    const c2 = await d2.claim({ namespace: 'ignored', slots: 1024, ttlMs: 2000, holder: holder('c2') });
    assert.equal(c2.slot, 3);
    assert.deepEqual([c2.highWaterMs, c2.releasedCleanly], [0, true], 'a brand-new worker ID has no history');
    const all = await z.getChildren('/snowflake/compat/forever');
    assert.ok(all.includes('10.0.0.4:8080-0000000003'));
    assert.equal(leafJavaWorkerId(all, '10.0.0.4:8080'), 3);
    assert.equal(leafJavaWorkerId(all, '10.0.0.2:8080'), 1);
    assert.ok(LEAF_JSON.test(await data('/snowflake/compat/forever/10.0.0.4:8080-0000000003')));
    assert.deepEqual(parseLeafNodeName('10.0.0.4:8080-0000000003'), {
      address: '10.0.0.4:8080',
      workerId: 3,
      name: '10.0.0.4:8080-0000000003',
    });
  });

  it('GIVEN a stored timestamp ahead of the clock THEN the claim reports it as the high-water mark and the node is never lowered', async () => {
    const future = Date.UTC(2040, 0, 1);
    await leafJavaCreate(z, 'ahead', '10.1.0.1', '8080', future);
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const d = await open('name=ahead&address=10.1.0.1:8080', clock);
    const c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 9000, holder: holder('a') });
    assert.equal(c.slot, 0);
    assert.equal(c.highWaterMs, future, "with a 9 s TTL the lease manager's +TTL already covers Leaf's 3 s reports");
    assert.equal(c.releasedCleanly, false);
    const node = '/snowflake/ahead/forever/10.1.0.1:8080-0000000000';
    assert.equal(LEAF_JSON.exec(await data(node))?.[3], String(future));
    await d.renew(c, { ttlMs: 9000, highWaterMs: future + 10 });
    assert.equal(LEAF_JSON.exec(await data(node))?.[3], String(future + 10), 'renew writes max(now, high-water)');
    await d.renew(c, { ttlMs: 9000, highWaterMs: 5 });
    assert.equal(LEAF_JSON.exec(await data(node))?.[3], String(future + 10), 'never lowered');
    await d.release(c, { highWaterMs: future + 20 });
    assert.equal(LEAF_JSON.exec(await data(node))?.[3], String(future + 20));
    assert.equal(readLeafCache(leafCacheFile(cacheDir, 'ahead', '8080')).highWaterMs, future + 20);

    // A clean release by Flurry: the next claim sees it, with the exact mark.
    const again = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('a2') });
    assert.deepEqual([again.slot, again.highWaterMs, again.releasedCleanly], [0, future + 20, true]);
    await d.release(again, { highWaterMs: 0 });
    // Leaf (Java) rewrites the node after Flurry released it: no longer clean, padded by Leaf's report window.
    await z.multi((tx) =>
      tx.setData(node, Buffer.from(`{"ip":"10.1.0.1","port":"8080","timestamp":${future + 30}}`), -1),
    );
    const third = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('a3') });
    assert.deepEqual([third.highWaterMs, third.releasedCleanly], [future + 30 + 3000, false]);
  });

  it('GIVEN a Leaf server writing the same node while Flurry holds it THEN the next renewal fails LEASE_LOST', async () => {
    const d = await open('name=foreign&address=10.2.0.1:8080');
    const c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('f') });
    await d.renew(c, { ttlMs: 2000, highWaterMs: Date.now() });
    await z.multi((tx) =>
      tx.setData(
        `/snowflake/foreign/forever/10.2.0.1:8080-${String(c.slot).padStart(10, '0')}`,
        Buffer.from(`{"ip":"10.2.0.1","port":"8080","timestamp":${Date.now()}}`),
        -1,
      ),
    );
    const e = await rejectsWith(d.renew(c, { ttlMs: 2000, highWaterMs: Date.now() }), 'FLURRY_E_LEASE_LOST');
    assert.match(e.message, /rewritten by another process/);
  });

  it("GIVEN a write of the holder's own that ZooKeeper committed but whose answer was lost THEN the renewal and the release go on from it, and the process claims its address again at once", async () => {
    const d = await open('name=lostanswer&address=10.2.0.2:8080');
    const c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('l') });
    const node = `/snowflake/lostanswer/forever/10.2.0.2:8080-${String(c.slot).padStart(10, '0')}`;
    const meta = '/snowflake/lostanswer/flurry-meta/10.2.0.2:8080';
    const live = '/snowflake/lostanswer/flurry-live/10.2.0.2:8080';
    // What the holder's transaction does (Leaf node and meta record together), done here as
    // if ZooKeeper had committed it and then died before answering.
    const committedWithoutAnswer = async (ts: number, releasedCleanly: boolean) => {
      const n = (await z.getData(node))!;
      const m = (await z.getData(meta))!;
      await z.multi((tx) => {
        tx.setData(node, Buffer.from(`{"ip":"10.2.0.2","port":"8080","timestamp":${ts}}`), n.stat.version);
        tx.setData(
          meta,
          Buffer.from(
            JSON.stringify({ highWaterMs: ts, releasedCleanly, foreverVersion: n.stat.version + 1, updatedAtMs: ts }),
          ),
          m.stat.version,
        );
      });
    };
    await d.renew(c, { ttlMs: 2000, highWaterMs: Date.now() });
    const ahead = Date.now() + 5_000;
    await committedWithoutAnswer(ahead, false);
    await d.renew(c, { ttlMs: 2000, highWaterMs: Date.now() });
    assert.ok(
      Number(LEAF_JSON.exec(await data(node))?.[3]) >= ahead,
      "the renewal went on from the committed write's mark, never below it",
    );
    await committedWithoutAnswer(ahead + 1, false);
    await d.release(c, { highWaterMs: Date.now() });
    assert.equal(await z.exists(live), null, 'the release removed the ephemeral node');
    const again = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('l') });
    assert.equal(again.slot, c.slot, 'the same worker ID, claimed again without waiting for the session to end');
    assert.ok(again.highWaterMs >= ahead + 1, 'the claim starts after the committed mark');
    assert.equal(again.releasedCleanly, true);
    await d.release(again, { highWaterMs: Date.now() });
  });

  it("GIVEN the sequence beyond the layout's node IDs THEN claim fails FLURRY_E_REGISTRY_EXHAUSTED", async () => {
    for (let i = 1; i <= 3; i++) await leafJavaCreate(z, 'small', `10.3.0.${i}`, '8080', Date.now());
    const d = await open('name=small&address=10.3.0.9:8080');
    const e = await rejectsWith(
      d.claim({ namespace: 'x', slots: 3, ttlMs: 2000, holder: holder('s') }),
      'FLURRY_E_REGISTRY_EXHAUSTED',
    );
    assert.equal(e.details.workerId, 3);
    assert.match(e.message, /never recycles/);
    // and the ephemeral guard was removed: another try fails the same way, not as "held"
    await rejectsWith(
      d.claim({ namespace: 'x', slots: 3, ttlMs: 2000, holder: holder('s') }),
      'FLURRY_E_REGISTRY_EXHAUSTED',
    );
    assert.equal(await z.exists('/snowflake/small/flurry-live/10.3.0.9:8080'), null);
  });

  it('GIVEN one address held by a process THEN a second process is refused, and takes over after the first is killed and its session expires', async () => {
    const url = `${base()}?cacheDir=${encodeURIComponent(cacheDir)}&name=dup&address=10.4.0.1:8080`;
    const child = leafChild({ URL: url });
    try {
      const got = await child.next();
      assert.deepEqual(got, { ok: true, slot: 0 });
      const d = await open('name=dup&address=10.4.0.1:8080');
      const held = await rejectsWith(
        d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('d') }),
        'FLURRY_E_REGISTRY_EXHAUSTED',
      );
      assert.match(held.message, /already held on this host/);
      await child.kill();
      // The host lock of a dead process is taken over at once; ZooKeeper still holds the
      // dead process's ephemeral node until its 1 s session times out.
      const t0 = Date.now();
      let c;
      for (let i = 0; i < 40 && !c; i++) {
        try {
          c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('d') });
        } catch (e) {
          assert.equal((e as FlurryError).code, 'FLURRY_E_REGISTRY_EXHAUSTED');
          assert.match((e as FlurryError).message, /another live Flurry process/);
          await sleep(100);
        }
      }
      assert.ok(c, 'never took over');
      assert.ok(Date.now() - t0 >= 300, "not before the dead holder's session could expire");
      assert.deepEqual([c.slot, c.releasedCleanly], [0, false]);
    } finally {
      await child.kill();
    }
  });

  it("GIVEN a holder paused past its session timeout WHEN a process on another host (same address) takes over THEN the woken holder's renewal fails LEASE_LOST", async () => {
    // "Another host": its own cache directory, so only ZooKeeper's ephemeral node stands between them.
    const otherHost = mkdtempSync(path.join(tmpdir(), 'flurry-leaf-otherhost-'));
    const child = leafChild({
      URL: `${base()}?cacheDir=${encodeURIComponent(cacheDir)}&name=paused&address=10.9.0.1:8080`,
    });
    try {
      assert.deepEqual(await child.next(), { ok: true, slot: 0 });
      const d = await createLeafDriver(
        `${base()}?cacheDir=${encodeURIComponent(otherHost)}&name=paused&address=10.9.0.1:8080`,
        { clock: systemClock, connectTimeoutMs: 3000 },
      );
      drivers.push(d);
      const held = await rejectsWith(
        d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('p') }),
        'FLURRY_E_REGISTRY_EXHAUSTED',
      );
      assert.match(held.message, /another live Flurry process/);
      child.signal('SIGSTOP');
      let c;
      for (let i = 0; i < 40 && !c; i++) {
        await sleep(100);
        try {
          c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('p') });
        } catch (e) {
          assert.equal((e as FlurryError).code, 'FLURRY_E_REGISTRY_EXHAUSTED');
        }
      }
      assert.ok(c, "the paused holder's session never expired");
      assert.deepEqual([c.slot, c.releasedCleanly], [0, false]);
      child.signal('SIGCONT');
      let r = await child.send('renew');
      for (let i = 0; i < 30 && r.code === 'FLURRY_E_REGISTRY_UNREACHABLE'; i++) {
        await sleep(100);
        r = await child.send('renew');
      }
      assert.deepEqual([r.ok, r.code], [false, 'FLURRY_E_LEASE_LOST']);
      await d.renew(c, { ttlMs: 1000, highWaterMs: Date.now() });
    } finally {
      await child.kill();
      rmSync(otherHost, { recursive: true, force: true });
    }
  });

  it('GIVEN a lock file of a live process THEN acquireHostLock refuses; of a dead one THEN it takes over', async () => {
    const dir = path.join(cacheDir, 'locks');
    const child = leafChild({ MODE: 'lock', DIR: dir, ADDRESS: '10.5.0.1:80' });
    try {
      assert.deepEqual(await child.next(), { ok: true });
      await rejectsWith(acquireHostLock(dir, '10.5.0.1:80', 'x'), 'FLURRY_E_REGISTRY_EXHAUSTED');
      const other = await acquireHostLock(dir, '10.5.0.2:80', 'x'); // another address: independent
      other.release();
      await child.kill();
      const lock = await acquireHostLock(dir, '10.5.0.1:80', 'x');
      assert.ok(lock.held());
      await rejectsWith(acquireHostLock(dir, '10.5.0.1:80', 'x'), 'FLURRY_E_REGISTRY_EXHAUSTED'); // same process, second holder
      lock.release();
      assert.equal(lock.held(), false);
    } finally {
      await child.kill();
    }
  });

  it('GIVEN ZooKeeper unreachable THEN opening fails UNREACHABLE, unless cacheFallback=true and a cached worker ID exists', async () => {
    const port = await freePort();
    const url = (q: string): string =>
      `zookeeper+leaf://127.0.0.1:${port}?cacheDir=${encodeURIComponent(cacheDir)}&name=offline&address=10.6.0.1:7070${q}`;
    const e = await rejectsWith(
      createLeafDriver(url(''), { clock: systemClock, connectTimeoutMs: 400 }),
      'FLURRY_E_REGISTRY_UNREACHABLE',
    );
    assert.ok(e.message.includes(`127.0.0.1:${port}`));
    const d = await createLeafDriver(url('&cacheFallback=true'), { clock: systemClock, connectTimeoutMs: 400 });
    drivers.push(d);
    await rejectsWith(
      d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('o') }),
      'FLURRY_E_REGISTRY_UNREACHABLE',
    );
    const cache = leafCacheFile(cacheDir, 'offline', '7070');
    mkdirSync(path.dirname(cache), { recursive: true });
    writeFileSync(cache, 'workerID=5');
    const c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('o') });
    assert.deepEqual([c.slot, c.highWaterMs, c.releasedCleanly], [5, 0, false]);
    const mark = Date.now() + 1000;
    await d.renew(c, { ttlMs: 2000, highWaterMs: mark });
    assert.deepEqual(readLeafCache(cache), { workerId: 5, highWaterMs: mark });
    await d.release(c, { highWaterMs: mark });
  });

  it('GIVEN the engine killed THEN renew fails UNREACHABLE; after a restart the address claims its worker ID again', async () => {
    const d = await open('name=kill&address=10.7.0.1:8080');
    const c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('k') });
    await engine.kill();
    try {
      await rejectsWith(d.renew(c, { ttlMs: 1000, highWaterMs: Date.now() }), 'FLURRY_E_REGISTRY_UNREACHABLE');
    } finally {
      await engine.restart();
    }
    let again;
    for (let i = 0; i < 60 && !again; i++) {
      try {
        await d.release(c, { highWaterMs: Date.now() });
        again = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 1000, holder: holder('k2') });
      } catch (e) {
        assert.ok(
          ['FLURRY_E_REGISTRY_UNREACHABLE', 'FLURRY_E_REGISTRY_EXHAUSTED'].includes((e as FlurryError).code),
          (e as Error).message,
        );
        await sleep(100);
      }
    }
    assert.ok(again, 'no claim after the restart');
    assert.equal(again.slot, c.slot);
    await z.waitConnected(5000);
  });

  it('GIVEN bad parameters THEN FLURRY_E_REGISTRY_URL, and a claim without any address THEN FLURRY_E_REGISTRY_OPTION', async () => {
    const opts = { clock: systemClock, connectTimeoutMs: 3000 };
    for (const q of [
      '?nmae=x',
      '?address=10.0.0.1',
      '?address=my-host:80',
      '?cacheDir=rel/dir',
      '?cacheFallback=yes',
      '?name=a/../b',
    ]) {
      await rejectsWith(createLeafDriver(`${base()}${q}`, opts), 'FLURRY_E_REGISTRY_URL');
    }
    const d = await open('name=noaddr');
    await rejectsWith(
      d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('n') }),
      'FLURRY_E_REGISTRY_OPTION',
    );
    const c = await d.claim({ namespace: 'x', slots: 1024, ttlMs: 2000, holder: holder('n', '10.8.0.1:1234') });
    assert.equal(c.slot, 0, "the holder's address is used when the URL has none");
    assert.ok(await z.exists('/snowflake/noaddr/forever/10.8.0.1:1234-0000000000'));
  });
});
