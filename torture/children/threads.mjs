#!/usr/bin/env node
// A torture child: one node ID shared by several worker threads through the core's
// SharedGenerator (state in a SharedArrayBuffer, advanced by compare-and-swap). Every
// thread issues at full speed (next, batch and fill in turn) and writes its IDs to its own
// binary file `<out>.t<i>` in the order it got them. Each thread also tries to open a
// second, plain Generator on the same node ID, which the core must refuse
// (FLURRY_E_NODE_IN_USE).
// Usage: node threads.mjs '<json: { layout, node, threads, durationMs, out, generator }>'
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import { openSync, writeSync, closeSync } from 'node:fs';

const core = await import(new URL('../../packages/core/dist/index.js', import.meta.url).href);

if (isMainThread) {
  const cfg = JSON.parse(process.argv[2]);
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
  setTimeout(() => {
    say({ ev: 'error', where: 'lifetime', message: 'threads lifetime bound exceeded' });
    process.exit(3);
  }, cfg.durationMs + 30_000).unref();
  const shared = new core.SharedGenerator({ layout: cfg.layout, node: cfg.node, ...(cfg.generator ?? {}) });
  const results = await Promise.all(
    Array.from(
      { length: cfg.threads },
      (_, i) =>
        new Promise((resolve) => {
          const w = new Worker(new URL(import.meta.url), {
            workerData: {
              state: shared.state,
              out: `${cfg.out}.t${i}`,
              durationMs: cfg.durationMs,
              layout: cfg.layout,
              node: cfg.node,
              index: i,
            },
          });
          w.once('message', (m) => resolve(m));
          w.once('error', (e) => resolve({ error: String(e?.stack ?? e) }));
        }),
    ),
  );
  shared.close();
  say({ ev: 'done', results });
  process.exit(0);
} else {
  const { state, out, durationMs, layout, node, index } = workerData;
  const gen = core.SharedGenerator.fromState(state);
  let secondGenerator = 'allowed';
  try {
    const g2 = new core.Generator({ layout, node });
    g2.close();
  } catch (e) {
    secondGenerator = e?.code ?? String(e);
  }
  const fd = openSync(out, 'a');
  const buf = new BigUint64Array(256);
  const bytes = new Uint8Array(buf.buffer);
  const refusals = {};
  let issued = 0;
  let round = index;
  const until = performance.now() + durationMs;
  let maxCallMs = 0;
  while (performance.now() < until) {
    let n = 0;
    const t0 = performance.now();
    try {
      const m = round++ % 3;
      if (m === 0) n = gen.fill(buf, 0, 1 + (round % buf.length));
      else if (m === 1) {
        const a = gen.batch(1 + (round % 100));
        for (let i = 0; i < a.length; i++) buf[i] = a[i];
        n = a.length;
      } else for (; n < 64; n++) buf[n] = gen.next();
    } catch (e) {
      const c = e?.code ?? `UNCODED:${e?.message}`;
      refusals[c] = (refusals[c] ?? 0) + 1;
    }
    const ms = performance.now() - t0;
    if (ms > maxCallMs) maxCallMs = ms;
    if (n) writeSync(fd, bytes, 0, n * 8);
    issued += n;
  }
  closeSync(fd);
  parentPort.postMessage({ index, issued, refusals, secondGenerator, maxCallMs, stats: gen.stats });
}
