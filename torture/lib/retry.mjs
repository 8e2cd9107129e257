// Safety and liveness apart: a row that broke a safety promise (a duplicate, a decreasing
// ID, two holders of one node ID, an ID past a fencing deadline) fails for good; a row that
// missed only a liveness bound (a stall, a takeover, a recovery) is run once more on its
// own, and the report keeps both attempts. A second miss fails it.

/**
 * Applies the one-retry rule to a scenario's rows. `rerun(backends)` runs the scenario
 * again narrowed to those rows and resolves to the rows it produced. Returns the final
 * rows (in place of each retried row its second attempt, carrying the first in
 * `attempts`) and the names of the rows that were re-run.
 * @example const { rows, retried } = await retryLiveness(produced, (b) => runScenario(name, (x) => b.has(x)));
 */
export async function retryLiveness(produced, rerun) {
  const out = [...produced];
  const retry = produced.filter((r) => !r.pass && r.safe && r.cutShort === null && r.backend !== 'all');
  if (!retry.length) return { rows: out, retried: [] };
  const want = new Set(retry.map((r) => r.backend));
  const again = await rerun(want);
  for (const first of retry) {
    const second = again.find((r) => r.scenario === first.scenario && r.backend === first.backend);
    if (!second) {
      first.liveness('the re-run did not produce this row');
      continue;
    }
    second.attempts = [first.toJSON()];
    second.note(`2nd attempt (the 1st missed: ${first.livenessMisses.join('; ').slice(0, 400)})`);
    out[out.indexOf(first)] = second;
  }
  // A safety failure in any row of the re-run counts too.
  for (const r of again) if (!r.safe && !out.includes(r)) out.push(r);
  return { rows: out, retried: retry.map((r) => `${r.scenario}/${r.backend}`) };
}
