// Waiting out an outage of the sequence store or the registry at start-up.
import { FlurryError } from '@flurry/core';
import { failureKind, serverError } from './errors.js';

/** The timers {@link retryOutage} sleeps with (default: Node's). */
export interface RetryTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** What the start waits for after a failed try: the step, its last error, failed tries, the next delay, since (Unix ms). */
export interface StartWait {
  readonly step: 'store' | 'registry';
  readonly error: FlurryError;
  readonly attempt: number;
  readonly retryInMs: number;
  readonly since: number;
}

/** Options of {@link retryOutage}: the first delay (500 ms) doubling up to `maxMs` (30 s), timers and clock. */
export interface RetryOutageOptions {
  initialMs?: number;
  maxMs?: number;
  timers?: RetryTimers;
  now?: () => number;
  /** Aborting it ends the wait with `FLURRY_E_UNAVAILABLE`. */
  signal?: AbortSignal;
  onWait?: (wait: StartWait) => void;
  /** Called when a try succeeds after failed ones: the last wait, and the ms since the first failure. */
  onAnswered?: (wait: StartWait, waitedMs: number) => void;
}

/** What a step waits for, in words: `the sequence store` or `the node-ID registry`. */
export const waitedFor = (step: StartWait['step']): string =>
  step === 'store' ? 'the sequence store' : 'the node-ID registry';

const NODE_TIMERS: RetryTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Runs `attempt` until it resolves, waiting out outages; rethrows any other error (`FLURRY_E_UNAVAILABLE` on abort). */
export async function retryOutage<T>(
  step: StartWait['step'],
  attempt: () => Promise<T>,
  options: RetryOutageOptions = {},
): Promise<T> {
  const timers = options.timers ?? NODE_TIMERS;
  const now = options.now ?? Date.now;
  const maxMs = options.maxMs ?? 30_000;
  let delayMs = Math.min(options.initialMs ?? 500, maxMs);
  let wait: StartWait | undefined;
  for (let tries = 1; ; tries++) {
    if (options.signal?.aborted) throw abortError(step);
    try {
      const value = await attempt();
      if (wait) options.onAnswered?.(wait, now() - wait.since);
      return value;
    } catch (err) {
      if (failureKind(err) !== 'outage') throw err;
      wait = { step, error: err as FlurryError, attempt: tries, retryInMs: delayMs, since: wait?.since ?? now() };
      options.onWait?.(wait);
      if (options.signal?.aborted) throw abortError(step); // aborted while the try ran
      await sleep(timers, delayMs, options.signal, step);
      delayMs = Math.min(delayMs * 2, maxMs);
    }
  }
}

function abortError(step: StartWait['step']): FlurryError {
  return serverError('UNAVAILABLE', `the start was stopped while waiting for ${waitedFor(step)}`, { step });
}

function sleep(timers: RetryTimers, ms: number, signal: AbortSignal | undefined, step: StartWait['step']) {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      timers.clearTimeout(handle);
      reject(abortError(step));
    };
    const handle = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
