// Scenario 0, the checker's own canary: two real generator processes are deliberately
// given the SAME node ID by hand (the classic Snowflake misconfiguration). The suite's
// analysis must report duplicates and overlapping node runs for them; if it does not, the
// checks every other row relies on are broken and this row fails.
import { analyze } from '../lib/analyze.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect } from '../lib/generators.mjs';
import { retryLiveness } from '../lib/retry.mjs';
import { runScenarioModule } from '../lib/run-scenario.mjs';
import { dist, sleep, tempDir } from '../lib/util.mjs';
import { checkClockStepJudge, checkEngineJudges, checkRunnerThreadFree, checkUuidTwins } from './selfcheck-judges.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'canary: two processes pinned to one node ID must be caught';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout, Row } = { ...(await import(dist.core)), Row: ctx.Row };
  const layout = Layout.from(LAYOUTS.fourSmallSeq);
  const row = new Row('selfcheck', 'twins, must be caught');
  add(row);
  const dir = tempDir('selfcheck');
  const gens = [0, 1].map((i) =>
    spawnGenerator(dir, `twin-${i}`, {
      layout: LAYOUTS.fourSmallSeq,
      node: { worker: 1 },
      durationMs: 500,
      waitGo: true,
      mode: 'fill',
      chunk: 64,
    }),
  );
  try {
    await waitReady(gens, 20_000);
    for (const g of gens) g.child.send('go');
    await Promise.all(gens.map((g) => g.child.waitExit(20_000)));
    collect(row, gens);
    const probe = new Row('probe', 'probe');
    await analyze(probe, gens, layout, { orderPromised: true });
    row.processes = 2;
    row.idsChecked = probe.idsChecked;
    row.duplicates = probe.duplicates; // expected here: the row passes only when they are found
    row.note(
      `the analysis found ${probe.duplicates} duplicate(s) and ${probe.details.overlapExamples?.length ?? 0}+ overlapping run(s) between the twins, as it must`,
    );
    if (!probe.duplicates)
      row.fail(
        'two processes issuing under one node ID at the same time produced no reported duplicate: the duplicate check is broken',
      );
    if (!probe.details.overlapExamples?.length)
      row.fail('the overlapping-node-run check did not fire for two holders of one node ID');
    row.details.expectedDuplicates = probe.duplicates;
    // The retry rule must never give a row with a duplicate a second chance: feed it the
    // probe (which found the twins' duplicates) plus a liveness miss, and a rerun that
    // would pass; the probe must still fail and must not have been re-run.
    probe.liveness('a deliberately injected liveness miss');
    let reran = false;
    const { rows: judged } = await retryLiveness([probe], async () => {
      reran = true;
      return [new Row(probe.scenario, probe.backend)];
    });
    if (reran || judged[0].pass)
      row.fail('a row with duplicates was re-run or passed after a re-run: the retry rule would hide a duplicate');
    else row.note('a row with an injected duplicate still fails: the retry rule re-runs liveness misses only');
    await checkTimeLimit(ctx, row);
    // The liveness judges of engine-faults and clock-steps against children whose behaviour is known.
    await checkEngineJudges(ctx, row);
    await checkClockStepJudge(ctx, row);
    await checkUuidTwins(ctx, row);
    await checkRunnerThreadFree(ctx, row);
    row.finish();
  } finally {
    for (const g of gens) if (g.child.running) await g.child.kill();
  }
}

/**
 * A row still running when its scenario hits the time limit must fail as NOT RUN (never a
 * pass with 0 IDs) and must not be re-run, while a row that finished keeps its result.
 */
async function checkTimeLimit(ctx, row) {
  const { Row } = ctx;
  let reran = false;
  const hang = {
    run: async (_ctx, add) => {
      const finished = new Row('probe-limit', 'finished');
      add(finished);
      finished.finish();
      add(new Row('probe-limit', 'still running'));
      await sleep(2_000);
    },
  };
  const produced = await runScenarioModule('probe-limit', hang, ctx, { timeoutMs: 100 });
  const { rows: judged } = await retryLiveness(produced, async () => {
    reran = true;
    return [];
  });
  const [finished, open] = ['finished', 'still running'].map((b) => judged.find((r) => r.backend === b));
  if (!finished?.pass) row.fail('a row that finished before its scenario hit the time limit lost its result');
  if (!open || open.pass || !open.cutShort || reran)
    row.fail(
      'a row cut short by the scenario time limit passed or was re-run: the runner would report unchecked IDs as a pass',
    );
  else row.note('a row cut short by the scenario time limit fails as NOT RUN and is not re-run');
}
