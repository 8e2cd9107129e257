// Scenario: segment mode (issue 14). Three `flurry serve --sequences` processes share one store (PostgreSQL,
// MariaDB — Leaf's leaf_alloc table — or Redis with appendonly yes + appendfsync always), each through a TCP
// proxy of its own, and draw numbers for three keys under load while, one after the other: one server is
// SIGKILLed and started again; the store is SIGKILLed and restarted; the store is SIGSTOPped mid-allocation for
// longer than the servers' store deadline (so allocations end with an unknown outcome and must be skipped);
// one server's connection to the store is cut at the proxy past that deadline, then healed. Finally every
// server shuts down cleanly (handing unused numbers back) and a fresh server draws a few numbers more.
//
// Safety (final): per key, no number issued twice by any server instance, across the whole run; each server
// instance's numbers strictly increasing per key; no 5xx other than 503 with Retry-After; no server crash.
// Liveness (bounds from the settings, printed): each fault is followed by every server issuing every key again
// within the store deadline + the retry delay + slack. Gaps (numbers never handed out) are counted per key.
import path from 'node:path';
import { Child, holderKill, partition, startListening, unknownOutcomeWrite } from '../lib/procs.mjs';
import { Proxy } from '../lib/proxy.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { dist, pollUntil, root, sleep, tempDir } from '../lib/util.mjs';
import { SegmentLoad, checkStreams, get } from './segments-load.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title =
  'segment mode: 3 servers x 3 keys on PostgreSQL, MariaDB, Redis under load; server SIGKILL, store restart, store SIGSTOP mid-allocation, cut connection';

/** The stores of segment mode, as torture backends. */
const STORES = ['postgres', 'mariadb', 'redis'];
const KEYS = ['order', 'invoice', 'ticket'];
/** The servers' store deadline and retry delay (openSequences defaults: timeoutMs 5000, retryMs 500). */
const STORE_TIMEOUT_MS = 5_000;
const RETRY_MS = 500;

