// Scenario, workers: `flurry serve --workers 4` on a layout of exactly 4 node IDs, under load
// from keep-alive connections; one worker is SIGSTOPped past its lease's TTL, a separate
// `flurry serve` (same layout and namespace, so the stopped worker's expired node is the only
// one it can get) takes the node over and issues, then the worker gets SIGCONT while the
// load goes on. Checked: the takeover succeeds (the lease expired), after SIGCONT the
// cluster answers no ID under the lost node (fencing: the stopped worker issues nothing
// under its old lease), no ID repeats across every answer of the cluster and the taker,
// IDs increase per connection and node, and SIGTERM drains every worker (exit 0).
import path from 'node:path';
import { Child } from '../lib/procs.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { clusterName, dist, pollUntil, root, sleep, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'flurry serve --workers 4: one worker SIGSTOPped past its TTL, its node taken over, SIGCONT';

/** Exactly 4 node IDs: the 4 workers hold them all, so a newcomer can only take an expired one. */
const FIELDS = 'timestamp:41,worker:2,sequence:12';

const workersTesting = path.join(root, 'packages/server/dist/testing/workers.js');

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { get, loadIds } = await import(workersTesting);
  const { freePort } = await import(dist.testing);
  const { workers: n, afterMs, backends } = ctx.P.workers;
  const ttlMs = ctx.P.lease.ttlMs;
  await perBackend(
    ctx,
    add,
    'workers',
    async (backend, row, gens) => {
      const dir = tempDir('workers');
      const url = await ctx.engines.url(backend);
      const cluster = clusterName('workers');
      const env = { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') };
      const serve = (name, port, extra) => {
        const child = new Child(
          name,
          process.execPath,
          [
            dist.serverCli,
            'serve',
            '--port',
            String(port),
            '--registry',
            url,
            '--cluster',
            cluster,
            '--allow-root',
            '--lease-ttl-ms',
            String(ttlMs),
            '--log-level',
            'warn',
            ...extra,
          ],
          { env },
        );
        gens.push({ name, file: path.join(dir, `${name}.none`), child });
        return child;
      };
      const table = async (port) => {
        const r = await get(port, '/v1/status');
        return r.status === 200 ? (JSON.parse(r.body).workers ?? []) : [];
      };
      const { Layout } = await import(dist.core);
      const layout = Layout.from(FIELDS);
      const port = await freePort();
      const c = serve('workers-cluster', port, ['--workers', String(n), '--fields', FIELDS]);
      const up = await pollUntil(async () => (await table(port)).filter((w) => w.ready).length === n, 30_000, 100);
      if (!up) throw new Error(`the ${n} workers did not become ready: ${c.stderr.slice(-800)}`);
      const victim = (await table(port))[1];

      // Load during the stop; it ends (stuck requests time out) before SIGCONT.
      const during = loadIds(port, { connections: 8, durationMs: ttlMs * 2 + 1_500, count: 20, layout });
      await sleep(500);
      process.kill(victim.pid, 'SIGSTOP');
      const stoppedAt = Date.now();
      let taker;
      let takerIds = [];
      try {
        await sleep(ttlMs + 500);
        const takerPort = await freePort();
        taker = serve('workers-taker', takerPort, ['--fields', FIELDS]);
        const took = await pollUntil(async () => (await get(takerPort, '/readyz')).status === 200, 30_000, 100);
        if (!took)
          row.fail(
            `node ${JSON.stringify(victim.node)} was not taken over after its worker stopped: ${taker.stderr.slice(-600)}`,
          );
        else {
          const got = JSON.parse((await get(takerPort, '/readyz')).body).node;
          if (JSON.stringify(got) !== JSON.stringify(victim.node))
            row.fail(
              `the taker got node ${JSON.stringify(got)}, not the stopped worker's ${JSON.stringify(victim.node)}`,
            );
          row.within('takeover of the stopped worker’s node after SIGSTOP', Date.now() - stoppedAt, ttlMs * 6, {
            min: ttlMs - 500,
            how: 'the lease TTL (the registry grants the node only once it expired)',
          });
          takerIds = (await loadIds(takerPort, { connections: 2, durationMs: 500, count: 20, layout })).ids;
        }
        await during;
      } finally {
        process.kill(victim.pid, 'SIGCONT');
      }
      const a = await during;
      const b = await loadIds(port, { connections: 12, durationMs: afterMs, count: 20, layout });
      const lostNode = JSON.stringify(victim.node);
      const underLost = b.ids.filter((id) => {
        const d = layout.decode(id);
        return (
          JSON.stringify(Object.fromEntries(layout.nodeFields.map((f) => [f.name, d.fields[f.name]]))) === lostNode
        );
      }).length;
      if (underLost > 0) row.fail(`${underLost} IDs answered after SIGCONT under the lost node ${lostNode}`);
      const all = [...a.ids, ...b.ids, ...takerIds];
      const seen = new Set();
      let dups = 0;
      for (const id of all) {
        if (seen.has(id)) dups++;
        seen.add(id);
      }
      row.idsChecked = all.length;
      row.duplicates = dups;
      row.decreasing = a.decreases + b.decreases;
      if (dups > 0) row.fail(`${dups} duplicate IDs across the cluster and the taker`);
      if (row.decreasing > 0) row.fail(`${row.decreasing} IDs not increasing per connection and node`);
      if (b.ids.length === 0) row.liveness('the cluster answered no ID after SIGCONT');
      // /readyz answers for the whole service: ready with n-1 workers (the resumed one has no free node).
      let readyz = [];
      for (let i = 0; i < 2 * n; i++) {
        const r = await get(port, '/readyz');
        readyz.push(r.status === 200 ? JSON.parse(r.body).workers : { status: r.status });
      }
      readyz = [...new Set(readyz.map((x) => JSON.stringify(x)))];
      if (readyz.length !== 1 || readyz[0] !== JSON.stringify({ ready: n - 1, total: n }))
        row.fail(
          `/readyz after SIGCONT answered ${readyz.join(', ')}; expected 200 with ${n - 1} of ${n} workers ready`,
        );
      const after = await table(port);
      const back = after.find((w) => w.pid === victim.pid);
      row.note(
        `victim worker ${victim.slot} (node ${lostNode}) after SIGCONT: ${back ? `${back.state}, node ${JSON.stringify(back.node)}` : 'gone'}; refusals during ${JSON.stringify(a.failures)}, after ${JSON.stringify(b.failures)}`,
      );
      row.addRefusals(Object.fromEntries(Object.entries(b.failures).map(([k, v]) => [`HTTP ${k}`, v])));
      row.processes = n + 2;
      for (const [name, child] of [
        ['cluster', c],
        ['taker', taker],
      ]) {
        if (!child) continue;
        child.signal('SIGTERM');
        const e = await child.waitExit(30_000);
        if (e.code !== 0) row.fail(`the ${name} did not drain cleanly on SIGTERM: ${JSON.stringify(e)}`);
      }
    },
    { backends: ctx.backends.filter((b) => backends.includes(b)) },
  );
}
