#!/usr/bin/env node
// A torture child: takes a node ID (from a registry through `leasedGenerator`, or pinned
// by hand), then issues IDs as fast as it can and appends every ID it was handed to a
// binary file (8-byte little-endian words, written with one write(2) per chunk right
// after the chunk was issued, so a SIGKILL loses nothing that a caller could have seen).
//
// With `cfg.uuid` ({ nodeBits, sequenceBits }) it issues UUIDv7 instead, from
// `leasedUuidGenerator` (or a pinned `UuidGenerator`), and writes each as its 16 bytes
// (network order); torture/lib/uuids.mjs checks them.
//
// Usage: node generator.mjs '<json config>'
// Control on stdin (one word a line): `go` (start issuing when waitGo), `stop` (finish,
// release the lease, exit 0), `mark NAME` (report the counts so far as phase NAME),
// `pause NAME` (the same, then issue nothing until `resume`: the parent changes the clock
// in between, so every ID counted in a phase was issued under that phase's clock),
// `step-resume MS` (resume, stepping the shared clock file `cfg.clockFile` at this very
// moment so that the wall clock reads MS behind the last issued ID: the step the caller
// sees does not shrink by however late the word arrived).
// End of stdin = stop. Reports on stdout as JSON lines:
// {ev:'ready'|'progress'|'lease'|'done'|'acquire-failed'|'error', …}.
import { openSync, writeSync, closeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { readOffset, setOffset } from '../lib/faketime.mjs';

const cfg = JSON.parse(process.argv[2]);
const core = await import(new URL('../../packages/core/dist/index.js', import.meta.url).href);
const { Layout, Generator, FlurryError, UuidGenerator } = core;
/** 64-bit words per issued value: 1 for an ID, 2 for a UUID (its 16 bytes). */
const W = cfg.uuid ? 2 : 1;

const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const mono = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const codeOf = (e) =>
  e && typeof e.code === 'string' && e.code.startsWith('FLURRY_E_') ? e.code : `UNCODED:${e?.name ?? typeof e}`;

const refusals = {};
const refuse = (e) => {
  const c = codeOf(e);
  refusals[c] = (refusals[c] ?? 0) + 1;
  if (!c.startsWith('FLURRY_E_') && (refusals[c] ?? 0) <= 3)
    say({ ev: 'error', where: 'issue', code: c, message: String(e?.stack ?? e).slice(0, 800) });
  return c;
};

// A hard bound on this process's life, whatever happens.
const lifeMs = (cfg.durationMs ?? 0) + (cfg.acquireTimeoutMs ?? 30_000) + (cfg.goTimeoutMs ?? 60_000) + 60_000;
setTimeout(() => {
  say({ ev: 'error', where: 'lifetime', message: `lifetime bound ${lifeMs} ms exceeded` });
  process.exit(3);
}, lifeMs).unref();

let stopRequested = false;
let stoppedBy = null; // why the issuing loop ended (reported with `done`)
let burstArmed = false; // `arm`: do the configured burst once the lease is near its deadline
const marks = []; // phase names the parent asked us to report counts at
let pauseAfterMark = false; // `pause NAME` received: hold after reporting it
let paused = false;
// After a pause: how far the (possibly stepped) wall clock was behind the last issued ID
// when the first call after the resume began (read right beside the start of that call's
// stall, so nothing the process does in between is counted), how long that call waited,
// the scheduling delay seen while paused (the longest overshoot of a 1 ms sleep) and, after
// `step-resume`, how long before that call the step was made. Reported with the next mark,
// so the parent judges a backwards wait from the moment the call began, not from its phase
// mark.
let resume = null;
let stepBehindMs = null; // `step-resume MS` received: step the clock at the resume
let steppedAt = null; // mono() when this process stepped the clock
let go = !cfg.waitGo;
const rl = createInterface({ input: process.stdin });
rl.on('line', (l) => {
  const w = l.trim();
  if (w === 'go') go = true;
  else if (w === 'stop') {
    stopRequested = true;
    stoppedBy ??= 'stop';
  } else if (w.startsWith('mark ')) marks.push(w.slice(5));
  else if (w.startsWith('pause ')) {
    marks.push(w.slice(6));
    pauseAfterMark = true;
  } else if (w === 'resume') paused = false;
  else if (w.startsWith('step-resume ')) {
    stepBehindMs = Number(w.slice(12));
    paused = false;
  } else if (w === 'arm') burstArmed = true;
});
rl.on('close', () => {
  stopRequested = true;
  stoppedBy ??= 'stdin closed';
});

const layout = Layout.from(cfg.layout);
const genOpts = { ...(cfg.generator ?? {}) };

// ---- acquire -----------------------------------------------------------------------
let registry = null;
let lg = null; // LeasedGenerator, or { generator } when pinned
const acquireStart = mono();
const acquireUntil = acquireStart + (cfg.acquireTimeoutMs ?? 30_000);
const lastLease = () => lg?.lease;

if (cfg.registry) {
  const coord = await import(new URL('../../packages/coordination/dist/index.js', import.meta.url).href);
  for (let attempt = 1; ; attempt++) {
    try {
      if (!registry)
        registry = await coord.openRegistry(cfg.registry, { cluster: cfg.cluster, ...(cfg.registryOptions ?? {}) });
      lg = cfg.uuid
        ? await coord.leasedUuidGenerator({ registry, ...cfg.uuid, generator: genOpts })
        : await coord.leasedGenerator({ registry, layout, pin: cfg.pin, generator: genOpts });
      break;
    } catch (e) {
      const c = refuse(e);
      const retry = cfg.retryAcquire && (!cfg.retryAcquireCodes || cfg.retryAcquireCodes.includes(c));
      if (!retry || mono() > acquireUntil || stopRequested) {
        say({
          ev: 'acquire-failed',
          code: c,
          message: String(e?.message ?? e).slice(0, 600),
          attempts: attempt,
          refusals,
        });
        try {
          await registry?.close();
        } catch {}
        process.exit(0);
      }
      await sleep(cfg.acquireRetryMs ?? 100);
    }
  }
} else {
  lg = {
    generator: cfg.uuid
      ? new UuidGenerator({ node: cfg.node, ...cfg.uuid, ...genOpts })
      : new Generator({ layout, node: cfg.node, ...genOpts }),
  };
  lg.nextBytes = () => lg.generator.nextBytes();
  lg.next = () => lg.generator.next();
  lg.fill = (a, o, n) => lg.generator.fill(a, o, n);
  lg.batch = (n, form) => lg.generator.batch(n, form); // form: a UUID child asks for bytes
  lg.close = async () => lg.generator.close();
}

const leaseEvents = {};
function watchLease(lease) {
  if (!lease || typeof lease.on !== 'function' || lease.__tortureWatched) return;
  lease.__tortureWatched = true;
  for (const ev of ['renewed', 'renew-failed', 'lost', 'reacquired', 'node-changed']) {
    lease.on(ev, (arg) => {
      leaseEvents[ev] = (leaseEvents[ev] ?? 0) + 1;
      if (ev !== 'renewed')
        say({
          ev: 'lease',
          type: ev,
          t: Date.now(),
          m: mono(),
          code: arg?.code,
          node: arg?.node ?? (ev === 'node-changed' ? arg : undefined),
        });
      if (ev === 'reacquired') watchLease(arg);
    });
  }
}
watchLease(lastLease());

const gen = () => lg.generator;
say({
  ev: 'ready',
  pid: process.pid,
  slot: lastLease()?.slot,
  node: (cfg.uuid ? lastLease()?.node : undefined) ?? gen()?.node ?? lastLease()?.node,
  notBeforeMs: lastLease()?.notBeforeMs,
  acquireMs: mono() - acquireStart,
  wall: Date.now(),
});

// ---- wait for go -------------------------------------------------------------------
{
  const until = mono() + (cfg.goTimeoutMs ?? 60_000);
  while (!go && !stopRequested && mono() < until) await sleep(5);
}

// ---- issue -------------------------------------------------------------------------
const fd = openSync(cfg.out, 'a');
const chunk = cfg.chunk ?? 1024;
const buf = new BigUint64Array(chunk * W);
const bytes = new Uint8Array(buf.buffer);
/** The value at index i as reported (an ID, or a UUID as 32 hex digits). */
const valueAt = (i) => (W === 1 ? buf[i] : Buffer.from(bytes.subarray(i * 16, i * 16 + 16)).toString('hex'));
const mode = cfg.mode ?? 'fill';
let issued = 0;
let partialFills = 0;
let maxStallMs = 0;
let maxCallMs = 0;
let firstId = null;
let lastId = null;
let firstIssueWall = null;
let firstIssueMono = null;
let lastOkWall = null; // wall time of the last successful issue
let lastProgress = mono();
let round = 0;
const start = mono();
const until = start + (cfg.durationMs ?? 1000);
let wantSince = null; // when the caller started waiting for its next ID

function emit(n) {
  if (n <= 0) return;
  writeSync(fd, bytes, 0, n * 8 * W);
  if (firstId === null) {
    firstId = valueAt(0);
    firstIssueWall = Date.now();
    firstIssueMono = mono();
  }
  lastId = valueAt(n - 1);
  issued += n;
  lastOkWall = Date.now();
}

let burstDone = false;
// One large batch issued in a single call (what a caller asking for millions of IDs at
// once gets), timed to end just before the lease's fencing deadline: with borrowing it
// takes ticks ahead of the wall clock that no renewal ever reports.
function burst() {
  const lease = lg.lease;
  const before = lease.msUntilDeadline();
  const big = new BigUint64Array(cfg.burst.count);
  const t0 = mono();
  let n = 0;
  let code = null;
  try {
    n = lg.fill(big, 0, big.length);
  } catch (e) {
    code = refuse(e);
    while (n < big.length && big[n] !== 0n) n++;
    if (n > 0) partialFills++;
  }
  if (n > 0) {
    writeSync(fd, new Uint8Array(big.buffer, 0, n * 8));
    if (firstId === null) {
      firstId = big[0];
      firstIssueWall = Date.now();
      firstIssueMono = mono();
    }
    lastId = big[n - 1];
    issued += n;
    lastOkWall = Date.now();
  }
  say({
    ev: 'burst',
    count: n,
    ms: mono() - t0,
    code,
    msUntilDeadlineBefore: before,
    msUntilDeadlineAfter: lease.msUntilDeadline(),
    lastIssuedUnixMs: gen()?.lastIssuedUnixMs,
    wall: Date.now(),
    lastId: n ? big[n - 1].toString() : null,
  });
}

while (!stopRequested && mono() < until) {
  if (cfg.maxIds && issued >= cfg.maxIds) {
    stoppedBy ??= 'maxIds';
    break;
  }
  if (cfg.burst && burstArmed && !burstDone) {
    const l = lg.lease;
    if (l && l.state === 'held' && l.msUntilDeadline() > 0 && l.msUntilDeadline() <= cfg.burst.beforeDeadlineMs) {
      burstDone = true;
      burst();
      continue;
    }
  }
  if (cfg.afterFirstMs && firstIssueMono !== null && mono() - firstIssueMono > cfg.afterFirstMs) {
    stoppedBy ??= 'afterFirstMs';
    break;
  }
  const m = cfg.mode === 'mixed' ? ['fill', 'next', 'batch'][round % 3] : mode;
  round++;
  const n = Math.min(chunk, cfg.maxIds ? cfg.maxIds - issued : chunk);
  if (resume && resume.behindMs === null) {
    // The first call after a resume: how far the clock is behind the last ID, read between
    // two monotonic readings: the stall counts from the first (a reading delayed inside
    // Date.now(), which reads the offset file under libfaketime, only makes the clock look
    // less far behind than the call then waits), the time since the step up to the second.
    const last = gen()?.lastIssuedUnixMs;
    const t0 = mono();
    const wall = Date.now();
    const t1 = mono();
    resume.behindMs = typeof last === 'number' ? last - wall : NaN;
    wantSince = t0;
    if (steppedAt !== null) resume.stepToCallMs = t1 - steppedAt;
  }
  if (wantSince === null) wantSince = mono();
  const t0 = mono();
  let got = 0;
  let err = null;
  try {
    if (m === 'fill') {
      buf.fill(0n, 0, n * W);
      got = lg.fill(W === 1 ? buf : bytes, 0, n);
    } else if (m === 'batch') {
      const arr = W === 1 ? lg.batch(n) : lg.batch(n, 'bytes');
      for (let i = 0; i < arr.length; i++) W === 1 ? (buf[i] = arr[i]) : bytes.set(arr[i], i * 16);
      got = arr.length;
    } else if (W === 2) {
      for (; got < n; got++) bytes.set(lg.nextBytes(), got * 16);
    } else {
      for (; got < n; got++) buf[got] = lg.next();
    }
  } catch (e) {
    err = e;
    if (m === 'fill') {
      // IDs a failed fill left in the caller's array count as handed out.
      let k = 0;
      while (k < n && buf[k * W] !== 0n) k++;
      if (k > 0) partialFills++;
      got = k;
    }
  }
  const t1 = mono();
  if (t1 - t0 > maxCallMs) maxCallMs = t1 - t0;
  emit(got);
  if (got > 0) {
    const stall = t1 - wantSince;
    if (stall > maxStallMs) maxStallMs = stall;
    if (resume && resume.firstStallMs === null) resume.firstStallMs = stall;
    wantSince = err ? t1 : null;
  }
  if (err) {
    refuse(err);
    await sleep(cfg.refusalSleepMs ?? 2);
  } else if (cfg.chunkSleepMs) {
    await sleep(cfg.chunkSleepMs);
  } else if (cfg.yieldEvery === undefined || round % cfg.yieldEvery === 0) {
    // Let the lease's renewal timers and the control channel run between chunks, as a
    // service does between requests.
    await new Promise((r) => setImmediate(r));
  }
  while (marks.length)
    say({
      ev: 'mark',
      phase: marks.shift(),
      issued,
      refusals: { ...refusals },
      maxStallMs,
      wall: Date.now(),
      lastId: lastId?.toString(),
      lastIssuedUnixMs: gen()?.lastIssuedUnixMs,
      resume,
    });
  if (pauseAfterMark) {
    pauseAfterMark = false;
    paused = true;
    const pausedAt = mono();
    let lagMs = 0;
    while (paused && !stopRequested && mono() - pausedAt < 30_000) {
      const s0 = mono();
      await sleep(1);
      lagMs = Math.max(lagMs, mono() - s0 - 1);
    }
    steppedAt = null;
    const last = gen()?.lastIssuedUnixMs;
    if (stepBehindMs !== null && cfg.clockFile && typeof last === 'number') {
      // The real time is this process's wall clock less the offset it runs under now; the
      // step counts from this reading (writing the file took up to 44 ms here under load).
      const before = readOffset(cfg.clockFile);
      steppedAt = mono(); // before the reading: a read delayed inside Date.now() counts in stepToCallMs
      const wallNow = Date.now();
      const offsetMs = Math.round(last - stepBehindMs - (wallNow - before));
      setOffset(cfg.clockFile, offsetMs);
      say({ ev: 'stepped', offsetMs, behindMs: last - Date.now(), writeMs: mono() - steppedAt, wall: Date.now() });
    }
    stepBehindMs = null;
    resume = {
      behindMs: null,
      behindAtResumeMs: typeof last === 'number' ? last - Date.now() : null,
      firstStallMs: null,
      pausedMs: mono() - pausedAt,
      lagMs,
      stepToCallMs: null,
    };
    wantSince = null; // the pause is the parent's, not a stall
  }
  if (mono() - lastProgress >= (cfg.progressMs ?? 250)) {
    lastProgress = mono();
    say({
      ev: 'progress',
      issued,
      refusals,
      wall: Date.now(),
      m: lastProgress,
      lastId: lastId?.toString(),
      lastOkWall,
    });
  }
}
// Why the loop ended: asked to ('stop'), or on its own ('durationMs': its time ran out).
stoppedBy ??= stopRequested ? 'stop' : 'durationMs';
// A caller still waiting when the run ends saw a stall too.
if (wantSince !== null && mono() - wantSince > maxStallMs) maxStallMs = mono() - wantSince;
closeSync(fd);

const g = gen();
const lease = lastLease();
const summary = {
  ev: 'done',
  pid: process.pid,
  issued,
  refusals,
  partialFills,
  maxStallMs,
  maxCallMs,
  firstId: firstId?.toString() ?? null,
  lastId: lastId?.toString() ?? null,
  firstIssueWall,
  firstIssueAfterMs: firstIssueMono === null ? null : firstIssueMono - start,
  lastIssuedUnixMs: g?.lastIssuedUnixMs,
  generatorStats: g?.stats ? { ...g.stats } : undefined,
  leaseStats: lease?.stats ? { ...lease.stats } : undefined,
  leaseEvents,
  node: g?.node,
  slot: lease?.slot,
  notBeforeMs: lease?.notBeforeMs,
  elapsedMs: mono() - start,
  lastOkWall,
  stoppedBy,
  wall: Date.now(),
};
say(summary);

// ---- release -----------------------------------------------------------------------
const releaseStart = mono();
try {
  await Promise.race([
    lg.close(),
    sleep(cfg.releaseTimeoutMs ?? 10_000).then(() => Promise.reject(new Error('release timed out'))),
  ]);
  if (registry) await Promise.race([registry.close(), sleep(5_000)]);
  say({ ev: 'released', ms: mono() - releaseStart });
} catch (e) {
  say({ ev: 'error', where: 'release', code: codeOf(e), message: String(e?.message ?? e).slice(0, 600) });
}
process.exit(0);
