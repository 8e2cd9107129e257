/**
 * The holder's issuing loop (modes `fill`, `next`, `batch`, `mixed`): IDs as fast as it can,
 * every ID it was handed appended to the binary file `out` (8-byte little-endian words, or a
 * UUID's 16 bytes in network order, written with one write(2) per chunk right after the chunk
 * was issued, so a SIGKILL loses nothing that a caller could have seen).
 *
 * Control words on stdin (one a line): `go` (start issuing with `waitGo`), `stop` (finish,
 * release, exit 0), `mark NAME` (report the counts so far as phase NAME), `pause NAME` (the
 * same, then issue nothing until `resume`: the parent changes the clock in between, so every ID
 * counted in a phase was issued under that phase's clock), `step-resume MS` (resume, stepping
 * the shared clock file `clockFile` at this very moment so that the wall clock reads MS behind
 * the last issued ID: the step the caller sees does not shrink by however late the word
 * arrived), `arm` (do the configured `burst` once the lease is near its deadline). End of
 * stdin = stop. Reports: `progress`, `mark`, `stepped`, `burst`, `done`, `error`.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Generator, UuidGenerator } from '@flurry/core';
import { hostMonotonicMs } from '../host-clock.js';
import type { LeasedGenerator } from '../leased-generator.js';
import { readOffset, setOffset } from './faketime.js';

/** The issuing loop's settings (part of the holder's config). */
export interface IssueConfig {
  mode?: 'fill' | 'next' | 'batch' | 'mixed';
  /** The binary file every issued value is appended to. */
  out?: string;
  durationMs?: number;
  maxIds?: number;
  /** Stop this long after the first ID. */
  afterFirstMs?: number;
  /** Wait for `go` (at most `goTimeoutMs`, default 60 s) before issuing. */
  waitGo?: boolean;
  goTimeoutMs?: number;
  /** Values per call (default 1024). */
  chunk?: number;
  chunkSleepMs?: number;
  /** Yield to the event loop every this many chunks (default every one). */
  yieldEvery?: number;
  refusalSleepMs?: number;
  progressMs?: number;
  /** The libfaketime clock file that `step-resume` steps. */
  clockFile?: string;
  /** One `fill` of `count` IDs, once armed and within `beforeDeadlineMs` of the lease's deadline. */
  burst?: { count: number; beforeDeadlineMs: number };
  releaseTimeoutMs?: number;
}

/** Host monotonic ms to the µs: `systemClock.monotonic()` reads the same clock, so a lease's times need no shift. */
export const hostT = (ms: number): number => Math.round(ms * 1000) / 1000;

