// Scenario 1b, threads: in two processes (one node ID each, one waiting and one borrowing
// on sequence exhaustion), 4 worker threads share their process's node ID through the
// core's SharedGenerator at full speed, on a layout of 64 IDs per millisecond so that
// every thread races for the last sequence numbers of a tick all the time. No duplicate
// across all threads of both processes, each thread's stream strictly increasing, and a
// second plain Generator on a node ID already in use in the process refused.
import path from 'node:path';
import { analyze } from '../lib/analyze.mjs';
import { LAYOUTS } from '../lib/generators.mjs';
import { spawnNode } from '../lib/procs.mjs';
import { childScript, dist, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'worker threads sharing one node ID (SharedGenerator) at full speed';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.fourSmallSeq);
  const { durationMs, threads } = ctx.P.threads;
  const row = new ctx.Row('threads', 'SharedGenerator');
  add(row);
  const dir = tempDir('threads');
  const procs = ['wait', 'borrow'].map((onExhausted, p) => {
    const out = path.join(dir, `proc-${p}`);
    const child = spawnNode(`threads-${onExhausted}`, childScript('threads.mjs'), [
      JSON.stringify({
        layout: LAYOUTS.fourSmallSeq,
        node: { worker: p },
        threads,
        durationMs,
        out,
        generator: { onExhausted },
      }),
    ]);
    return { out, child, onExhausted };
  });
  try {
    await Promise.all(procs.map((p) => p.child.waitExit(durationMs + 30_000)));
    const files = [];
    for (const p of procs) {
      const done = p.child.messages.find((m) => m.ev === 'done');
      if (!done) {
        row.fail(`${p.child.name} crashed: ${JSON.stringify(p.child.exit)} ${p.child.stderr.slice(-800)}`);
        continue;
      }
      for (const r of done.results) {
        if (r.error) row.fail(`${p.child.name}: a worker thread died: ${r.error.slice(0, 600)}`);
        if (r.secondGenerator !== 'FLURRY_E_NODE_IN_USE')
          row.fail(
            `${p.child.name} thread ${r.index}: a second Generator on the node in use was ${r.secondGenerator}, not refused with FLURRY_E_NODE_IN_USE`,
          );
        row.addRefusals(r.refusals);
        row.stall(r.maxCallMs);
        files.push({ name: `${p.onExhausted}-t${r.index}`, file: `${p.out}.t${r.index}` });
      }
    }
    row.processes = procs.length;
    row.details.threadsPerProcess = threads;
    // Each thread's stream is strictly increasing; threads of one process share a node, so
    // their runs overlap by design: only duplicates and per-thread order are checked.
    const probe = new ctx.Row('threads', 'probe');
    await analyze(probe, files, layout, { orderPromised: true });
    row.idsChecked = probe.idsChecked;
    row.duplicates = probe.duplicates;
    row.decreasing = probe.decreasing;
    for (const f of probe.failures) if (!f.includes('overlapping node run')) row.fail(f);
    for (const r of Object.keys(row.refusals)) row.fail(`unexpected refusal ${r}`);
    row.finish();
  } finally {
    for (const p of procs) if (p.child.running) await p.child.kill();
  }
}
