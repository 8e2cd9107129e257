// Boilerplate shared by scenarios: one report row per backend, timed, with every child
// the body started killed at the end whatever happened.
import { ALL_BACKENDS } from './backends.mjs';
import { keepLogs, saveFailureLogs } from './generators.mjs';

/**
 * Runs `body(backend, row, gens)` for each backend (sequentially, or all at once when
 * `parallel`); `gens` is an array the body pushes its children into so they are always
 * killed afterwards. A body that throws fails its row with the error.
 * @example await perBackend(ctx, add, 'crash-pause', async (backend, row, gens) => {}, { parallel: true });
 */
export async function perBackend(ctx, add, scenario, body, { parallel = false, backends = ctx.backends } = {}) {
  const one = async (backend) => {
    const row = new ctx.Row(scenario, backend);
    add(row);
    const gens = [];
    const t0 = performance.now();
    try {
      await body(backend, row, gens);
      row.finish();
    } catch (e) {
      row.fail(`crashed: ${e?.stack ?? e}`);
      row.finish();
    } finally {
      for (const g of gens) if (g.child.running) await g.child.kill();
      keepLogs(gens);
      saveFailureLogs(row, gens);
      row.durationMs = performance.now() - t0;
      ctx.log(
        `${scenario}/${backend}: ${row.idsChecked.toLocaleString('en-US')} IDs, ${row.duplicates} duplicates, ${row.pass ? 'pass' : 'FAIL'}`,
      );
    }
  };
  const list = backends.filter((b) => ALL_BACKENDS.includes(b) && (ctx.wants?.(b) ?? true));
  if (parallel) await Promise.all(list.map(one));
  else for (const b of list) await one(b);
}
