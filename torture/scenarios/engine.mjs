// Scenario 5, engine faults: while 4 holders issue through a real ZooKeeper, etcd or
// Redis, the server is SIGKILLed and restarted, then stalled with SIGSTOP, each time for
// longer than the lease TTL. Holders must stop issuing by their deadline (no ID stamped
// later than the fault + TTL until the engine is back) and recover on their own once it
// is; zero duplicates and no overlapping node runs across the merged output.
import { analyze } from '../lib/analyze.mjs';
import { readIds, tsExtractor } from '../lib/ids.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect } from '../lib/generators.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { engineOf } from '../lib/backends.mjs';
import { clusterName, dist, sleep, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'engine SIGKILL + restart and SIGSTOP past the TTL under load';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.sixteen);
  const lease = ctx.P.lease;
  const { durationMs, holders = 4 } = ctx.P.engine;
  const outageMs = lease.ttlMs + 1_000;
  const recoverMs = Math.max(3_000, Math.floor((durationMs - 2 * outageMs) / 3));
  const engineBackends = ctx.backends.filter((b) => b !== 'file');
  // Backends on one engine run one after the other; different engines run side by side.
  const groups = new Map();
  for (const b of engineBackends) {
    const k = engineOf(b);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(b);
  }
  await Promise.all(
    [...groups.values()].map((list) =>
      perBackend(ctx, add, 'engine-faults', (backend, row, gens) => one(ctx, backend, row, gens), { backends: list }),
    ),
  );

  async function one(ctx, backend, row, gens) {
    const engine = await ctx.engines.engine(engineOf(backend));
    const url = await ctx.engines.url(backend, engine);
    const dir = tempDir('engine');
    const cluster = clusterName('engine');
    for (let i = 0; i < holders; i++) {
      gens.push(
        spawnGenerator(dir, `engine-${backend}-${i}`, {
          registry: url,
          cluster,
          registryOptions: { ...lease, holder: { address: `127.0.0.1:${7400 + i}` } },
          layout: LAYOUTS.sixteen,
          durationMs: durationMs + 60_000, // stopped by the parent
          mode: 'mixed',
          chunk: 256,
          chunkSleepMs: 1,
          retryAcquire: true,
          acquireTimeoutMs: 30_000,
        }),
      );
    }
    const ready = await waitReady(gens, 30_000);
    ready.forEach(
      (m, i) =>
        m.ev !== 'ready' &&
        row.liveness(`${gens[i].name} did not acquire: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
    );
    if (!row.pass) return;
    const faults = [];
    await sleep(1_000);
    // 1. SIGKILL the engine, keep it down past the TTL, restart it.
    {
      const t = Date.now();
      await engine.kill();
      const dead = Date.now();
      await sleep(outageMs);
      const restartAt = Date.now();
      await engine.restart();
      faults.push({ kind: 'kill', startWall: t, effectiveWall: dead, endWall: restartAt, upWall: Date.now() });
      ctx.log(
        `engine-faults/${backend}: ${engine.kind} killed for ${restartAt - dead} ms, back up after ${Date.now() - restartAt} ms`,
      );
    }
    await sleep(recoverMs);
    // 2. SIGSTOP the engine past the TTL, then SIGCONT.
    {
      const t = Date.now();
      engine.pause();
      await sleep(outageMs);
      const resumeAt = Date.now();
      engine.resume();
      faults.push({ kind: 'pause', startWall: t, effectiveWall: t, endWall: resumeAt, upWall: resumeAt });
    }
    await sleep(recoverMs);
    for (const g of gens) g.child.send('stop');
    await Promise.all(gens.map((g) => g.child.waitExit(20_000)));
    row.processes = gens.length;
    row.details.faults = faults;
    collect(row, gens);
    analyze(row, gens, layout, { orderPromised: true, allowReorderAcrossNodes: true });

    // Fencing: from fault + TTL until the engine was back, nobody may issue.
    const tsOf = tsExtractor(layout);
    const epoch = layout.epochMs;
    for (const g of gens) {
      const { ids } = readIds(g.file);
      for (const f of faults) {
        const fenceFrom = f.effectiveWall + lease.ttlMs;
        let late = 0;
        let worst = 0;
        let after = 0;
        for (let i = 0; i < ids.length; i++) {
          const ms = tsOf(ids[i]) + epoch;
          if (ms > fenceFrom && ms < f.endWall) {
            late++;
            worst = Math.max(worst, ms - fenceFrom);
          }
          if (ms > f.upWall) after++;
        }
        if (late)
          row.fail(
            `${g.name} issued ${late} ID(s) up to ${worst} ms past its deadline while the engine was ${f.kind === 'kill' ? 'dead' : 'stalled'} (fault at ${f.effectiveWall}, TTL ${lease.ttlMs} ms)`,
          );
        if (!after)
          row.liveness(
            `${g.name} did not recover within ${recoverMs} ms after the engine ${f.kind === 'kill' ? 'restarted' : 'resumed'}`,
          );
      }
      // How long this holder could not issue around each fault (its longest gap).
      let gap = 0;
      for (let i = 1; i < ids.length; i++) gap = Math.max(gap, tsOf(ids[i]) - tsOf(ids[i - 1]));
      row.stall(gap);
    }
  }
}
