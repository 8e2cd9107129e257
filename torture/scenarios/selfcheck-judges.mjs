// Part of the canary row (selfcheck.mjs): the liveness judges of two scenarios checked
// against real generator children whose behaviour is known, so a judge that mis-measures
// fails the canary instead of making a row miss (or pass) without cause.
//
// - engine-faults: a holder that issues on across the instant the engine is back must be
//   judged recovered by both measurements (the progress reports and the IDs), and one that
//   ended before it by neither; the row's holders must outlive the scenario's time limit.
// - UUIDv7 twins: two UUID children pinned to one node ID (whose UUIDs differ in their
//   random bits) and a UUID child beside a Snowflake child of the same slot must be caught
//   as duplicates and overlapping node runs (lib/uuids.mjs), and two distinct nodes not.
// - clock-steps / wait: the 1 s step back must reach the caller whole even when the resume
//   reaches it late (here: the caller stopped 400 ms around the step).
// - the runner's thread: checking a row's IDs must not stop the runner's timers, which time
//   the other rows' faults (analyze runs on a worker thread).
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LIB, faketimeAvailable, faketimeEnv, holderPause, setOffset } from '../lib/procs.mjs';
import { firstAfterMs, readIds, tsExtractor } from '../lib/ids.mjs';
import { LAYOUTS, spawnGenerator, waitReady, lastMsg } from '../lib/generators.mjs';
import { dist, pollUntil, sleep, tempDir } from '../lib/util.mjs';
import { profiles } from '../profiles.mjs';
import { holderDurationMs, seenIssuingAfter } from './engine.mjs';
import { judgeWait, stepAtResume } from './clock.mjs';
import { analyze } from '../lib/analyze.mjs';
import { uuidFormatFor } from '../lib/uuids.mjs';

/**
 * engine-faults' judges on two real holders: `ends` stops on its own after 300 ms, `keeps` issues until
 * stopped. At an instant after `ends` exited (the engine "back"), the progress reports and the IDs must
 * agree: `keeps` issued again, `ends` did not. Fails `row` when they do not.
 * @example await checkEngineJudges(ctx, row);
 */
export async function checkEngineJudges(ctx, row) {
  for (const [name, P] of Object.entries(profiles))
    if (holderDurationMs(P) < P.scenarioTimeoutMs)
      row.fail(
        `engine-faults: the ${name} profile's holders stop on their own after ${holderDurationMs(P)} ms, before the scenario's ${P.scenarioTimeoutMs} ms limit`,
      );
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.fourSmallSeq);
  const dir = tempDir('selfcheck-engine');
  const mk = (name, worker, durationMs) =>
    spawnGenerator(dir, `judge-${name}`, {
      layout: LAYOUTS.fourSmallSeq,
      node: { worker },
      durationMs,
      mode: 'mixed',
      chunk: 64,
      chunkSleepMs: 1,
      progressMs: 50,
    });
  const failuresBefore = row.failures.length;
  const gens = [mk('ends', 2, 300), mk('keeps', 3, 30_000)];
  const [ends, keeps] = gens;
  try {
    await waitReady(gens, 20_000);
    await ends.child.waitExit(10_000);
    const upWall = Date.now();
    await pollUntil(() => seenIssuingAfter([keeps], upWall).all, 5_000, 20);
    const seen = seenIssuingAfter(gens, upWall);
    keeps.child.send('stop');
    await keeps.child.waitExit(10_000);
    const tsOf = tsExtractor(layout);
    const judged = gens.map((g) => firstAfterMs(readIds(g.file).ids, tsOf, layout.epochMs, upWall));
    const what = `progress: ${JSON.stringify(seen)}; IDs: first after ${judged.map((ms) => (Number.isFinite(ms) ? Math.round(ms) : 'never')).join(', ')} ms`;
    if (!Number.isFinite(judged[1]) || seen.waiting.includes(keeps.name) || seen.exited.includes(keeps.name))
      row.fail(`engine-faults judges: a holder that issued on across the instant was not judged recovered (${what})`);
    if (Number.isFinite(judged[0]) || seen.all || !seen.exited.includes(ends.name))
      row.fail(`engine-faults judges: a holder that had ended before the instant counted as issuing again (${what})`);
    const stoppedBy = gens.map((g) => lastMsg(g, 'done')?.stoppedBy);
    if (stoppedBy[0] !== 'durationMs' || stoppedBy[1] !== 'stop')
      row.fail(`engine-faults judges: the holders' done reports say stopped by ${JSON.stringify(stoppedBy)}`);
    if (row.failures.length === failuresBefore)
      row.note(
        'engine-faults judges: a holder issuing across the engine\u2019s return is recovered by both measurements, one that had ended by neither',
      );
  } finally {
    for (const g of gens) if (g.child.running) await g.child.kill();
  }
}

