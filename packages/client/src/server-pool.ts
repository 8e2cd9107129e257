// The client's view of its servers: up, backing off, refused; their latency; which to ask next.
import type { Clock, FlurryError } from '@flurry/core';

/** How a failed server backs off (see {@link backoffDelay}). */
export type Backoff = { initialMs?: number; maxMs?: number; jitter?: number; random?: () => number };

/** The delay after `failures` failures, ms: `initialMs · 2^(n-1)` capped at `maxMs`, plus up to `jitter` so clients do not retry in lock step. */
export function backoffDelay(o: Backoff, failures: number): number {
  const { initialMs = 100, maxMs = 10_000, jitter = 0.2, random = Math.random } = o;
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(Math.max(failures, 1) - 1, 40));
  return Math.round(base * (1 + jitter * random()));
}

/** How the next server is chosen. */
export type Strategy = 'round-robin' | 'least-latency';

/** The state of one server: `url` without a trailing slash; `unauthorized` after a 401 (never asked again); `maxBatch` learnt from a 400 FLURRY_E_BATCH_COUNT. */
function serverState(base: URL, maxBatch: number) {
  return {
    url: base.href.replace(/\/+$/, ''),
    base,
    up: true,
    failures: 0,
    /** Monotonic ms before which a down server is not asked again. */
    retryAt: 0,
    unauthorized: false,
    lastError: undefined as FlurryError | undefined,
    /** Moving average of successful request times, ms. */
    latencyMs: undefined as number | undefined,
    /** A refill request to it is in flight (at most one at a time). */
    refilling: false,
    maxBatch,
    requests: 0,
  };
}
export type ServerState = ReturnType<typeof serverState>;

/** A summary of one server for an error report. */
export interface ServerReport {
  url: string;
  state: 'up' | 'down' | 'unauthorized';
  retryInMs: number;
  failures: number;
  /** Requests sent to it so far. */
  requests: number;
  /** Moving average of its answer times, ms (null before the first answer). */
  latencyMs: number | null;
  lastError: { code: string; message: string } | null;
}

export class ServerPool {
  readonly servers: readonly ServerState[];
  private cursor = 0;

  constructor(
    urls: readonly URL[],
    readonly strategy: Strategy,
    private readonly backoff: Backoff,
    private readonly clock: Clock,
    maxBatch: number,
  ) {
    this.servers = urls.map((base) => serverState(base, maxBatch));
  }

  eligible(s: ServerState, now = this.clock.monotonic()): boolean {
    return !s.unauthorized && (s.up || now >= s.retryAt);
  }

  /** The server to ask next, or `undefined`; `forRefill` skips those refilling, `exclude` those tried. */
  pick(opts: { forRefill?: boolean; exclude?: ReadonlySet<ServerState> } = {}): ServerState | undefined {
    const now = this.clock.monotonic();
    const n = this.servers.length;
    let best = -1;
    let bestLatency = Infinity;
    // From the cursor, so that equal latencies (and unmeasured servers) take turns; round-robin takes the first.
    for (let k = 0; k < n && !(best >= 0 && this.strategy === 'round-robin'); k++) {
      const i = (this.cursor + k) % n;
      const s = this.servers[i];
      if (!this.eligible(s, now) || (opts.forRefill && s.refilling) || opts.exclude?.has(s)) continue;
      const l = this.strategy === 'least-latency' ? (s.latencyMs ?? 0) : 0;
      if (l < bestLatency) [best, bestLatency] = [i, l];
    }
    if (best < 0) return undefined;
    this.cursor = (best + 1) % n;
    return this.servers[best];
  }

  succeeded(s: ServerState, ms: number): void {
    s.up = true;
    s.failures = 0;
    s.retryAt = 0;
    s.latencyMs = s.latencyMs === undefined ? ms : s.latencyMs * 0.7 + ms * 0.3;
  }

  /** The server is down until the backoff (or the server's `Retry-After`, when longer) has passed. */
  failed(s: ServerState, err: FlurryError, retryAfterMs = 0): void {
    s.up = false;
    s.failures++;
    s.lastError = err;
    s.retryAt = this.clock.monotonic() + Math.max(backoffDelay(this.backoff, s.failures), retryAfterMs);
  }

  refused(s: ServerState, err: FlurryError): void {
    s.up = false;
    s.unauthorized = true;
    s.lastError = err;
  }

  allUnauthorized(): boolean {
    return this.servers.every((s) => s.unauthorized);
  }

  /** Milliseconds until some server may be asked again (0 if one may be asked now; Infinity if none ever). */
  msUntilRetry(): number {
    return Math.max(0, this.nextAskAt(false) - this.clock.monotonic());
  }

  /** When some server (`forRefill`: not refilling) may next be asked (0: now; Infinity: none). */
  nextAskAt(forRefill: boolean): number {
    let at = Infinity;
    for (const s of this.servers)
      if (!s.unauthorized && !(forRefill && s.refilling)) at = Math.min(at, s.up ? 0 : s.retryAt);
    return at;
  }

  report(): ServerReport[] {
    const now = this.clock.monotonic();
    return this.servers.map((s) => ({
      url: s.url,
      state: s.unauthorized ? 'unauthorized' : s.up ? 'up' : 'down',
      retryInMs: s.unauthorized || s.up ? 0 : Math.max(0, Math.ceil(s.retryAt - now)),
      failures: s.failures,
      requests: s.requests,
      latencyMs: s.latencyMs === undefined ? null : Math.round(s.latencyMs * 100) / 100,
      lastError: s.lastError ? { code: s.lastError.code, message: s.lastError.message } : null,
    }));
  }
}
