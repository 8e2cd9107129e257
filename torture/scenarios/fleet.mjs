// Scenario 1, fleet: 16 generator processes per registry backend take a node ID each from
// a registry that has exactly 16, then issue at full speed for a fixed time. The union of
// all their IDs must hold no duplicate, no two processes may issue under one node ID, and
// each process's stream must be strictly increasing. Every fourth process issues UUIDv7
// instead (leasedUuidGenerator, in the same slot space: node IDs of the layout's width),
// checked beside the IDs (lib/uuids.mjs).
import { analyze } from '../lib/analyze.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect } from '../lib/generators.mjs';
import { clusterName, dist, tempDir, removeTempDir } from '../lib/util.mjs';
import { fileIoFor, keepLogs, saveFailureLogs } from '../lib/generators.mjs';
import { uuidFormatFor } from '../lib/uuids.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = '16 processes per backend issuing at full speed';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.sixteen);
  const { processes, durationMs } = ctx.P.fleet;
  const modes = ['fill', 'next', 'mixed', 'fill'];
  for (const backend of ctx.backends.filter((b) => ctx.wants(b))) {
    const row = new ctx.Row('fleet', backend);
    add(row);
    const t0 = performance.now();
    row.processes = processes;
    const dir = tempDir('fleet');
    let gens = [];
    try {
      const url = await ctx.engines.url(backend);
      const cluster = clusterName('fleet');
      gens = Array.from({ length: processes }, (_, i) =>
        spawnGenerator(dir, `fleet-${backend}-${i}`, {
          url,
          cluster,
          // Leaf's scheme keys worker IDs by ip:port, so each process gets an address.
          registryOptions: { ...ctx.P.lease, holder: { address: `127.0.0.1:${7000 + i}` }, ...fileIoFor(i) },
          layout: LAYOUTS.sixteen,
          waitGo: true,
          durationMs,
          mode: modes[i % modes.length],
          ...(i % 4 === 3 ? { uuid: uuidFormatFor(layout) } : {}),
        }),
      );
      const ready = await waitReady(gens, 45_000);
      const slots = new Map();
      ready.forEach((m, i) => {
        if (m.ev !== 'acquired')
          row.liveness(
            `${gens[i].name} did not acquire a node ID: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`.trim(),
          );
        else {
          // UUID children report { node: n }, Snowflake ones { worker: n }: one slot space.
          const key = JSON.stringify(Object.values(m.node ?? {}));
          if (slots.has(key)) row.fail(`${gens[i].name} and ${slots.get(key)} were both granted node ${key}`);
          slots.set(key, gens[i].name);
        }
      });
      for (const g of gens) g.child.send('go');
      await Promise.all(gens.map((g) => g.child.waitExit(durationMs + 30_000)));
      collect(row, gens);
      await analyze(row, gens, layout, { orderPromised: true, allowReorderAcrossNodes: false });
      for (const g of gens) {
        const done = g.child.messages.find((m) => m.ev === 'done');
        if (done && done.issued === 0) row.liveness(`${g.name} issued no ID in ${durationMs} ms`);
      }
      if (row.details.streams)
        row.details.idsPerProcess = {
          min: Math.min(...row.details.streams.map((s) => s.ids)),
          max: Math.max(...row.details.streams.map((s) => s.ids)),
        };
      row.finish();
    } catch (e) {
      row.fail(`crashed: ${e?.stack ?? e}`);
      row.finish();
    } finally {
      for (const g of gens) if (g.child.running) await g.child.kill();
      keepLogs(gens);
      saveFailureLogs(row, gens);
      removeTempDir(dir);
      row.durationMs = performance.now() - t0;
    }
    ctx.log(`fleet/${backend}: ${row.idsChecked.toLocaleString('en-US')} IDs, ${row.duplicates} duplicates`);
  }
}