/**
 * clock-steps' `wait` judge on a real pinned `wait` caller under libfaketime, stepped back 1 s by the
 * scenario's own procedure (`stepAtResume`) while the caller is stopped for 400 ms around the step (a
 * resume that reaches it late, as on a loaded machine): the caller must still see the whole step and the
 * row's judge must pass.
 * @example await checkClockStepJudge(ctx, row);
 */
export async function checkClockStepJudge(ctx, row) {
  if (!faketimeAvailable()) {
    row.note(`clock-steps judge not checked: libfaketime is missing (${LIB})`);
    return;
  }
  const dir = tempDir('selfcheck-clock');
  const clockFile = path.join(dir, 'clock');
  setOffset(clockFile, 0);
  const g = spawnGenerator(
    dir,
    'judge-wait',
    {
      layout: LAYOUTS.sixteen,
      node: { worker: 5 },
      generator: { onClockBackwards: 'wait', maxBackwardsWaitMs: 1_500 },
      clockFile,
      durationMs: 30_000,
      waitGo: true,
      mode: 'mixed',
      chunk: 512,
    },
    { env: faketimeEnv(clockFile) },
  );
  const mark = (phase) => {
    g.child.send(`pause ${phase}`);
    return g.child.waitFor((m) => m.ev === 'mark' && m.phase === phase, 10_000, { what: `mark ${phase}` });
  };
  try {
    await waitReady([g], 20_000);
    g.child.send('go');
    await sleep(100);
    await mark('before');
    let stepping;
    await holderPause.inject(g.child, () => {
      stepping = stepAtResume(g, 1_000);
      return sleep(400);
    });
    await stepping;
    await sleep(1_800);
    const m = await mark('after');
    g.child.send('resume');
    const probe = new ctx.Row('probe', 'probe');
    judgeWait(probe, m.resume, { stepMs: 1_000, waitBoundMs: 1_500 });
    if (!probe.pass)
      row.fail(
        `clock-steps judge: with the resume 400 ms late the wait row would miss: ${probe.livenessMisses.join('; ')}`,
      );
    else
      row.note(
        `clock-steps judge: with the resume 400 ms late the caller saw ${Math.round(m.resume.behindMs)} ms of the 1000 ms step and blocked ${Math.round(m.resume.firstStallMs)} ms`,
      );
  } catch (e) {
    row.fail(`clock-steps judge: ${e?.message ?? e}`);
  } finally {
    setOffset(clockFile, 0);
    if (g.child.running) await g.child.kill();
  }
}

/**
 * The UUID checks on known children: `[UUID node 1, UUID node 1]` and `[UUID node 1, Snowflake worker 1]`
 * issuing at once must show duplicates and overlapping runs; `[UUID node 1, UUID node 2]` must show none.
 * Fails `row` otherwise.
 * @example await checkUuidTwins(ctx, row);
 */
