// Scenario 4, crash and pause: on a registry with 4 node IDs, 4 holders issue while 2
// standbys wait for a free ID. Each cycle SIGKILLs one holder and SIGSTOPs another for
// longer than the lease TTL, then SIGCONTs it; the standbys take over both node IDs. The
// paused holder must notice on waking that its deadline passed and issue nothing under its
// old node ID; the new holders must start above the old holders' high-water marks.
// Checked: no duplicate across the merged output, no two runs of one node ID overlapping
// in time, and that the takeovers really happened.
//
// Leaf's scheme never reclaims a worker ID (it does not track liveness: an ID belongs to
// an ip:port forever), so on zookeeper+leaf the killed holder is replaced by a process
// with the same ip:port, which must get the same worker ID back and start above its mark.
import { analyze } from '../lib/analyze.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect, lastMsg } from '../lib/generators.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { clusterName, dist, sleep, tempDir } from '../lib/util.mjs';

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
      const start = (role, address, extra = {}) =>
        spawnGenerator(dir, `crash-${backend}-${n++}-${role}`, {
          registry: url,
          cluster,
          registryOptions: { ...lease, holder: { address } },
          layout: LAYOUTS.four,
          durationMs: durationMs + 30_000, // stopped by the parent
          mode: 'mixed',
          chunk: 256,
          chunkSleepMs: 1,
          retryAcquire: true,
          acquireTimeoutMs: durationMs + 10_000,
          acquireRetryMs: 50,
          ...extra,
        });
      // Holders first, so they own the 4 node IDs; then the standbys.
      const holders = Array.from({ length: slots }, (_, i) => start('holder', `127.0.0.1:${7100 + i}`));
      gens.push(...holders);
      const ready = await waitReady(holders, 30_000);
      ready.forEach(
        (m, i) =>
          m.ev !== 'ready' &&
          row.fail(`${holders[i].name} did not acquire: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
      );
      if (!row.pass) return;
      if (!leaf) for (let i = slots; i < processes; i++) gens.push(start('standby', `127.0.0.1:${7100 + i}`));

      const t0 = performance.now();
      const faults = [];
      const victims = new Set();
      const killed = new Set();
      const nodeOfMsg = (m) => (m?.node ? Object.values(m.node)[0] : undefined);
      // Where a child stands now: its last lease event after `ready` tells whether it lost
      // its node ID (and which one it holds after a re-acquisition).
      const current = (g) => {
        let holding = g.child.messages.some((m) => m.ev === 'ready');
        let node = nodeOfMsg(lastMsg(g, 'ready'));
        for (const m of g.child.messages) {
          if (m.ev !== 'lease') continue;
          if (m.type === 'lost') holding = false;
          if (m.type === 'reacquired' || m.type === 'node-changed') {
            holding = true;
            if (m.node) node = nodeOfMsg(m);
          }
        }
        return { holding, node };
      };
      const holdingNow = () => gens.filter((g) => g.child.running && !victims.has(g.name) && current(g).holding);
      for (let c = 0; c < cycles; c++) {
        await sleep(Math.max(0, t0 + 1_000 + c * cycleMs - performance.now()));
        const [k, p] = holdingNow();
        if (!k || !p) {
          row.fail(`cycle ${c}: fewer than 2 live holders to kill and pause`);
          break;
        }
        victims.add(k.name);
        killed.add(k.name);
        const kNode = current(k).node;
        await k.child.kill();
        faults.push({ kind: 'SIGKILL', name: k.name, node: kNode, wall: Date.now() });
        // A replacement: on Leaf the same ip:port restarted; elsewhere one more standby.
        gens.push(
          start(leaf ? 'restarted' : 'standby', leaf ? k.cfg.registryOptions.holder.address : `127.0.0.1:${7200 + c}`),
        );
        await sleep(500);
        victims.add(p.name);
        const pNode = current(p).node;
        p.child.signal('SIGSTOP');
        const pausedAt = Date.now();
        await sleep(pauseMs);
        p.child.signal('SIGCONT');
        faults.push({
          kind: 'SIGSTOP',
          name: p.name,
          node: pNode,
          wall: pausedAt,
          resumedWall: Date.now(),
          ms: pauseMs,
        });
        victims.delete(p.name); // a resumed process may hold again once it has a valid lease
      }
      await sleep(Math.max(0, t0 + durationMs - performance.now()));
      for (const g of gens) if (g.child.running) g.child.send('stop');
      await Promise.all(gens.map((g) => g.child.waitExit(20_000)));
      row.processes = gens.length;
      row.details.faults = faults;
      collect(row, gens, { killedOnPurpose: killed });
      const { segs } = analyze(row, gens, layout, { orderPromised: true, allowReorderAcrossNodes: true });
      // Every fault must have been followed by a takeover of the victim's node ID (on Leaf:
      // by the restarted process for a kill; a paused Leaf holder simply resumes).
      for (const f of faults) {
        if (leaf && f.kind === 'SIGSTOP') continue;
        const epoch = layout.epochMs;
        const after = segs.find((s) => s.stream !== f.name && s.node === f.node && s.minTs + epoch > f.wall);
        if (!after)
          row.fail(
            `${f.kind} of ${f.name} (node ${f.node}): no other process issued under node ${f.node} afterwards (no takeover within the run)`,
          );
        else
          row.note(
            `${f.kind} ${f.name}: node ${f.node} taken over by ${after.stream} ${after.minTs + epoch - f.wall} ms after the fault`,
          );
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
