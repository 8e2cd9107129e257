// Scenario 2, clock steps: libfaketime steps the wall clock of running processes (all
// sharing one offset file, as a machine-wide step would): back 1 ms, 10 ms, 1 s, 1 hour,
// return, forward 1 hour and back again. Three processes with pinned node IDs run one
// clock policy each (tolerate, wait, throw) at full speed; every policy promises that no
// ID repeats and none is smaller than the one before, and each reacts to each step as the
// core documents (src/generator/options.ts). Per registry backend, 4 leased holders fill a
// 4-ID registry and a newcomer keeps trying to acquire through the steps: a forward step
// must not let it take a node ID from a holder whose lease is still valid. Beside each
// pinned policy process runs a UUIDv7 process with the same policy (its own node ID), judged
// phase by phase the same way, and one leased holder of each group issues UUIDv7 in the same
// slot space (lib/uuids.mjs): UUIDs are checked beside the IDs.
import path from 'node:path';
import { analyze } from '../lib/analyze.mjs';
import { LIB, faketimeAvailable, faketimeEnv, setOffset } from '../lib/procs.mjs';
import { LAYOUTS, spawnGenerator, waitReady, collect, lastMsg, saveFailureLogs } from '../lib/generators.mjs';
import { clusterName, dist, sleep, tempDir } from '../lib/util.mjs';
import { uuidFormatFor } from '../lib/uuids.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'wall-clock steps inside running processes (libfaketime), per clock policy';
const BACKWARDS = 'FLURRY_E_CLOCK_BACKWARDS';
const HOUR = 3_600_000;

/** The steps: [name, offset from real time in ms, hold factor]. */
const PHASES = [
  ['start', 0],
  ['back-1ms', -1],
  ['back-10ms', -11],
  ['back-1s', -1_011],
  ['back-1h', -1_011 - HOUR],
  ['return', 0],
  ['forward-1h', HOUR],
  ['back-1h-again', 0],
  ['end', 0],
];

/** What each policy must do in each phase: 'issue' (IDs flow), 'refuse' (only CLOCK_BACKWARDS). */
const EXPECT = {
  tolerate: {
    'back-1ms': 'issue',
    'back-10ms': 'issue',
    'back-1s': 'issue',
    'back-1h': 'issue',
    return: 'issue',
    'forward-1h': 'issue',
    'back-1h-again': 'issue',
    end: 'issue',
  },
  wait: {
    'back-1ms': 'issue',
    'back-10ms': 'issue',
    'back-1s': 'issue',
    'back-1h': 'refuse',
    return: 'issue',
    'forward-1h': 'issue',
    'back-1h-again': 'refuse',
    end: 'refuse',
  },
  throw: { 'back-1h': 'refuse', return: 'issue', 'forward-1h': 'issue', 'back-1h-again': 'refuse', end: 'refuse' },
};

/**
 * Resumes a paused generator child (spawned with `clockFile`) with the shared clock stepped
 * back by the child itself at that moment, to `stepMs` behind its last ID (`step-resume`),
 * and waits (at most 10 s) until the step is in the file; returns the child's `stepped`
 * report, or null. Taken by the parent instead, the time the resume word took to reach the
 * caller on a loaded machine came off the step it saw (310 and 352 ms of 1000 were seen).
 * @example const s = await stepAtResume(waitGen, 1_000, console.error); // { ev: 'stepped', offsetMs: -1063, … }
 */
export async function stepAtResume(g, stepMs, log = () => {}) {
  g.child.send(`step-resume ${stepMs}`);
  return g.child
    .waitFor((m) => m.ev === 'stepped', 10_000, { what: 'the step at its resume' })
    .catch(() => {
      log(`clock: ${g.name} did not step the clock at its resume within 10 s`);
      return null;
    });
}

