// Scenario 5, engine faults: while 4 holders issue through a real ZooKeeper, etcd or
// Redis, the server is SIGKILLed and restarted, then stalled with SIGSTOP, each time for
// longer than the lease TTL. Holders must stop issuing by their deadline (no ID stamped
// later than the fault + TTL until the engine is back) and recover on their own once it
// is, each within a bound derived from the lease settings, the driver's reconnect
// behaviour and the start-up times measured here; zero duplicates and no overlapping node
// runs across the merged output.
import { analyze, offThread, plainLayout } from '../lib/analyze.mjs';
import { LAYOUTS, holderDurationMs, spawnGenerator, waitReady, collect, lastMsg } from '../lib/generators.mjs';

export { holderDurationMs };
import { enginePause, engineRestart } from '../lib/procs.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { engineOf } from '../lib/backends.mjs';
import { clusterName, dist, pollUntil, sleep, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'engine SIGKILL + restart and SIGSTOP past the TTL under load';

/**
 * How long a registry client may take, once its engine answers again, before a
 * re-acquisition can reach it: the reconnect behaviour of the drivers in
 * packages/coordination/src/drivers with their default `connectTimeoutMs` (5000 ms; the
 * scenario sets none). `{ ms, how }`, `how` saying where the figure comes from.
 * @example await reconnectAllowance('redis', 2000); // { ms: 1000, how: 'Redis reconnect ≤ 1000 apart' }
 */
export async function reconnectAllowance(kind, ttlMs, connectTimeoutMs = 5_000) {
  if (kind === 'zookeeper') {
    // The session's own timing (zookeeper-timing.ts): reconnect attempts `spinDelay` apart,
    // each handshake cut short after `handshakeTimeoutMs`; a session that expired meanwhile
    // takes one more handshake (a new session). The harness's zoo.cfg has tickTime=500: the
    // server expires sessions (and their ephemeral nodes) on tick boundaries, up to a tick late.
    const { reconnectTiming } = await import(dist.zookeeperTiming);
    const { spinDelayMs: spin, handshakeTimeoutMs: handshake } = reconnectTiming(ttlMs, connectTimeoutMs);
    const tick = 500;
    return {
      ms: spin + 2 * handshake + tick,
      how: `ZooKeeper reconnect: spin delay ${spin} + 2 × handshake ${handshake} + session tick ${tick}`,
    };
  }
  // etcd.ts: gRPC max_reconnect_backoff_ms 1000; redis.ts: retryStrategy ≤ 1000 apart.
  if (kind === 'etcd') return { ms: 1_000, how: 'etcd gRPC reconnect backoff ≤ 1000' };
  if (kind === 'redis') return { ms: 1_000, how: 'Redis reconnect ≤ 1000 apart' };
  // postgres.ts / mysql.ts: a broken pooled connection is dropped and the next call connects.
  return { ms: 0, how: 'SQL pool reconnects on the next call 0' };
}

/**
 * Which holders were seen issuing an ID after `wall` (Unix ms), from the last progress or `done` report
 * each sent (`lastOkWall`): `{ all, waiting, exited }`, `waiting` the names of those still running that
 * have not (yet), `exited` those that ended without having. An exited holder never counts as issuing
 * again (the check used to count it, and printed 'every holder seen issuing again 0 ms after the engine
 * resumed' for four holders whose IDs said 'never').
 * @example seenIssuingAfter(gens, f.upWall).all; // true once every holder issued after the engine was back
 */
export function seenIssuingAfter(gens, wall) {
  const waiting = [];
  const exited = [];
  for (const g of gens) {
    const lastOk = Math.max(lastMsg(g, 'progress')?.lastOkWall ?? 0, lastMsg(g, 'done')?.lastOkWall ?? 0);
    if (lastOk > wall) continue;
    (g.child.running ? waiting : exited).push(g.name);
  }
  return { all: !waiting.length && !exited.length, waiting, exited };
}

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
  // The holders issue at least this long after each fault (the load between faults), and
  // past it until every holder issued again or its recovery bound (below) has passed.
  const runMs = Math.max(3_000, Math.floor((durationMs - 2 * outageMs) / 3));
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
    const spawnedAt = performance.now();
    for (let i = 0; i < holders; i++) {
      gens.push(
        spawnGenerator(dir, `engine-${backend}-${i}`, {
          url,
          cluster,
          registryOptions: { ...lease, holder: { address: `127.0.0.1:${7400 + i}` } },
          layout: LAYOUTS.sixteen,
          durationMs: holderDurationMs(ctx.P), // stopped by the parent
          mode: 'mixed',
          chunk: 256,
          chunkSleepMs: 1,
          retryUntilMs: 30_000,
        }),
      );
    }
    const ready = await waitReady(gens, 30_000);
    ready.forEach(
      (m, i) =>
        m.ev !== 'acquired' &&
        row.liveness(`${gens[i].name} did not acquire: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
    );
    if (!row.pass) return;
    // How long a process takes here from spawn to holding a node ID (this machine, now):
    // the allowance for a loaded machine running the holders (and the engine) late.
    const startupMs = performance.now() - spawnedAt;
    const reconnect = await reconnectAllowance(engine.kind, lease.ttlMs);
    // How soon after the engine is back every holder must issue again: the engine's own
    // restart time (a restarted engine serves its first requests about that slowly), the
    // TTL (claims and sessions of before the fault expire on the engine), the renewal
    // interval (the lease retries re-acquisition at most that far apart), the margin (the
    // floor of a claim not released cleanly is its mark + TTL + margin), the driver's
    // reconnect, 2 × the measured start-up and 1000 ms scheduling.
    const recoveryBound = (f) => {
      const ms =
        f.restartMs + lease.ttlMs + lease.renewIntervalMs + lease.marginMs + reconnect.ms + 2 * startupMs + 1_000;
      const how = `${f.kind === 'kill' ? `engine restart ${f.restartMs}` : 'resumed 0'} + TTL ${lease.ttlMs} + renewal ${lease.renewIntervalMs} + margin ${lease.marginMs} + ${reconnect.how} + 2 × start-up ${Math.round(startupMs)} + 1000 ms scheduling`;
      return { ms, how };
    };
    // Waits (bounded: at most to the recovery bound) until every holder reported an ID
    // issued after the engine was back (or none is left running that has not), and at least
    // `runMs`.
    const recover = async (f) => {
      const { ms } = recoveryBound(f);
      const upMono = performance.now() - (Date.now() - f.upWall);
      const settled = () => seenIssuingAfter(gens, f.upWall).waiting.length === 0;
      await pollUntil(settled, Math.max(0, f.upWall + ms - Date.now()), 50);
      const seen = seenIssuingAfter(gens, f.upWall);
      f.allIssuingAfterMs = seen.all ? Date.now() - f.upWall : null;
      await sleep(Math.max(0, upMono + runMs - performance.now()));
      const not = [
        ...seen.waiting.map((n) => `${n} still waiting`),
        ...seen.exited.map((n) => `${n} exited without`),
      ].join(', ');
      ctx.log(
        `engine-faults/${backend}: ${f.allIssuingAfterMs === null ? `not every holder seen issuing again (${not})` : `every holder seen issuing again ${f.allIssuingAfterMs} ms`} after the engine ${f.kind === 'kill' ? 'restarted' : 'resumed'} (bound ${Math.round(ms)} ms; judged from the IDs' timestamps at the end)`,
      );
    };
    const faults = [];
    await sleep(1_000);
    // 1. SIGKILL the engine, keep it down past the TTL, restart it.
    {
      const f = await engineRestart.inject(engine, outageMs);
      faults.push(Object.assign(f, { kind: 'kill', restartMs: f.upWall - f.endWall }));
      ctx.log(
        `engine-faults/${backend}: ${engine.kind} killed for ${f.endWall - f.effectiveWall} ms, back up after ${f.restartMs} ms`,
      );
      await recover(f);
    }
    // 2. SIGSTOP the engine past the TTL, then SIGCONT.
    {
      const f = await enginePause.inject(engine, outageMs);
      faults.push(Object.assign(f, { kind: 'pause', upWall: f.endWall, restartMs: 0 }));
      await recover(f);
    }
    const stopWall = Date.now();
    for (const g of gens) g.child.send('stop');
    await Promise.all(gens.map((g) => g.child.waitExit(20_000)));
    // A holder that ended on its own before the parent stopped it cannot show a recovery
    // after that: say so, instead of only 'never' below.
    for (const g of gens) {
      const done = lastMsg(g, 'done');
      if (done && done.stoppedBy !== 'stop')
        row.liveness(
          `${g.name} stopped issuing on its own (${done.stoppedBy}, after ${Math.round(done.elapsedMs)} ms, ${stopWall - done.wall} ms before the run ended): its recovery after a later fault is not measured`,
        );
    }
    row.processes = gens.length;
    row.details.faults = faults;
    collect(row, gens);
    await analyze(row, gens, layout, { orderPromised: true, allowReorderAcrossNodes: true });

    // Fencing: from fault + TTL until the engine was back, nobody may issue. Each holder's
    // recovery after each fault: its first ID stamped after the engine was back. (Scanned on a
    // worker thread, like analyze: other rows run on this one.)
    const recoveries = faults.map(() => []);
    const plain = plainLayout(layout);
    const scans = await Promise.all(
      gens.map((g) => offThread('scanFaults', { file: g.file, layout: plain, faults, ttlMs: lease.ttlMs })),
    );
    gens.forEach((g, gi) => {
      const { perFault, gapTicks } = scans[gi];
      faults.forEach((f, k) => {
        const { late, worst, recoveryMs } = perFault[k];
        if (late)
          row.fail(
            `${g.name} issued ${late} ID(s) up to ${worst} ms past its deadline while the engine was ${f.kind === 'kill' ? 'dead' : 'stalled'} (fault at ${f.effectiveWall}, TTL ${lease.ttlMs} ms)`,
          );
        recoveries[k].push({ name: g.name, ms: recoveryMs });
      });
      // How long this holder could not issue around each fault (its longest gap).
      row.stall(gapTicks);
    });
    // Every holder must have issued again within the bound; the slowest one is judged, each
    // one's time is printed beside it.
    faults.forEach((f, k) => {
      const list = recoveries[k];
      const worst = list.reduce((a, b) => (b.ms > a.ms ? b : a), list[0]);
      const each = list.map((r) => (Number.isFinite(r.ms) ? Math.round(r.ms) : 'never')).join(', ');
      const { ms, how } = recoveryBound(f);
      row.within(
        `every holder issued again after the engine ${f.kind === 'kill' ? 'restarted' : 'resumed'} (slowest ${worst?.name}; each: ${each} ms)`,
        worst ? worst.ms : Infinity,
        ms,
        { how },
      );
    });
  }
}
