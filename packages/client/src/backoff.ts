/**
 * Exponential backoff for servers that failed: the n-th consecutive failure keeps a
 * server out of rotation for `initialMs · 2^(n-1)`, capped at `maxMs`, stretched by up to
 * `jitter` (a fraction) so a fleet of clients does not retry in lock step.
 */
export interface BackoffOptions {
  /** Delay after the first failure, ms; default 100. */
  initialMs?: number;
  /** Longest delay, ms; default 10,000. */
  maxMs?: number;
  /** Up to this fraction is added at random; default 0.2. */
  jitter?: number;
  /** Source of randomness in [0, 1); default `Math.random`. */
  random?: () => number;
}

/** Computes retry delays. */
export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly jitter: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 100;
    this.maxMs = opts.maxMs ?? 10_000;
    this.jitter = opts.jitter ?? 0.2;
    this.random = opts.random ?? Math.random;
  }

  /** The delay after `failures` consecutive failures (≥ 1), ms. */
  delayFor(failures: number): number {
    const exp = Math.min(Math.max(failures, 1) - 1, 40);
    const base = Math.min(this.maxMs, this.initialMs * 2 ** exp);
    return Math.round(base * (1 + this.jitter * this.random()));
  }
}