/**
 * Judges the `wait` caller's first call after the 1 s step back from what it reported with
 * its `back-1s` mark (`resume`): how far its clock was behind its last ID when that call
 * began (`behindMs`, read beside the start of the call's stall), how long the call blocked
 * (`firstStallMs`), how long before the call it stepped the clock itself (`stepToCallMs`)
 * and the scheduling delay it saw while paused (`lagMs`). The clock must have been `stepMs`
 * behind less the time since the step (at most `waitBoundMs`), and the call must block that
 * long: not less (2 ms for whole-millisecond wall readings), and not more than max(250, 4 ×
 * the scheduling delay) beyond it.
 * @example judgeWait(row, { behindMs: 998, firstStallMs: 999, stepToCallMs: 1, lagMs: 3 }, { stepMs: 1000, waitBoundMs: 1500 });
 */
export function judgeWait(row, r, { stepMs, waitBoundMs }) {
  if (!r || !Number.isFinite(r.behindMs) || r.firstStallMs === null || !Number.isFinite(r.stepToCallMs ?? NaN)) {
    row.liveness(`wait: no call completed after the caller's own 1 s step back (${JSON.stringify(r ?? null)})`);
    return;
  }
  row.details.waitResume = r;
  const slack = Math.max(250, 4 * r.lagMs);
  row.within(
    'wait: the clock was behind the last ID when the first call after the step began',
    r.behindMs,
    waitBoundMs,
    {
      min: stepMs - r.stepToCallMs - 2,
      how: `a ${stepMs} ms step from the last ID, made by the caller ${Math.round(r.stepToCallMs)} ms before the call; at most maxBackwardsWaitMs ${waitBoundMs}`,
    },
  );
  row.within('wait: the first call after the 1 s step blocked', r.firstStallMs, r.behindMs + slack, {
    min: r.behindMs - 2,
    how: `the clock was ${Math.round(r.behindMs)} ms behind as it began; + ${Math.round(slack)} ms slack = max(250, 4 × ${Math.round(r.lagMs)} ms scheduling delay seen while paused)`,
  });
}

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  if (!faketimeAvailable()) {
    const row = new ctx.Row('clock-steps', 'all');
    row.fail(`libfaketime is missing (${LIB}): apt-get install faketime`);
    row.finish();
    add(row);
    return;
  }
  const { holdMs, policies } = ctx.P.clock;
  const lease = ctx.P.lease;
  const dir = tempDir('clock');
  const clockFile = path.join(dir, 'clock');
  setOffset(clockFile, 0);
  const env = faketimeEnv(clockFile);
  const all = [];
  const waitBoundMs = 1_500;
  // The `wait` caller's step back, taken from its last ID at its own resume (below).
  const waitStepMs = 1_000;

  // Policy processes (pinned node IDs, no registry: the generator alone): one issuing IDs as
  // worker i, one issuing UUIDv7 as node 8 + i (no worker of this layout), same policy.
  const sixteen = Layout.from(LAYOUTS.sixteen);
  const pinned = policies.flatMap((policy, i) => {
    if (!ctx.wants(`${policy} (pinned)`)) return [];
    const row = new ctx.Row('clock-steps', `${policy} (pinned)`);
    add(row);
    const spawn = (name, extra) =>
      spawnGenerator(
        dir,
        name,
        {
          layout: LAYOUTS.sixteen,
          generator: { onClockBackwards: policy, ...(policy === 'wait' ? { maxBackwardsWaitMs: waitBoundMs } : {}) },
          durationMs: 120_000, // stopped by the parent; ends by itself if the parent is held up
          waitGo: true,
          mode: 'mixed',
          chunk: 512,
          ...extra,
        },
        { env },
      );
    const g = spawn(`clock-${policy}`, { node: { worker: i }, ...(policy === 'wait' ? { clockFile } : {}) });
    const u = spawn(`clock-${policy}-uuid`, { node: 8 + i, uuid: uuidFormatFor(sixteen) });
    all.push(g, u);
    return [{ policy, row, g, u }];
  });

  // Leased groups, one per registry backend, all on the same stepped clock.
  const leased = [];
  for (const backend of ctx.backends.filter((b) => ctx.wants(b))) {
    const row = new ctx.Row('clock-steps', backend);
    add(row);
    try {
      const url = await ctx.engines.url(backend);
      const cluster = clusterName('clock');
      const mk = (name, address, extra = {}) =>
        spawnGenerator(
          dir,
          `clock-${backend}-${name}`,
          {
            url,
            cluster,
            registryOptions: { ...lease, holder: { address } },
            layout: LAYOUTS.four,
            durationMs: 120_000, // stopped by the parent; ends by itself if the parent is held up
            waitGo: true,
            mode: 'mixed',
            chunk: 64,
            chunkSleepMs: 4,
            retryUntilMs: 60_000,
            retryEveryMs: 40,
            ...extra,
          },
          { env },
        );
      const four = uuidFormatFor(Layout.from(LAYOUTS.four));
      const holders = Array.from({ length: 4 }, (_, i) =>
        mk(`holder-${i}`, `127.0.0.1:${7500 + i}`, i === 3 ? { uuid: four } : {}),
      );
      all.push(...holders);
      leased.push({ backend, row, holders, mk, newcomer: null });
    } catch (e) {
      row.fail(`could not start: ${e?.stack ?? e}`);
    }
  }

  try {
    const ready = await waitReady(all, 45_000);
    ready.forEach(
      (m, i) =>
        m.ev !== 'acquired' &&
        ctx.log(`clock: ${all[i].name} did not start: ${m.code ?? ''} ${m.message ?? m.error ?? ''}`),
    );
    // The newcomers start once the holders own every node ID; they retry through the steps.
    for (const l of leased) {
      l.newcomer = l.mk('newcomer', '127.0.0.1:7599');
      all.push(l.newcomer);
    }
    for (const g of all) g.child.send('go');
    const phaseWall = {};
    // The pinned policy processes are judged phase by phase, so their phases must not
    // blur: each reports its counts and pauses (`pause NAME`), the clock steps while they
    // hold, then they resume. A child reads stdin only between chunks, and a chunk may
    // block for the length of a backwards wait; without the pause, IDs issued under the
    // next phase's clock could be counted in this one. The leased processes only mark.
    const pinnedGens = new Set(pinned.flatMap((p) => [p.g, p.u]));
    const waitGen = pinned.find((p) => p.policy === 'wait')?.g;
    for (const [name, offset] of PHASES) {
      // The 1 s step back is made by the `wait` caller itself as it resumes (stepAtResume).
      const stepped = name === 'back-1s' && waitGen && (await stepAtResume(waitGen, waitStepMs, ctx.log));
      if (!stepped) setOffset(clockFile, offset);
      phaseWall[name] = Date.now();
      for (const g of pinnedGens) if (!(stepped && g === waitGen)) g.child.send('resume');
      const hold = name === 'back-1s' ? Math.max(holdMs, waitBoundMs + 300) : holdMs;
      await sleep(hold);
      for (const g of all) g.child.send(pinnedGens.has(g) ? `pause ${name}` : `mark ${name}`);
      await Promise.all(
        [...pinnedGens].map((g) =>
          g.child
            .waitFor((m) => m.ev === 'mark' && m.phase === name, 10_000, { what: `mark ${name}` })
            .catch(() => ctx.log(`clock: ${g.name} did not report phase ${name} within 10 s`)),
        ),
      );
    }
    for (const g of pinnedGens) g.child.send('resume');
    await sleep(200);
    setOffset(clockFile, 0);
    for (const g of all) g.child.send('stop');
    await Promise.all(all.map((g) => g.child.waitExit(30_000)));

    // ---- the policy rows ----
    for (const { policy, row, g, u } of pinned) {
      row.processes = 2;
      collect(row, [g, u]);
      await analyze(row, [g, u], sixteen, { orderPromised: true });
      for (const [kind, p] of [
        ['', g],
        ['UUID ', u],
      ])
        judgePhases(row, `${kind}${policy}`, policy, p);
      if (policy === 'wait') {
        judgeWait(row, g.child.messages.find((x) => x.ev === 'mark' && x.phase === 'back-1s')?.resume, {
          stepMs: waitStepMs,
          waitBoundMs,
        });
        row.details.waitStepped = lastMsg(g, 'stepped') ?? null;
      }
      row.details.phaseWall = phaseWall;
    }

    // ---- the leased rows ----
    for (const l of leased) {
      const gens = [...l.holders, l.newcomer].filter(Boolean);
      l.row.processes = gens.length;
      collect(l.row, gens);
      await analyze(l.row, gens, Layout.from(LAYOUTS.four), { orderPromised: true, allowReorderAcrossNodes: true });
      const nc = l.newcomer && lastMsg(l.newcomer, 'acquired');
      if (nc) l.row.note(`the newcomer acquired node ${JSON.stringify(nc.node)} at ${nc.wall} (wall, stepped)`);
      for (const h of l.holders) {
        const lost = h.child.messages.filter((m) => m.ev === 'lost');
        if (lost.length) l.row.note(`${h.name} lost its lease ${lost.length}× (${lost.map((m) => m.code).join(', ')})`);
      }
    }
    for (const { row } of pinned) row.finish();
    for (const l of leased) l.row.finish();
  } finally {
    setOffset(clockFile, 0);
    for (const g of all) if (g.child.running) await g.child.kill();
    for (const { row, g, u } of pinned) saveFailureLogs(row, [g, u]);
    for (const l of leased) saveFailureLogs(l.row, [...l.holders, l.newcomer].filter(Boolean));
  }
}