/** Prints one event line (bigints as strings), with `t`. */
export function say(obj: Record<string, unknown>): void {
  process.stdout.write(
    JSON.stringify({ ...obj, t: hostT(hostMonotonicMs()) }, (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v,
    ) + '\n',
  );
}

/** A refusal's FLURRY_E_… code, or `UNCODED:<name>` for anything else. */
export function codeOf(e: unknown): string {
  const c = (e as { code?: unknown })?.code;
  return typeof c === 'string' && c.startsWith('FLURRY_E_') ? c : `UNCODED:${(e as Error)?.name ?? typeof e}`;
}

/** Refusals by code; an uncoded one is printed (the first 3 of each) as an `error` event. */
export const refusals: Record<string, number> = {};
export function refuse(e: unknown): string {
  const c = codeOf(e);
  refusals[c] = (refusals[c] ?? 0) + 1;
  if (!c.startsWith('FLURRY_E_') && refusals[c] <= 3)
    say({ ev: 'error', where: 'issue', code: c, message: String((e as Error)?.stack ?? e).slice(0, 800) });
  return c;
}

/** The control words read from stdin (holder-issue.ts); its end (or `stop`) stops the holder. */
export const control = {
  stop: false,
  stoppedBy: null as string | null,
  go: false,
  marks: [] as string[],
  pauseAfterMark: false,
  paused: false,
  stepBehindMs: null as number | null,
  burstArmed: false,
  onStop: (): void => undefined,
};
const stopBy = (why: string): void => {
  control.stop = true;
  control.stoppedBy ??= why;
  control.onStop();
};
createInterface({ input: process.stdin })
  .on('line', (l) => {
    const [w = '', arg = ''] = l.trim().split(/ (.*)/);
    if (w === 'go') control.go = true;
    else if (w === 'stop') stopBy('stop');
    else if (w === 'mark') control.marks.push(arg);
    else if (w === 'pause') {
      control.marks.push(arg);
      control.pauseAfterMark = true;
    } else if (w === 'resume') control.paused = false;
    else if (w === 'step-resume') {
      control.stepBehindMs = Number(arg);
      control.paused = false;
    } else if (w === 'arm') control.burstArmed = true;
  })
  .on('close', () => stopBy('stdin closed'));

/** What the issuing loop calls: a leased generator, or the pinned generator in the same shape. */
export type Issuer = Pick<LeasedGenerator, 'next' | 'fill' | 'close'> & {
  generator: Generator | UuidGenerator;
  lease?: LeasedGenerator['lease'];
  nextBytes?(): Uint8Array;
  batch(n: number, form?: 'bytes'): ArrayLike<bigint | Uint8Array>;
};

const mono = (): number => performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Resume {
  behindMs: number | null;
  behindAtResumeMs: number | null;
  firstStallMs: number | null;
  pausedMs: number;
  lagMs: number;
  stepToCallMs: number | null;
}

/** Runs the loop until `stop`, stdin's end, `durationMs`, `maxIds` or `afterFirstMs`; prints `done`. */
export async function issue(
  cfg: Omit<IssueConfig, 'mode'> & { mode?: string; uuid?: unknown },
  lg: Issuer,
  leaseEvents: Record<string, number>,
): Promise<void> {
  /** 64-bit words per issued value: 1 for an ID, 2 for a UUID (its 16 bytes). */
  const W = cfg.uuid ? 2 : 1;
  const gen = lg.generator;
  {
    const until = mono() + (cfg.goTimeoutMs ?? 60_000);
    while (!control.go && !control.stop && mono() < until) await sleep(5);
  }
  const fd = openSync(cfg.out ?? '/dev/null', 'a');
  const chunk = cfg.chunk ?? 1024;
  const buf = new BigUint64Array(chunk * W);
  const bytes = new Uint8Array(buf.buffer);
  /** The value at index i as reported (an ID, or a UUID as 32 hex digits). */
  const valueAt = (i: number): bigint | string =>
    W === 1 ? buf[i] : Buffer.from(bytes.subarray(i * 16, i * 16 + 16)).toString('hex');
  let issued = 0;
  let partialFills = 0;
  let maxStallMs = 0;
  let maxCallMs = 0;
  let firstId: bigint | string | null = null;
  let lastId: bigint | string | null = null;
  let firstIssueWall: number | null = null;
  let firstIssueMono: number | null = null;
  let lastOkWall: number | null = null; // wall time of the last successful issue
  let lastProgress = mono();
  let round = 0;
  const start = mono();
  const until = start + (cfg.durationMs ?? 1000);
  let wantSince: number | null = null; // when the caller started waiting for its next ID
  // After a pause: how far the (possibly stepped) wall clock was behind the last issued ID
  // when the first call after the resume began (read right beside the start of that call's
  // stall, so nothing the process does in between is counted), how long that call waited,
  // the scheduling delay seen while paused (the longest overshoot of a 1 ms sleep) and, after
  // `step-resume`, how long before that call the step was made. Reported with the next mark,
  // so the parent judges a backwards wait from the moment the call began, not from its phase
  // mark.
  let resume: Resume | null = null;
  let steppedAt: number | null = null; // mono() when this process stepped the clock

  const record = (ids: Uint8Array, first: bigint | string, last: bigint | string, n: number): void => {
    writeSync(fd, ids);
    if (firstId === null) {
      firstId = first;
      firstIssueWall = Date.now();
      firstIssueMono = mono();
    }
    lastId = last;
    issued += n;
    lastOkWall = Date.now();
  };
  const emit = (n: number): void => {
    if (n > 0) record(bytes.subarray(0, n * 8 * W), valueAt(0), valueAt(n - 1), n);
  };

  let burstDone = false;
  // One large batch issued in a single call (what a caller asking for millions of IDs at
  // once gets), timed to end just before the lease's fencing deadline: with borrowing it
  // takes ticks ahead of the wall clock that no renewal ever reports.
  const burst = (count: number): void => {
    const lease = lg.lease!;
    const before = lease.msUntilDeadline();
    const big = new BigUint64Array(count);
    const t0 = mono();
    let n = 0;
    let code: string | null = null;
    try {
      n = lg.fill(big, 0, big.length);
    } catch (e) {
      code = refuse(e);
      while (n < big.length && big[n] !== 0n) n++;
      if (n > 0) partialFills++;
    }
    if (n > 0) record(new Uint8Array(big.buffer, 0, n * 8), big[0], big[n - 1], n);
    say({
      ev: 'burst',
      count: n,
      ms: mono() - t0,
      code,
      msUntilDeadlineBefore: before,
      msUntilDeadlineAfter: lease.msUntilDeadline(),
      lastIssuedUnixMs: gen.lastIssuedUnixMs,
      wall: Date.now(),
      lastId: n ? big[n - 1].toString() : null,
    });
  };

  while (!control.stop && mono() < until) {
    if (cfg.maxIds && issued >= cfg.maxIds) {
      control.stoppedBy ??= 'maxIds';
      break;
    }
    if (cfg.burst && control.burstArmed && !burstDone) {
      const l = lg.lease;
      if (l && l.state === 'held' && l.msUntilDeadline() > 0 && l.msUntilDeadline() <= cfg.burst.beforeDeadlineMs) {
        burstDone = true;
        burst(cfg.burst.count);
        continue;
      }
    }
    if (cfg.afterFirstMs && firstIssueMono !== null && mono() - firstIssueMono > cfg.afterFirstMs) {
      control.stoppedBy ??= 'afterFirstMs';
      break;
    }
    const m = cfg.mode === 'mixed' ? (['fill', 'next', 'batch'] as const)[round % 3] : (cfg.mode ?? 'fill');
    round++;
    const n = Math.min(chunk, cfg.maxIds ? cfg.maxIds - issued : chunk);
    if (resume && resume.behindMs === null) {
      // The first call after a resume: how far the clock is behind the last ID, read between
      // two monotonic readings: the stall counts from the first (a reading delayed inside
      // Date.now(), which reads the offset file under libfaketime, only makes the clock look
      // less far behind than the call then waits), the time since the step up to the second.
      const last = gen.lastIssuedUnixMs;
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
    let err: unknown = null;
    try {
      if (m === 'fill') {
        buf.fill(0n, 0, n * W);
        got = lg.fill(W === 1 ? buf : (bytes as never), 0, n);
      } else if (m === 'batch') {
        const arr = W === 1 ? lg.batch(n) : lg.batch(n, 'bytes');
        for (let i = 0; i < arr.length; i++)
          if (W === 1) buf[i] = arr[i] as bigint;
          else bytes.set(arr[i] as Uint8Array, i * 16);
        got = arr.length;
      } else if (W === 2) {
        for (; got < n; got++) bytes.set(lg.nextBytes!(), got * 16);
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
    while (control.marks.length)
      say({
        ev: 'mark',
        phase: control.marks.shift(),
        issued,
        refusals: { ...refusals },
        maxStallMs,
        wall: Date.now(),
        lastId: (lastId as bigint | string | null)?.toString(),
        lastIssuedUnixMs: gen.lastIssuedUnixMs,
        resume,
      });
    if (control.pauseAfterMark) {
      control.pauseAfterMark = false;
      control.paused = true;
      const pausedAt = mono();
      let lagMs = 0;
      while (control.paused && !control.stop && mono() - pausedAt < 30_000) {
        const s0 = mono();
        await sleep(1);
        lagMs = Math.max(lagMs, mono() - s0 - 1);
      }
      steppedAt = null;
      const last = gen.lastIssuedUnixMs;
      if (control.stepBehindMs !== null && cfg.clockFile && typeof last === 'number') {
        // The real time is this process's wall clock less the offset it runs under now; the
        // step counts from this reading (writing the file took up to 44 ms here under load).
        const before = readOffset(cfg.clockFile);
        steppedAt = mono(); // before the reading: a read delayed inside Date.now() counts in stepToCallMs
        const wallNow = Date.now();
        const offsetMs = Math.round(last - control.stepBehindMs - (wallNow - before));
        setOffset(cfg.clockFile, offsetMs);
        say({ ev: 'stepped', offsetMs, behindMs: last - Date.now(), writeMs: mono() - steppedAt, wall: Date.now() });
      }
      control.stepBehindMs = null;
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
      say({ ev: 'progress', issued, refusals, wall: Date.now(), m: lastProgress, lastId, lastOkWall });
    }
  }
  // Why the loop ended: asked to ('stop'), or on its own ('durationMs': its time ran out).
  control.stoppedBy ??= control.stop ? 'stop' : 'durationMs';
  // A caller still waiting when the run ends saw a stall too.
  if (wantSince !== null && mono() - wantSince > maxStallMs) maxStallMs = mono() - wantSince;
  closeSync(fd);
  const lease = lg.lease;
  say({
    ev: 'done',
    pid: process.pid,
    issued,
    refusals,
    partialFills,
    maxStallMs,
    maxCallMs,
    firstId,
    lastId,
    firstIssueWall,
    firstIssueAfterMs: firstIssueMono === null ? null : firstIssueMono - start,
    lastIssuedUnixMs: gen.lastIssuedUnixMs,
    generatorStats: { ...gen.stats },
    leaseStats: lease?.stats ? { ...lease.stats } : undefined,
    leaseEvents,
    node: gen.node,
    slot: lease?.slot,
    notBeforeMs: lease?.notBeforeMs,
    elapsedMs: mono() - start,
    lastOkWall,
    stoppedBy: control.stoppedBy,
    wall: Date.now(),
  });
}