export async function checkUuidTwins(ctx, row) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.four);
  const uuid = uuidFormatFor(layout);
  const dir = tempDir('selfcheck-uuid');
  const mk = (name, node, asUuid) =>
    spawnGenerator(dir, `uuid-${name}`, {
      layout: LAYOUTS.four,
      node: asUuid ? node : { worker: node },
      ...(asUuid ? { uuid } : {}),
      // Long enough that the twins share whole milliseconds even when a loaded machine runs
      // them apart for a while (400 ms once gave only touching runs and no equal key at load 20).
      durationMs: 2_000,
      waitGo: true,
      mode: 'mixed',
      chunk: 64,
    });
  const cases = [
    ['two UUID children of one node', [mk('a1', 1, true), mk('b1', 1, true)], true],
    ['a UUID and a Snowflake child of one slot', [mk('c1', 1, true), mk('d1', 1, false)], true],
    ['two UUID children of two nodes', [mk('e1', 1, true), mk('f2', 2, true)], false],
  ];
  const all = cases.flatMap(([, gens]) => gens);
  try {
    await waitReady(all, 20_000);
    for (const g of all) g.child.send('go');
    await Promise.all(all.map((g) => g.child.waitExit(20_000)));
    for (const [what, gens, caught] of cases) {
      const probe = new ctx.Row('probe', 'probe');
      await analyze(probe, gens, layout, { orderPromised: true });
      const found = probe.duplicates > 0 && (probe.details.overlapExamples?.length ?? 0) > 0;
      if (probe.idsChecked === 0) row.fail(`UUID judge, ${what}: nothing was issued`);
      else if (found !== caught)
        row.fail(
          `UUID judge, ${what}: ${probe.duplicates} duplicate(s), ${probe.details.overlapExamples?.length ?? 0} overlap(s) — expected ${caught ? 'both' : 'none'}`,
        );
      else row.note(`UUID judge, ${what}: ${probe.duplicates} duplicate(s) of ${probe.idsChecked} checked, as it must`);
    }
  } catch (e) {
    row.fail(`UUID judge: ${e?.message ?? e}`);
  } finally {
    for (const g of all) if (g.child.running) await g.child.kill();
  }
}

/**
 * Checking IDs must leave the runner's thread free: while `analyze` checks 8,000,000 IDs, a 20 ms
 * timer on this thread must keep firing (its longest gap well under the check's duration).
 * On a runner that checks on its own thread the timer stops for the whole check. Fails `row`
 * otherwise.
 * @example await checkRunnerThreadFree(ctx, row);
 */
export async function checkRunnerThreadFree(ctx, row) {
  const { Layout } = await import(dist.core);
  const layout = Layout.from(LAYOUTS.four);
  const dir = tempDir('selfcheck-thread');
  const file = path.join(dir, 'many.ids');
  const n = 8_000_000;
  // One node's IDs, one per tick (sequence 0), little-endian words as the children write them.
  const scale = 2 ** (layout.sequenceBits + layout.nodeFields.reduce((s, f) => s + f.bits, 0));
  const words = new Uint32Array(n * 2);
  for (let i = 0; i < n; i++) {
    const v = i * scale;
    words[2 * i] = v % 2 ** 32;
    words[2 * i + 1] = Math.floor(v / 2 ** 32);
  }
  writeFileSync(file, words);
  let last = performance.now();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 20);
  try {
    const probe = new ctx.Row('probe', 'probe');
    const t0 = performance.now();
    await analyze(probe, [{ name: 'many', file }], layout, { orderPromised: true });
    const tookMs = performance.now() - t0;
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    if (probe.idsChecked !== n || probe.duplicates || probe.decreasing)
      row.fail(
        `runner thread: the check of ${n} increasing IDs found ${probe.idsChecked} IDs, ${probe.duplicates} duplicates, ${probe.decreasing} decreases`,
      );
    else if (longestGap > Math.max(250, tookMs / 2))
      row.fail(
        `runner thread: a 20 ms timer stopped for ${Math.round(longestGap)} ms while ${n} IDs were checked in ${Math.round(tookMs)} ms: the check blocks the thread that times the other rows`,
      );
    else
      row.note(
        `runner thread: a 20 ms timer's longest gap was ${Math.round(longestGap)} ms while ${n.toLocaleString('en-US')} IDs were checked in ${Math.round(tookMs)} ms (bound max(250 ms, half the check))`,
      );
  } catch (e) {
    row.fail(`runner thread: ${e?.message ?? e}`);
  } finally {
    clearInterval(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}