/**
 * Judges one pinned process (`who`: the policy, "UUID " before it for the UUID one) phase by
 * phase against EXPECT: IDs flow where the policy promises them, only CLOCK_BACKWARDS where
 * it refuses, no other refusal, every phase reported; under `tolerate` the generator counted
 * a step back. Puts the phases into `row.details.phases` (keyed by `who`).
 * @example judgePhases(row, 'UUID wait', 'wait', u);
 */
function judgePhases(row, who, policy, g) {
  const marks = g.child.messages.filter((m) => m.ev === 'mark');
  const phases = [];
  let prev = { issued: 0, refusals: {}, maxStallMs: 0 };
  for (const m of marks) {
    const issued = m.issued - prev.issued;
    const backwards = (m.refusals[BACKWARDS] ?? 0) - (prev.refusals[BACKWARDS] ?? 0);
    const other = Object.entries(m.refusals)
      .filter(([k]) => k !== BACKWARDS)
      .reduce((s, [k, v]) => s + v - (prev.refusals[k] ?? 0), 0);
    phases.push({
      phase: m.phase,
      issued,
      clockBackwardsRefusals: backwards,
      otherRefusals: other,
      maxStallMs: Math.round(m.maxStallMs),
    });
    const want = EXPECT[policy]?.[m.phase];
    if (want === 'issue' && issued === 0)
      row.liveness(`${who}: issued nothing during ${m.phase} (refusals ${JSON.stringify(m.refusals)})`);
    if (want === 'refuse' && (issued > 0 || backwards === 0))
      row.fail(`${who}: during ${m.phase} expected only ${BACKWARDS}, got ${issued} IDs and ${backwards} refusals`);
    if (other > 0)
      row.fail(
        `${who}: ${other} refusal(s) with codes other than ${BACKWARDS} during ${m.phase}: ${JSON.stringify(m.refusals)}`,
      );
    prev = m;
  }
  if (marks.length !== PHASES.length)
    row.liveness(`${who}: reported ${marks.length} of ${PHASES.length} phases (the process stalled?)`);
  if (policy === 'tolerate') {
    const stats = lastMsg(g, 'done')?.generatorStats;
    if (stats && !stats.clockBackwards) row.fail(`${who}: the generator counted no clock step back`);
  }
  row.details.phases = { ...row.details.phases, [who]: phases };
}
