// Runs one scenario module under its time limit and returns its rows. A row still running
// when the limit passes (or when the scenario crashes) did not check all its IDs: it is
// marked NOT RUN (`Row.cut`), a failure that is never re-run, instead of passing with 0 IDs.
import { Row } from './report.mjs';
import { TimeLimit, within } from './util.mjs';

/** A scenario that ran past its time limit. */
export class ScenarioTimeout extends TimeLimit {}

/**
 * Runs `mod.run(ctx, add)` within `timeoutMs` and returns the rows it produced, with rows left
 * unfinished by a timeout or crash cut short. `cleanup()` runs afterwards whatever happened.
 * @example const rows = await runScenarioModule('fleet', mod, ctx, { timeoutMs: 300_000, cleanup: killAll });
 */
export async function runScenarioModule(name, mod, ctx, { timeoutMs, cleanup = () => undefined }) {
  const ts = performance.now();
  const produced = [];
  try {
    await within(timeoutMs, `scenario ${name}`, () => mod.run(ctx, (row) => produced.push(row)), ScenarioTimeout);
  } catch (e) {
    const timedOut = e instanceof ScenarioTimeout;
    const open = produced.filter((r) => !r.done);
    for (const r of open)
      r.cut(
        timedOut
          ? `not run to completion: scenario ${name} hit its time limit of ${timeoutMs} ms while this row was running, so its IDs were not all checked`
          : `not run to completion: scenario ${name} crashed while this row was running: ${e?.stack ?? e}`,
      );
    if (!timedOut || !open.length) {
      const r = new Row(name, 'all');
      if (timedOut) r.cut(`not run to completion: ${e.message}`);
      else r.fail(`scenario crashed: ${e?.stack ?? e}`);
      produced.push(r);
    }
  } finally {
    await cleanup();
  }
  for (const r of produced) if (!r.durationMs) r.durationMs = performance.now() - ts;
  return produced;
}
