// Scenario 3, restart behind the clock: the 4 holders of a 4-ID registry issue, are all
// SIGKILLed, and two new processes start with their wall clock set well behind the last
// IDs issued (libfaketime). One may wait long enough (highWaterWaitMs) and must wait until
// its clock passes the floor, then issue only above every earlier ID of its node ID; the
// other may wait only briefly and must refuse (FLURRY_E_CLOCK_BEHIND_HIGH_WATER) without
// issuing anything at or below the mark. Holders 1 and 3 and the waiting restart issue
// UUIDv7 in the same slot space (lib/uuids.mjs), so a restart may take over a node ID the
// other kind held: its floor is the node's mark, whatever issued under it.
import path from 'node:path';
import { analyze } from '../lib/analyze.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect, lastMsg } from '../lib/generators.mjs';
import { LIB, clockStep, faketimeAvailable, faketimeEnv, holderKill, setOffset } from '../lib/procs.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { clusterName, dist, tempDir } from '../lib/util.mjs';
import { uuidFormatFor } from '../lib/uuids.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'killed holders restarted with their clock behind their last IDs';
const BEHIND = 'FLURRY_E_CLOCK_BEHIND_HIGH_WATER';

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.four);
  const { firstRunMs, behindMs } = ctx.P.restart;
  const lease = ctx.P.lease;
  if (!faketimeAvailable()) {
    const row = new ctx.Row('restart-behind', 'all');
    row.fail(`libfaketime is missing (${LIB}): apt-get install faketime`);
    row.finish();
    add(row);
    return;
  }
  await perBackend(
    ctx,
    add,
    'restart-behind',
    async (backend, row, gens) => {
      const dir = tempDir('restart');
      const clockFile = path.join(dir, 'clock');
      setOffset(clockFile, 0);
      const env = faketimeEnv(clockFile);
      const url = await ctx.engines.url(backend);
      const cluster = clusterName('restart');
      const base = (address, extra) => ({
        url,
        cluster,
        registryOptions: { ...lease, holder: { address } },
        layout: LAYOUTS.four,
        mode: 'mixed',
        chunk: 256,
        ...extra,
      });
      const first = Array.from({ length: 4 }, (_, i) =>
        spawnGenerator(
          dir,
          `restart-${backend}-first-${i}`,
          base(`127.0.0.1:${7300 + i}`, {
            durationMs: 60_000,
            chunkSleepMs: 1,
            ...(i % 2 === 1 ? { uuid: uuidFormatFor(layout) } : {}),
          }),
          { env },
        ),
      );
      gens.push(...first);
      const ready = await waitReady(first, 30_000);
      ready.forEach(
        (m, i) =>
          m.ev !== 'acquired' &&
          row.liveness(`${first[i].name} did not acquire: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
      );
      if (!row.pass) return;
      await new Promise((r) => setTimeout(r, firstRunMs));
      await Promise.all(first.map((g) => holderKill.inject(g.child)));
      const killedAt = Date.now();
      // The machine's clock is now set back: both restarts see it behind their node's mark.
      const waitBound = behindMs + lease.ttlMs + lease.marginMs + 10_000;
      let waiter, refuser;
      await clockStep.inject({ file: clockFile, ms: -behindMs }, async () => {
        waiter = spawnGenerator(
          dir,
          `restart-${backend}-waits`,
          base('127.0.0.1:7300', {
            registryOptions: { ...lease, highWaterWaitMs: waitBound, holder: { address: '127.0.0.1:7300' } },
            generator: { highWaterWaitMs: waitBound },
            uuid: uuidFormatFor(layout),
            durationMs: waitBound + 5_000,
            afterFirstMs: 800,
            retryCodes: ['FLURRY_E_REGISTRY_EXHAUSTED'],
            retryUntilMs: lease.ttlMs * 3 + 5_000,
            retryEveryMs: 50,
          }),
          { env },
        );
        refuser = spawnGenerator(
          dir,
          `restart-${backend}-refuses`,
          base('127.0.0.1:7301', {
            registryOptions: { ...lease, highWaterWaitMs: 200, holder: { address: '127.0.0.1:7301' } },
            generator: { highWaterWaitMs: 200 },
            durationMs: 1_000,
            retryCodes: ['FLURRY_E_REGISTRY_EXHAUSTED'],
            retryUntilMs: lease.ttlMs * 3 + 5_000,
            retryEveryMs: 50,
          }),
          { env },
        );
        gens.push(waiter, refuser);
        await Promise.all([
          waiter.child.waitExit(waitBound + lease.ttlMs * 3 + 20_000),
          refuser.child.waitExit(lease.ttlMs * 3 + 20_000),
        ]);
      });
      row.processes = gens.length;
      collect(row, [waiter, refuser]);
      const killedSet = new Set(first.map((g) => g.name));
      collect(row, first, { killedOnPurpose: killedSet });
      const { segs } = await analyze(row, gens, layout, { orderPromised: true });
      const epoch = layout.epochMs;
      const marks = new Map(); // node -> highest ts issued by the killed holders
      for (const s of segs) if (killedSet.has(s.stream)) marks.set(s.node, Math.max(marks.get(s.node) ?? -1, s.maxTs));

      const wDone = lastMsg(waiter, 'done');
      const wSegs = segs.filter((s) => s.stream === waiter.name);
      if (!wDone)
        row.liveness(
          `${waiter.name} never issued: ${JSON.stringify(lastMsg(waiter, 'acquire-failed') ?? waiter.child.exit)}`,
        );
      else if (!wDone.issued)
        row.liveness(
          `${waiter.name} was allowed to wait ${waitBound} ms for its clock but issued nothing (refusals ${JSON.stringify(wDone.refusals)})`,
        );
      for (const s of wSegs) {
        const mark = marks.get(s.node);
        if (mark === undefined)
          row.note(`${waiter.name} got node ${s.node}, which the killed holders never issued under`);
        else if (s.minTs <= mark)
          row.fail(
            `${waiter.name} issued at ${s.minTs + epoch} ms under node ${s.node}, at or below the killed holder's last ID at ${mark + epoch} ms`,
          );
        else
          row.note(
            `${waiter.name}: first ID ${s.minTs - mark} ms above node ${s.node}'s last ID, ${Math.round(wDone?.firstIssueAfterMs ?? 0)} ms after ready; clock ${behindMs} ms behind`,
          );
      }
      if (wDone) row.stall(wDone.maxStallMs);
      const rDone = lastMsg(refuser, 'done') ?? lastMsg(refuser, 'acquire-failed');
      const rRefused = rDone?.refusals?.[BEHIND] ?? 0;
      // Not refusing is a liveness miss, not a safety failure (whether it issued at or
      // below a mark is checked below): on a loaded machine the refuser may start so late
      // that its stepped-back clock has already passed the mark, and then it must issue.
      if (!rRefused)
        row.liveness(
          `${refuser.name} (highWaterWaitMs 200, clock ${behindMs} ms behind) did not refuse with ${BEHIND}: ${JSON.stringify(rDone)}`,
        );
      for (const s of segs.filter((x) => x.stream === refuser.name)) {
        const mark = marks.get(s.node);
        if (mark !== undefined && s.minTs <= mark) row.fail(`${refuser.name} issued at or below node ${s.node}'s mark`);
      }
      row.details.killedAt = killedAt;
      row.details.marks = Object.fromEntries([...marks].map(([k, v]) => [k, v + epoch]));
    },
    { parallel: true },
  );
}
