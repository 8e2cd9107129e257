import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlurryError, ManualClock } from '@flurry/core';
import type { HolderInfo } from '../driver.js';
import { localFileSystem, type FileIo } from '../file-steps.js';
import { createFileDriver, type FileClaim } from './file.js';

/** What each worker process of the contention test prints. */
type WorkerReport = {
  out: [string, number, number][];
  claims: number;
  exhausted: number;
  lostRenewals: number;
  io: FileIo;
};

const base = mkdtempSync(path.join(tmpdir(), 'flurry-fd-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const holder = (id: string): HolderInfo => ({ id, hostname: 'test-host', pid: 4242 });
function setup(io: FileIo) {
  const dir = path.join(base, `d${n++}`);
  const clock = new ManualClock(Date.UTC(2025, 0, 1), 5000);
  const d = () => createFileDriver(dir, { clock, io });
  return { dir, clock, d };
}
async function code(p: Promise<unknown>): Promise<FlurryError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof FlurryError, String(e));
    return e;
  }
  assert.fail('expected a rejection');
}

// Every test runs in both modes of the file-system steps: the protocol is the same, only how each step runs differs.
for (const io of ['async', 'sync'] as const)
  describe(`file registry driver (io: ${io})`, () => {
    test('GIVEN an empty directory THEN claims hand out distinct slots from 0 AND a full namespace is exhausted naming the holders', async () => {
      const { d } = setup(io);
      const a = d();
      const c0 = await a.claim({ namespace: 'ns', slots: 2, ttlMs: 1000, holder: holder('h0') });
      const c1 = await d().claim({ namespace: 'ns', slots: 2, ttlMs: 1000, holder: holder('h1') });
      assert.deepEqual([c0.slot, c1.slot], [0, 1]);
      assert.equal(c0.highWaterMs, 0);
      assert.equal(c0.releasedCleanly, true);
      const e = await code(d().claim({ namespace: 'ns', slots: 2, ttlMs: 1000, holder: holder('h2') }));
      assert.equal(e.code, 'FLURRY_E_REGISTRY_EXHAUSTED');
      assert.equal(e.details.held, 2);
      assert.match(e.message, /all 2 node IDs of "ns" .* are held \(2 held\)/);
      assert.match(e.message, /h0 \(host test-host, pid 4242, expires in 1000 ms\)/);
    });

    test('GIVEN a namespace of a single node ID that is held THEN the exhausted message says "the only node ID … is held", not "all 1 node IDs"', async () => {
      const { d } = setup(io);
      await d().claim({ namespace: 'one', slots: 1, ttlMs: 1000, holder: holder('h0') });
      const e = await code(d().claim({ namespace: 'one', slots: 1, ttlMs: 1000, holder: holder('h1') }));
      assert.equal(e.code, 'FLURRY_E_REGISTRY_EXHAUSTED');
      assert.match(e.message, /^the only node ID of "one" in .* is held \(1 held\)/);
    });

    test('GIVEN a released slot THEN the next claim gets it cleanly with the final mark, kept in the hw file', async () => {
      const { d, dir } = setup(io);
      const a = d();
      const c = await a.claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('a') });
      await a.renew(c, { ttlMs: 1000, highWaterMs: 777 });
      await a.release(c, { highWaterMs: 900 });
      const hw = JSON.parse(readFileSync(path.join(dir, 'ns', 'slots', '0', 'hw'), 'utf8')) as { highWaterMs: number };
      assert.equal(hw.highWaterMs, 900);
      const c2 = await d().claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('b') });
      assert.equal(c2.slot, 0);
      assert.equal(c2.highWaterMs, 900);
      assert.equal(c2.releasedCleanly, true);
      await a.release(c, { highWaterMs: 5 }); // a stale release changes nothing
      const e = await code(a.renew(c, { ttlMs: 1000, highWaterMs: 0 }));
      assert.equal(e.code, 'FLURRY_E_LEASE_LOST');
    });

    test("GIVEN an expired lease THEN it is taken over (not cleanly) AND the old holder's renewal fails with FLURRY_E_LEASE_LOST", async () => {
      const { d, clock, dir } = setup(io);
      const a = d();
      const ca = await a.claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('a') });
      await a.renew(ca, { ttlMs: 1000, highWaterMs: 1234 });
      clock.advance(999);
      assert.equal(
        (await code(d().claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('b') }))).code,
        'FLURRY_E_REGISTRY_EXHAUSTED',
        'not before the TTL',
      );
      clock.advance(1);
      const b = d();
      const cb = await b.claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('b') });
      assert.equal(cb.slot, 0);
      assert.equal(cb.highWaterMs, 1234);
      assert.equal(cb.releasedCleanly, false);
      const e = await code(a.renew(ca, { ttlMs: 1000, highWaterMs: 2000 }));
      assert.equal(e.code, 'FLURRY_E_LEASE_LOST');
      await b.renew(cb, { ttlMs: 1000, highWaterMs: 1300 });
      // Old generations are collected: at most the previous and the current one remain.
      clock.advance(1000);
      const cc = (await d().claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('c') })) as FileClaim;
      assert.equal(cc.highWaterMs, 1300);
      const gens = readdirSync(path.join(dir, 'ns', 'slots', '0')).filter((f) => f.endsWith('.lease'));
      assert.ok(gens.length <= 2, gens.join(','));
      assert.equal(cc.gen, 3);
    });

    test('GIVEN a renewal that lands while a taker is between its claim and its re-check THEN the taker withdraws (no two winners)', async () => {
      const { d, clock, dir } = setup(io);
      const a = d();
      const ca = (await a.claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('a') })) as FileClaim;
      clock.advance(1000);
      // The holder renews "late" — the record looks expired to the taker's first read,
      // but a renewed record appears before its re-check: emulate by writing the taker's
      // generation by hand first, as a racing taker would have.
      const slotDir = path.join(dir, 'ns', 'slots', '0');
      const raced = JSON.parse(readFileSync(path.join(slotDir, 'g0000000001.lease'), 'utf8')) as Record<
        string,
        unknown
      >;
      writeFileSync(
        path.join(slotDir, 'g0000000002.lease'),
        JSON.stringify({ ...raced, gen: 2, token: '2.x', state: 'held', expiresMono: clock.monotonic() + 1000 }),
      );
      const e = await code(a.renew(ca, { ttlMs: 1000, highWaterMs: 1 }));
      assert.equal(e.code, 'FLURRY_E_LEASE_LOST', 'the renewer sees the taker and fences');
      // An aborted generation does not count as a taker.
      writeFileSync(
        path.join(slotDir, 'g0000000002.lease'),
        JSON.stringify({ ...raced, gen: 2, token: '2.x', state: 'aborted', expiresMono: clock.monotonic() + 1000 }),
      );
      const c2 = (await d().claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('c') })) as FileClaim;
      assert.equal(c2.gen, 3, 'claims above the aborted generation');
    });

    test('GIVEN a record from another boot THEN it counts as expired; a corrupt record blocks its slot and is reported', async () => {
      const { d, dir } = setup(io);
      const slotDir = path.join(dir, 'ns', 'slots', '0');
      await d().claim({ namespace: 'ns', slots: 2, ttlMs: 60_000, holder: holder('a') });
      const rec = JSON.parse(readFileSync(path.join(slotDir, 'g0000000001.lease'), 'utf8')) as Record<string, unknown>;
      writeFileSync(
        path.join(slotDir, 'g0000000001.lease'),
        JSON.stringify({ ...rec, boot: '00000000-0000-0000-0000-000000000000', expiresAtMs: Date.UTC(2030, 0, 1) }),
      );
      // Another *kernel* boot id vs a manual clock's: falls back to wall time (still valid till 2030).
      assert.equal(
        await d()
          .claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('b') })
          .catch((e: FlurryError) => e.code),
        'FLURRY_E_REGISTRY_EXHAUSTED',
      );
      writeFileSync(
        path.join(slotDir, 'g0000000001.lease'),
        JSON.stringify({ ...rec, boot: '00000000-0000-0000-0000-000000000000', expiresAtMs: 0 }),
      );
      assert.equal((await d().claim({ namespace: 'ns', slots: 1, ttlMs: 1000, holder: holder('b') })).slot, 0);
      const other = path.join(dir, 'ns2', 'slots', '0');
      await d().claim({ namespace: 'ns2', slots: 1, ttlMs: 1, holder: holder('x') });
      writeFileSync(path.join(other, 'g0000000001.lease'), '{"v":1,"gen":1,');
      const e = await code(d().claim({ namespace: 'ns2', slots: 1, ttlMs: 1000, holder: holder('y') }));
      assert.equal(e.code, 'FLURRY_E_REGISTRY_EXHAUSTED');
      assert.match(e.message, /corrupt record g0000000001\.lease/);
    });

    test('GIVEN a relative directory or a bad namespace THEN coded errors', async () => {
      assert.throws(
        () => createFileDriver('rel/dir', { clock: new ManualClock() }),
        (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_URL',
      );
      const { d } = setup(io);
      assert.equal(
        (await code(d().claim({ namespace: '../x', slots: 1, ttlMs: 1000, holder: holder('a') }))).code,
        'FLURRY_E_REGISTRY_OPTION',
      );
    });

    test(
      'GIVEN 6 processes racing for one slot with 40 ms leases, random pauses, renewals, releases and abandons THEN no two holders are ever valid at once',
      { timeout: 60_000 },
      async () => {
        const { dir } = setup(io);
        const here = path.dirname(fileURLToPath(import.meta.url));
        const script = `
      import { createFileDriver } from ${JSON.stringify(path.join(here, 'file.js'))};
      import { hostMonotonicMs } from ${JSON.stringify(path.join(here, '..', 'host-clock.js'))};
      import { systemClock, sleepSync } from '@flurry/core';
      const d = createFileDriver(process.env.DIR, { clock: systemClock, io: process.env.IO });
      const ttl = 40, margin = 5, out = [], stop = hostMonotonicMs() + 3000;
      let claims = 0, exhausted = 0, lostRenewals = 0;
      while (hostMonotonicMs() < stop) {
        const s = hostMonotonicMs();
        let c;
        try { c = await d.claim({ namespace: 'race', slots: 1, ttlMs: ttl, holder: { id: 'p' + process.pid + '-' + claims, hostname: 'h', pid: process.pid } }); }
        catch (e) { if (e.code !== 'FLURRY_E_REGISTRY_EXHAUSTED') throw e; exhausted++; sleepSync(Math.random() * 4); continue; }
        claims++;
        const h = c.token;
        let deadline = s + ttl - margin;
        const r = hostMonotonicMs();
        if (r < deadline) out.push([h, r, deadline]);
        const renewals = Math.floor(Math.random() * 4);
        for (let i = 0; i < renewals; i++) {
          sleepSync(Math.random() * ttl * 1.3);
          const s2 = hostMonotonicMs();
          if (s2 >= deadline) break;                // the manager would call this lost
          try { await d.renew(c, { ttlMs: ttl, highWaterMs: Date.now() }); }
          catch (e) { if (e.code !== 'FLURRY_E_LEASE_LOST') throw e; lostRenewals++; deadline = -1; break; }
          const r2 = hostMonotonicMs();
          if (r2 < s2 + ttl - margin) { deadline = s2 + ttl - margin; out.push([h, r2, deadline]); }
        }
        if (deadline > 0 && Math.random() < 0.5) {
          const rs = hostMonotonicMs(); // a releasing holder stops issuing first
          for (const iv of out) if (iv[0] === h && iv[2] > rs) iv[2] = rs;
          await d.release(c, { highWaterMs: Date.now() });
        }
      }
      process.stdout.write(JSON.stringify({ out, claims, exhausted, lostRenewals, io: d.io }));
    `;
        const procs = Array.from(
          { length: 6 },
          () =>
            new Promise<WorkerReport>((resolve, reject) => {
              const p = spawn(process.execPath, ['--input-type=module', '-e', script], {
                env: { ...process.env, DIR: dir, IO: io },
                cwd: here,
                stdio: ['ignore', 'pipe', 'pipe'],
              });
              let o = '';
              let err = '';
              p.stdout.on('data', (x: Buffer) => (o += x.toString()));
              p.stderr.on('data', (x: Buffer) => (err += x.toString()));
              const t = setTimeout(() => p.kill('SIGKILL'), 30_000);
              p.on('exit', (c) => {
                clearTimeout(t);
                if (c === 0) resolve(JSON.parse(o) as WorkerReport);
                else reject(new Error(`worker exited ${c}: ${err}`));
              });
            }),
        );
        const results = await Promise.all(procs);
        const intervals = results.flatMap((r) => r.out).sort((x, y) => x[1] - y[1]);
        const holdings = new Set(intervals.map((i) => i[0]));
        assert.ok(holdings.size >= 10, `enough hand-overs to mean something: ${holdings.size}`);
        // Sweep: an interval of one holding must not overlap any other holding's interval.
        let maxEnd = -Infinity;
        let maxOwner = '';
        for (const [h, from, to] of intervals) {
          if (h !== maxOwner && from < maxEnd)
            assert.fail(
              `two holders valid at once: ${maxOwner} until ${maxEnd.toFixed(3)}, ${h} from ${from.toFixed(3)}`,
            );
          if (to > maxEnd) {
            maxEnd = to;
            maxOwner = h;
          }
        }
        const total = results.reduce(
          (a, r) => ({
            claims: a.claims + r.claims,
            exhausted: a.exhausted + r.exhausted,
            lost: a.lost + r.lostRenewals,
          }),
          { claims: 0, exhausted: 0, lost: 0 },
        );
        assert.ok(total.exhausted > 0, 'contention happened');
        // The mode each worker ran in: sync where asked for on a local disk (the directory under the test's tmpdir).
        const want = io === 'sync' && localFileSystem(statfsSync(dir).type) !== undefined ? 'sync' : 'async';
        assert.deepEqual(
          results.map((r) => r.io),
          results.map(() => want),
        );
        process.stdout.write(`# race (io ${io}): ${JSON.stringify(total)} holdings=${holdings.size}\n`);
      },
    );
  });