async function redisFsyncAlways(port) {
  const { Redis } = await import('ioredis');
  const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 2, lazyConnect: true });
  try {
    await r.connect();
    await r.config('SET', 'appendonly', 'yes');
    await r.config('SET', 'appendfsync', 'always');
  } finally {
    r.disconnect();
  }
}

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const cfg = {
    warmMs: 1_500,
    settleMs: 1_500,
    pauseMs: STORE_TIMEOUT_MS + 1_000,
    cutMs: STORE_TIMEOUT_MS + 1_000,
    storedStep: 20,
    maxStep: 400,
    targetMs: 1_000,
    ...ctx.P.segments,
  };
  const { freePort } = await import(dist.testing);
  const { openSequences } = await import(path.join(root, 'packages/segments/dist/index.js'));
  const backends = ctx.backends.filter((b) => STORES.includes(b));
  await perBackend(ctx, add, 'segments', (backend, row, gens) => one(backend, row, gens), {
    backends,
    parallel: true,
  });

  async function one(backend, row, gens) {
    const dir = tempDir('segments');
    const engine = await ctx.engines.privateEngine(backend);
    const proxies = [];
    let load;
    try {
      if (backend === 'redis') await redisFsyncAlways(engine.port);
      // The keys, created up front with a small stored step (the adaptive step's floor).
      const admin = await openSequences(engine.url, {});
      for (const k of KEYS) await admin.create(k, { start: 1, step: cfg.storedStep, description: 'torture' });
      await admin.close();

      const n = 3;
      const ports = [];
      for (let i = 0; i < n; i++) {
        const p = new Proxy(engine.port);
        await p.listen();
        proxies.push(p);
        ports.push(await freePort());
      }
      const storeVia = (i) => engine.url.replace(`:${engine.port}`, `:${proxies[i].port}`);
      const servers = [];
      const gen = [0, 0, 0];
      const spawnServer = (i, storeUrl = storeVia(i), port = ports[i]) => {
        const name = `segments-${backend}-server-${i}.${gen[i]++}`;
        const c = new Child(
          name,
          process.execPath,
          [
            dist.serverCli,
            'serve',
            '--port',
            String(port),
            '--registry',
            `file:${dir}`,
            '--allow-root',
            '--log-level',
            'warn',
            '--sequences',
            storeUrl,
            '--sequence-max-step',
            String(cfg.maxStep),
            '--sequence-target-ms',
            String(cfg.targetMs),
          ],
          { env: { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') } },
        );
        const s = { name, file: path.join(dir, name), child: c, port, instance: name };
        gens.push(s);
        return s;
      };
      const ready = async (s) => {
        const ok = await pollUntil(
          async () => !s.child.running || (await get(undefined, s.port, '/readyz', 1_000)).status === 200,
          30_000,
          100,
        );
        if (!ok || !s.child.running)
          throw new Error(
            `${s.name} did not become ready within 30 s: ${JSON.stringify(s.child.exit)} ${s.child.stderr.slice(-800)}`,
          );
      };
      /** Spawns server `i` and waits until it is ready (on another free port if its own was taken first). */
      const start = (i, storeUrl = storeVia(i), port = ports[i]) =>
        startListening(
          () => spawnServer(i, storeUrl, port),
          ready,
          async () => {
            port = await freePort();
            if (i < ports.length && storeUrl === storeVia(i)) ports[i] = port;
          },
        );
      await Promise.all([0, 1, 2].slice(0, n).map(async (i) => (servers[i] = await start(i))));
      row.processes = n;

      load = new SegmentLoad(servers, KEYS, { timeoutMs: STORE_TIMEOUT_MS * 3 });
      load.start();
      const bound = STORE_TIMEOUT_MS + 2 * RETRY_MS + 2_000;
      const how = `store deadline ${STORE_TIMEOUT_MS} ms + 2 × retry ${RETRY_MS} ms + 2000 ms slack`;
      /** Waits until every server issues every key after `t` (bounded), and records it. */
      const recovered = async (what, t, which = [0, 1, 2]) => {
        await pollUntil(() => which.every((i) => load.firstOkAfter(t, i) < Infinity), bound + 2_000, 50);
        const worst = Math.max(...which.map((i) => load.firstOkAfter(t, i))) - t;
        row.within(what, worst, bound, { how });
      };
      await sleep(cfg.warmMs);

      // 1. SIGKILL one server; start it again.
      await holderKill.inject(servers[0].child);
      await sleep(300);
      const respawnAt = performance.now();
      servers[0] = await start(0);
      load.servers[0] = servers[0];
      await pollUntil(() => load.firstOkAfter(respawnAt, 0) < Infinity, 30_000, 50); // the bound checked below
      row.within(
        'server 0 issues every key after its SIGKILL and restart',
        load.firstOkAfter(respawnAt, 0) - respawnAt,
        30_000,
        {
          how: 'its 30 s start bound',
        },
      );
      await sleep(cfg.settleMs);

      // 2. Restart of the store (SIGKILL, then the same data directory and port).
      const killAt = performance.now();
      await engine.restart();
      if (backend === 'redis') await redisFsyncAlways(engine.port);
      const upAt = performance.now();
      row.note(`store down ${Math.round(upAt - killAt)} ms for its restart`);
      await recovered('every server issues every key after the store restart', upAt);
      await sleep(cfg.settleMs);

      // 3. SIGSTOP of the store mid-allocation, past the servers' store deadline.
      const stopAt = performance.now();
      await unknownOutcomeWrite.inject({ engine, deadlineMs: STORE_TIMEOUT_MS }, cfg.pauseMs);
      const contAt = performance.now();
      row.note(
        `while the store was stopped ${Math.round(contAt - stopAt)} ms, ${[0, 1, 2].map((i) => load.okBetween(i, stopAt, contAt)).join('/')} answers with numbers came from the servers' buffers`,
      );
      await recovered('every server issues every key after the store resumes', contAt);
      await sleep(cfg.settleMs);

      // 4. One server's connection to the store cut at its proxy, past the store deadline, then healed.
      const cutAt = performance.now();
      await partition.inject(proxies[1], cfg.cutMs);
      const healAt = performance.now();
      row.note(
        `server 1 cut from the store ${Math.round(healAt - cutAt)} ms: ${load.okBetween(1, cutAt, healAt)} answers from its buffers meanwhile`,
      );
      await recovered('server 1 issues every key after its connection heals', healAt, [1]);
      await sleep(cfg.settleMs);

      await load.stop();
      for (const s of servers)
        if (!s.child.running)
          row.fail(`${s.name} exited during the run: ${JSON.stringify(s.child.exit)} ${s.child.stderr.slice(-600)}`);

      // What the servers saw: failed fetches and allocations skipped for an unknown outcome (their status route).
      let failures = 0;
      let skipped = 0;
      for (const s of servers)
        for (const k of KEYS) {
          const r = await get(undefined, s.port, `/v1/sequences/${k}/status`, 5_000);
          if (r.status !== 200) continue;
          const st = JSON.parse(r.body);
          failures += st.failures;
          skipped += st.skippedAllocations;
        }
      row.note(`fetch failures ${failures}, allocations skipped for an unknown outcome ${skipped} (live servers)`);
      row.details.fetchFailures = failures;
      row.details.skippedAllocations = skipped;

      // 5. Clean shutdown (unused numbers handed back when safe), then a fresh server draws more.
      for (const s of servers) s.child.signal('SIGTERM');
      await Promise.all(servers.map((s) => s.child.waitExit(20_000)));
      const fresh = await start(2, engine.url, await freePort());
      const extra = new Map([[fresh.instance, new Map()]]);
      for (const k of KEYS) {
        const list = [];
        for (let j = 0; j < 3; j++) {
          const r = await get(undefined, fresh.port, `/v1/sequences/${k}/next`, STORE_TIMEOUT_MS * 2);
          if (r.status === 200) list.push(BigInt(JSON.parse(r.body).value));
          else row.liveness(`the fresh server answered ${r.status} for ${k}: ${r.body.slice(0, 200)}`);
        }
        extra.get(fresh.instance).set(k, list);
      }
      fresh.child.signal('SIGTERM');
      await fresh.child.waitExit(20_000);

      // Safety.
      const { perKey, duplicates, decreasing, examples } = checkStreams(load.streams, KEYS, extra);
      row.duplicates = duplicates;
      row.decreasing = decreasing;
      row.idsChecked = Object.values(perKey).reduce((a, k) => a + k.numbers, 0);
      if (duplicates) row.fail(`${duplicates} number(s) issued twice: ${examples.join('; ')}`);
      if (decreasing)
        row.fail(`${decreasing} number(s) not above the previous one of the same server: ${examples.join('; ')}`);
      for (const e of load.errors.slice(0, 5)) row.fail(e);
      if (load.errors.length > 5) row.fail(`… and ${load.errors.length - 5} more bad answers`);
      row.addRefusals(load.refusals);
      row.details.perKey = perKey;
      row.details.statuses = load.statuses;
      row.details.requests = load.requests;
      for (const k of KEYS) {
        const f = perKey[k];
        const after = extra.get(fresh.instance).get(k);
        row.note(
          `${k}: ${f.numbers.toLocaleString('en-US')} numbers, ${f.min}…${f.max}, gaps ${f.gaps.toLocaleString('en-US')}; after the clean shutdown: ${after.join(', ')}`,
        );
        if (f.numbers === 0) row.liveness(`no number was issued for ${k}`);
      }
      row.note(`answers: ${JSON.stringify(load.statuses)} over ${load.requests.toLocaleString('en-US')} requests`);
    } finally {
      if (load?.running) await load.stop();
      for (const p of proxies) await p.close();
      await engine.stop();
    }
  }
}
