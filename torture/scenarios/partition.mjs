// Scenario 4b, partition: one holder's path to the engine is cut (a TCP proxy that
// blackholes its traffic) while the engine and everyone else stay up. The holder must
// stop issuing by its fencing deadline; a standby takes its node ID once the engine lets
// the lease expire; after the path heals the old holder must not issue under its old node
// ID again. The partitioned holder uses sequence borrowing (`onExhausted: 'borrow'`,
// default `maxBorrowMs`) and asks for one large batch just before its deadline: the
// borrowed ticks run ahead of its wall clock and are never reported, which is exactly
// what the new holder's high-water floor has to cover.
//
// Leaf's scheme has no takeover (worker IDs belong to an ip:port forever), so on
// zookeeper+leaf the partitioned holder must only fence itself and recover after healing.
import { analyze } from '../lib/analyze.mjs';
import { Proxy } from '../lib/proxy.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect, lastMsg } from '../lib/generators.mjs';
import { partition } from '../lib/procs.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { engineOf } from '../lib/backends.mjs';
import { clusterName, dist, sleep, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'one holder partitioned from its engine past the TTL (with a borrowing burst at its deadline)';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.fourSmallSeq);
  const lease = ctx.P.lease;
  // The burst asks for a second's worth of ticks: as far as the generator lets it borrow.
  const { cutMs = lease.ttlMs + 3_000, afterHealMs = 2_500, burstTicks = 1_000 } = ctx.P.partition ?? {};
  const backends = ctx.backends.filter((b) => b !== 'file');
  const groups = new Map();
  for (const b of backends) {
    const k = engineOf(b);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(b);
  }
  await Promise.all(
    [...groups.values()].map((list) =>
      perBackend(ctx, add, 'partition', (backend, row, gens) => one(backend, row, gens), { backends: list }),
    ),
  );

  async function one(backend, row, gens) {
    const leaf = backend === 'zookeeper+leaf';
    const engine = await ctx.engines.engine(engineOf(backend));
    const url = await ctx.engines.url(backend, engine);
    const dir = tempDir('partition');
    const cluster = clusterName('partition');
    const proxies = [];
    try {
      const base = (address, extra) => ({
        cluster,
        // Only the TTL is set: margin and renewal interval are the registry's defaults
        // (margin min(1000, ttl/5)), the borrowing bound is the generator's default.
        registryOptions: { ttlMs: lease.ttlMs, holder: { address } },
        layout: LAYOUTS.fourSmallSeq,
        durationMs: 120_000, // stopped by the parent; ends by itself if the parent is held up
        mode: 'mixed',
        chunk: 16,
        chunkSleepMs: 2,
        retryUntilMs: 60_000,
        retryEveryMs: 40,
        ...extra,
      });
      const holders = [];
      for (let i = 0; i < 4; i++) {
        const p = new Proxy(engine.port);
        await p.listen();
        proxies.push(p);
        const viaProxy = url.replace(`:${engine.port}`, `:${p.port}`);
        const extra =
          i === 0
            ? {
                url: viaProxy,
                generator: { onExhausted: 'borrow' },
                burst: { beforeDeadlineMs: 150, count: 64 * burstTicks },
              }
            : { url: viaProxy };
        holders.push(spawnGenerator(dir, `partition-${backend}-holder-${i}`, base(`127.0.0.1:${7600 + i}`, extra)));
      }
      gens.push(...holders);
      const ready = await waitReady(holders, 30_000);
      ready.forEach(
        (m, i) =>
          m.ev !== 'acquired' &&
          row.liveness(`${holders[i].name} did not acquire: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
      );
      if (!row.pass) return;
      await sleep(1_000);
      const victim = holders[0];
      const victimNode = Object.values(lastMsg(victim, 'acquired').node)[0];
      let standby = null;
      const { effectiveWall: cutWall, endWall: healWall } = await partition.inject(proxies[0], async () => {
        victim.child.send('arm');
        // The standby comes once the path is cut: it waits for a free node ID.
        if (!leaf) {
          standby = spawnGenerator(dir, `partition-${backend}-standby`, base('127.0.0.1:7699', { url }));
          gens.push(standby);
        }
        await sleep(cutMs);
      });
      await sleep(afterHealMs);
      for (const g of gens) g.child.send('stop');
      await Promise.all(gens.map((g) => g.child.waitExit(20_000)));
      row.processes = gens.length;
      row.details.cutWall = cutWall;
      row.details.healWall = healWall;
      collect(row, gens);
      const { segs } = await analyze(row, gens, layout, { orderPromised: true, allowReorderAcrossNodes: true });

      // Fencing: the partitioned holder's last successful issue before the heal must come
      // before cut + TTL (its last renewal started before the cut).
      const before = victim.child.messages.filter((m) => m.ev === 'progress' && m.wall < healWall && m.lastOkWall);
      const lastOk = Math.max(0, ...before.map((m) => m.lastOkWall));
      if (lastOk > cutWall + lease.ttlMs)
        row.fail(
          `${victim.name} issued ${lastOk - cutWall} ms after its path to the engine was cut, past the ${lease.ttlMs} ms TTL`,
        );
      else row.note(`${victim.name} issued its last ID ${lastOk - cutWall} ms after the cut (TTL ${lease.ttlMs} ms)`);
      const b = lastMsg(victim, 'burst');
      // Safety: a borrowed tick is never further ahead of the highest wall time the
      // generator saw than maxBorrowMs (the default here); the wall clock read after the
      // burst is at least that high, so this bound is sound.
      const maxBorrowMs = 1_000;
      if (b && b.lastIssuedUnixMs - b.wall > maxBorrowMs)
        row.fail(
          `${victim.name} burst issued an ID at ${b.lastIssuedUnixMs}, ${b.lastIssuedUnixMs - b.wall} ms ahead of its wall clock after the burst: past the ${maxBorrowMs} ms borrow bound`,
        );
      if (b)
        row.note(
          `${victim.name} burst: ${b.count.toLocaleString('en-US')} IDs in ${Math.round(b.ms)} ms, ${Math.round(b.msUntilDeadlineBefore)} ms before its deadline, reaching ${b.lastIssuedUnixMs - b.wall} ms ahead of its wall clock${b.code ? ` (stopped by ${b.code})` : ''}`,
        );
      else row.note(`${victim.name} never reached its burst (lease not near its deadline while armed)`);
      if (standby) {
        const took = segs.find((s) => s.stream === standby.name && s.node === victimNode);
        const got = segs.filter((s) => s.stream === standby.name).map((s) => s.node);
        if (!took && !got.length)
          row.liveness(
            `the standby never got a node ID (node ${victimNode} of the partitioned holder was never taken over)`,
          );
        else if (!took)
          row.note(
            `the standby got node(s) ${[...new Set(got)].join(', ')} (freed by another holder), not node ${victimNode}: this run did not exercise the takeover`,
          );
        else row.note(`standby took over node ${victimNode} ${took.minTs + layout.epochMs - cutWall} ms after the cut`);
      }
      const after = segs.filter(
        (s) =>
          s.stream === victim.name && s.node === victimNode && s.maxTs + layout.epochMs > healWall + (leaf ? 0 : 1_000),
      );
      if (leaf && !after.length)
        row.liveness(`${victim.name} did not recover within ${afterHealMs} ms after its path healed`);
    } finally {
      for (const p of proxies) await p.close();
    }
  }
}
