/**
 * The faults the conformance suite and the torture suite (which imports this file from dist)
 * inject, one plug-in each, in the manner of etcd's robustness failpoints: a name for the
 * reports, whether the fault applies to a target, and `inject`, which puts the fault in,
 * holds it while `hold` runs, then lifts it (also when `hold` throws).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningEngine } from '../testing/harness.js';
import type { Child } from './child.js';
import { LIB, faketimeAvailable, setOffset } from './faketime.js';

/** When a fault was injected, took effect, was lifted and its target was back (wall ms). */
export interface Injected {
  name: string;
  startWall: number;
  effectiveWall: number;
  endWall: number;
  upWall: number;
}

/** How long a fault is held: ms, or until this function settles (called once the fault is in). */
export type Hold = number | (() => Promise<unknown>);

/** One kind of fault. */
export interface Failpoint<T> {
  readonly name: string;
  /** Why it cannot be injected into `target`, or undefined when it can. */
  available(target: T | undefined): string | undefined;
  /** Injects it, holds it (default: not at all), lifts it; resolves with its times. */
  inject(target: T, hold?: Hold): Promise<Injected>;
}

function failpoint<T>(
  name: string,
  missing: string | ((t: T | undefined) => string | undefined),
  put: (t: T) => unknown,
  lift?: (t: T) => unknown,
): Failpoint<T> {
  return {
    name,
    available: typeof missing === 'string' ? (t) => (t === undefined ? missing : undefined) : missing,
    async inject(target, hold = 0) {
      const startWall = Date.now();
      await put(target);
      const effectiveWall = Date.now();
      let endWall: number;
      try {
        await (typeof hold === 'number' ? sleep(hold) : hold());
      } finally {
        endWall = Date.now();
        await lift?.(target);
      }
      return { name, startWall, effectiveWall, endWall, upWall: Date.now() };
    },
  };
}

/** SIGKILL of a child's process group (resolves once it has exited). */
export const holderKill = failpoint<Pick<Child, 'kill' | 'signal'>>('SIGKILL', 'no process', (c) => c.kill());
/** SIGSTOP of a child's process group, SIGCONT when lifted. */
export const holderPause = failpoint<Pick<Child, 'kill' | 'signal'>>(
  'SIGSTOP',
  'no process',
  (c) => c.signal('SIGSTOP'),
  (c) => c.signal('SIGCONT'),
);
/** The engine SIGKILLed, restarted on its data when lifted (`upWall`: once it serves again). */
export const engineRestart = failpoint<RunningEngine>(
  'engine restart',
  'no engine process for this backend',
  (e) => e.kill(),
  (e) => e.restart(),
);
/** The engine stalled with SIGSTOP, SIGCONT when lifted. */
export const enginePause = failpoint<RunningEngine>(
  'engine pause',
  'no engine process for this backend',
  (e) => e.pause(),
  (e) => e.resume(),
);
/** One holder's path to its engine cut (a proxy that blackholes its traffic), healed when lifted. */
export const partition = failpoint<{ cut(): void; heal(): void }>(
  'proxy partition',
  'no proxy in front of the engine',
  (p) => p.cut(),
  (p) => p.heal(),
);
/**
 * The wall clock of every process started with `faketimeEnv(file)` stepped by `ms` (negative =
 * back) at once, as NTP or an operator steps a machine's clock; set right (offset 0) when lifted.
 */
export const clockStep = failpoint<{ file: string; ms: number }>(
  'clock step',
  (t) =>
    !faketimeAvailable()
      ? `libfaketime is missing (${LIB}): apt-get install faketime`
      : t
        ? undefined
        : 'no clock file',
  (t) => setOffset(t.file, t.ms),
  (t) => setOffset(t.file, 0),
);
/**
 * A write whose outcome the writer cannot know: the engine stalled (SIGSTOP) mid-write for
 * longer than the writer's deadline, so the call fails while the engine may still apply it;
 * SIGCONT when lifted. Held at least `deadlineMs` + 1 s whatever `hold` asks.
 */
export const unknownOutcomeWrite: Failpoint<{ engine: RunningEngine; deadlineMs: number }> = {
  name: 'unknown-outcome write',
  available: (t) => (t === undefined ? 'no engine process for this backend' : undefined),
  inject: async (t, hold = 0) => ({
    ...(await enginePause.inject(t.engine, async () => {
      const until = Date.now() + t.deadlineMs + 1_000;
      await (typeof hold === 'number' ? sleep(hold) : hold());
      if (Date.now() < until) await sleep(until - Date.now());
    })),
    name: 'unknown-outcome write',
  }),
};
