// Scenario 4, crash and pause: on a registry with 4 node IDs, 4 holders issue while 2
// standbys wait for a free ID. Each cycle SIGKILLs one holder and SIGSTOPs another for
// longer than the lease TTL, then SIGCONTs it; the standbys take over both node IDs. The
// paused holder must notice on waking that its deadline passed and issue nothing under its
// old node ID; the new holders must start above the old holders' high-water marks.
// Checked: no duplicate across the merged output, no two runs of one node ID overlapping
// in time, and that the takeovers really happened. Every other child issues UUIDv7 in the
// same slot space (lib/uuids.mjs): takeovers cross the kinds, and the UUIDs are checked as
// (ms, node, sequence) keys beside the IDs.
//
// Leaf's scheme never reclaims a worker ID (it does not track liveness: an ID belongs to
// an ip:port forever), so on zookeeper+leaf the killed holder is replaced by a process
// with the same ip:port, which must get the same worker ID back and start above its mark.
import { analyze } from '../lib/analyze.mjs';
import { LAYOUTS, fileIoFor, spawnGenerator, waitReady, collect, lastMsg } from '../lib/generators.mjs';
import { holderKill, holderPause } from '../lib/procs.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { uuidFormatFor } from '../lib/uuids.mjs';
import { clusterName, dist, pollUntil, sleep, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'SIGKILL and SIGSTOP of holders past the TTL while standbys take over';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.four);
  const { slots, processes, durationMs, cycles = 1 } = ctx.P.crash;
  const lease = ctx.P.lease;
  const pauseMs = lease.ttlMs + 1_500;
  const cycleMs = Math.floor((durationMs - 2_000) / cycles);

  await perBackend(
    ctx,
    add,
    'crash-pause',
    async (backend, row, gens) => {
      const leaf = backend === 'zookeeper+leaf';
      const dir = tempDir('crash');
      const url = await ctx.engines.url(backend);
      const cluster = clusterName('crash');
      let n = 0;
      const start = (role, address, extra = {}) => {
        const i = n++;
        return spawnGenerator(dir, `crash-${backend}-${i}-${role}`, {
          url,
          cluster,
          registryOptions: { ...lease, holder: { address }, ...fileIoFor(i) },
          layout: LAYOUTS.four,
          durationMs: durationMs + 120_000, // stopped by the parent; ends by itself if the parent is held up
          mode: 'mixed',
          chunk: 256,
          chunkSleepMs: 1,
          retryUntilMs: durationMs + 60_000,
          retryEveryMs: 50,
          // Every other child issues UUIDv7 in the same slot space (lib/uuids.mjs).
          ...(i % 2 === 1 ? { uuid: uuidFormatFor(layout) } : {}),
          ...extra,
        });
      };
      // Holders first, so they own the 4 node IDs; then the standbys.
      const holders = Array.from({ length: slots }, (_, i) => start('holder', `127.0.0.1:${7100 + i}`));
      gens.push(...holders);
      const spawnedAt = performance.now();
      const ready = await waitReady(holders, 30_000);
      ready.forEach(
        (m, i) =>
          m.ev !== 'acquired' &&
          row.liveness(`${holders[i].name} did not acquire: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
      );
      if (!row.pass) return;
      // How long a process takes here from spawn to holding a node ID (this machine, now):
      // part of how soon a replacement can take over.
      const startupMs = performance.now() - spawnedAt;
      const floorWaitMs = 1_000; // the leased generator's default highWaterWaitMs
      const acquireRetryMs = 50;
      const takeoverBoundMs =
        lease.ttlMs + lease.renewIntervalMs + lease.marginMs + floorWaitMs + acquireRetryMs + 2 * startupMs + 1_000;
      const takeoverHow = `TTL ${lease.ttlMs} + renewal ${lease.renewIntervalMs} + margin ${lease.marginMs} + floor wait ${floorWaitMs} + retry ${acquireRetryMs} + 2 × start-up ${Math.round(startupMs)} + 1000 ms scheduling`;
      if (!leaf) for (let i = slots; i < processes; i++) gens.push(start('standby', `127.0.0.1:${7100 + i}`));

      const t0 = performance.now();
      const faults = [];
      const victims = new Set();
      const killed = new Set();
      const nodeOfMsg = (m) => (m?.node ? Object.values(m.node)[0] : undefined);
      // Where a child stands now: its last lease event after `acquired` tells whether it lost
      // its node ID (and which one it holds after a re-acquisition).
      // `since`: the wall time it took that node ID.
      const current = (g) => {
        let holding = g.child.messages.some((m) => m.ev === 'acquired');
        let node = nodeOfMsg(lastMsg(g, 'acquired'));
        let since = lastMsg(g, 'acquired')?.wall ?? 0;
        for (const m of g.child.messages) {
          if (m.ev === 'lost') holding = false;
          if (m.ev === 'reacquired' || m.ev === 'node-changed') {
            holding = true;
            if (m.node) node = nodeOfMsg(m);
            since = m.wall;
          }
        }
        return { holding, node, since };
      };
      const holdingNow = () => gens.filter((g) => g.child.running && !victims.has(g.name) && current(g).holding);
      // Each cycle needs 2 live holders. Right after start-up (or after the previous
      // cycle's takeovers) a holder may still be acquiring, or re-acquiring a lease it lost
      // on a loaded machine: wait for 2 until the takeover bound (the same TTL, renewal,
      // margin, floor wait, retry and measured start-up a re-acquisition takes), and run
      // the later cycles that much later.
      let late = 0;
      for (let c = 0; c < cycles; c++) {
        await sleep(Math.max(0, t0 + 1_000 + late + c * cycleMs - performance.now()));
        const waitFrom = performance.now();
        const two = await pollUntil(() => holdingNow().length >= 2, takeoverBoundMs, 25);
        const waited = performance.now() - waitFrom;
        late += waited;
        const [k, p] = holdingNow();
        row.within(
          `cycle ${c}: waited for 2 live holders to kill and pause (${holdingNow().length} holding; fewer is a miss)`,
          two && k && p ? waited : Infinity,
          takeoverBoundMs,
          { how: takeoverHow },
        );
        if (!k || !p) break; // a liveness miss, reported just above ("never")
        victims.add(k.name);
        killed.add(k.name);
        const { node: kNode, since: kSince } = current(k);
        const kill = await holderKill.inject(k.child);
        faults.push({ kind: kill.name, name: k.name, node: kNode, since: kSince, wall: kill.effectiveWall });
        // A replacement: on Leaf the same ip:port restarted; elsewhere one more standby.
        gens.push(
          start(leaf ? 'restarted' : 'standby', leaf ? k.cfg.registryOptions.holder.address : `127.0.0.1:${7200 + c}`),
        );
        await sleep(500);
        victims.add(p.name);
        const { node: pNode, since: pSince } = current(p);
        const pause = await holderPause.inject(p.child, pauseMs);
        faults.push({
          kind: pause.name,
          name: p.name,
          node: pNode,
          since: pSince,
          wall: pause.effectiveWall,
          resumedWall: pause.endWall,
          ms: pauseMs,
        });
        victims.delete(p.name); // a resumed process may hold again once it has a valid lease
      }
      // Run at least `durationMs`, and past it until every fault's node was taken over by
      // another process (seen from its `ready`/re-acquisition report) or the takeover bound
      // has passed, plus a moment for the new holder's IDs to reach its file.
      // A paused holder that wakes past its TTL may also win its own node ID back (its old
      // lease was declared lost first): that is a recovery too, judged the same way.
      const reheldBySelf = (f) => {
        if (f.kind !== 'SIGSTOP') return null;
        const g = gens.find((x) => x.name === f.name);
        const m = g?.child.messages.find(
          (x) => x.ev === 'reacquired' && x.wall > f.wall && (!x.node || nodeOfMsg(x) === f.node),
        );
        return m ? m.wall - f.wall : null;
      };
      // By another process: its report of taking the node ID, after the victim took it (a
      // starved victim may have lost it before the fault without having said so yet).
      const takenOver = (f) =>
        reheldBySelf(f) !== null ||
        gens.some(
          (g) =>
            g.name !== f.name &&
            g.child.messages.some(
              (m) =>
                (m.ev === 'acquired' && nodeOfMsg(m) === f.node && m.wall > f.since) ||
                ((m.ev === 'reacquired' || m.ev === 'node-changed') &&
                  m.node &&
                  nodeOfMsg(m) === f.node &&
                  m.wall > f.since),
            ),
        );
      const expected = faults.filter((f) => !(leaf && f.kind === 'SIGSTOP'));
      const lastFaultWall = Math.max(0, ...faults.map((f) => f.wall));
      // Capped at half the scenario's time limit, so that a scenario on a very loaded machine
      // still ends within it. (It was t0 + 2 × durationMs, shorter than the takeover bound
      // itself once start-up is slow: a takeover could then be judged missing before its
      // bound had passed.)
      const extendUntil = Math.min(
        lastFaultWall + takeoverBoundMs,
        Date.now() - performance.now() + t0 + ctx.P.scenarioTimeoutMs / 2,
      );
      await sleep(Math.max(0, t0 + durationMs - performance.now()));
      while (!expected.every(takenOver) && Date.now() < extendUntil) await sleep(50);
      await sleep(500);
      for (const g of gens) if (g.child.running) g.child.send('stop');
      await Promise.all(gens.map((g) => g.child.waitExit(20_000)));
      row.processes = gens.length;
      row.details.faults = faults;
      collect(row, gens, { killedOnPurpose: killed });
      const { segs } = await analyze(row, gens, layout, {
        orderPromised: true,
        allowReorderAcrossNodes: true,
      });
      // Every fault must have been followed by a takeover of the victim's node ID (on Leaf:
      // by the restarted process for a kill; a paused Leaf holder simply resumes).
      for (const f of faults) {
        if (leaf && f.kind === 'SIGSTOP') continue;
        const epoch = layout.epochMs;
        // The first run of another process under the victim's node that goes on past the
        // fault. On a loaded machine the victim may have lost the node before the fault (its
        // lease expired while it was starved, not yet reported): that run then began before
        // the fault, and the takeover counts as 0 ms. (The overlap check above makes sure the
        // two never issued under the node at the same time.)
        const after = segs
          .filter((s) => s.stream !== f.name && s.node === f.node && s.maxTs + epoch > f.wall)
          .sort((a, b) => a.minTs - b.minTs)[0];
        const other = after ? Math.max(0, after.minTs + epoch - f.wall) : Infinity;
        const self = reheldBySelf(f) ?? Infinity;
        const before = after !== undefined && after.minTs + epoch <= f.wall ? ' (already before the fault)' : '';
        const by =
          other <= self
            ? after
              ? ` by ${after.stream}${before}`
              : ''
            : ` back by ${f.name} itself, after its lease was lost`;
        row.within(`${f.kind} of ${f.name} (node ${f.node}): taken over${by}`, Math.min(other, self), takeoverBoundMs, {
          how: takeoverHow,
        });
      }
      // The paused holders, once resumed, must not issue under their old node ID while
      // someone else holds it (the overlap check above); report what they did instead.
      for (const f of faults.filter((x) => x.kind === 'SIGSTOP')) {
        const g = gens.find((x) => x.name === f.name);
        const done = lastMsg(g, 'done');
        if (done)
          row.note(
            `${f.name} after its ${f.ms} ms pause: refusals ${JSON.stringify(done.refusals)}, lease events ${JSON.stringify(done.leaseEvents)}`,
          );
      }
    },
    { parallel: true },
  );
}
