// Rate-limited logging of repeated events ("episodes", docs/operations.md#logging): the first at
// warn, then at most one summary per interval, and one info line when the episode ends.
import type { FlurryLogger } from '@flurry/core';

/** Runs `fn` once after `ms` milliseconds; returns its cancel (default: an unref'd `setTimeout`). */
export type Schedule = (fn: () => void, ms: number) => () => void;

/** Options of {@link EpisodeLog}: `message` warns of each event (summaries add the count of `noun`). */
export interface EpisodeLogOptions {
  readonly logger: FlurryLogger;
  readonly message: string;
  readonly noun: string;
  /** The info message when the episode ends; without it {@link EpisodeLog.end} only sums up the pending events. */
  readonly endMessage?: string;
  /** A numeric field summed up as its largest (and `<field>Min` its smallest) value: `byMs`. */
  readonly maxOf?: string;
  readonly now?: () => number;
  /** At most one summary line per this many ms (default 10 000). */
  readonly intervalMs?: number;
  /** The timer that sums up events still pending an interval after the last line; `null`: none (only `flush`). */
  readonly schedule?: Schedule | null;
}

const count = (n: number): string => n.toLocaleString('en-US');
const seconds = (ms: number): string => String(Math.round(ms / 1000));
const unrefTimeout: Schedule = (fn, ms) => {
  const h = setTimeout(fn, ms);
  h.unref();
  return () => clearTimeout(h);
};

/** One kind of repeated event, logged per episode (see the module comment). */
export class EpisodeLog {
  /** True between the first event of an episode and {@link end}. Cheap to read on a hot path. */
  active = false;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly schedule: Schedule | null;
  private startedAt = 0;
  private lastLineAt = 0;
  private lastEventAt = 0;
  private lastFields: object = {};
  private unlogged = 0;
  private total = 0;
  // The `maxOf` field over the unlogged events (NaN: none).
  private max = NaN;
  private min = NaN;
  private cancelTimer: (() => void) | undefined;

  constructor(private readonly o: EpisodeLogOptions) {
    this.now = o.now ?? (() => performance.now());
    this.intervalMs = o.intervalMs ?? 10_000;
    this.schedule = o.schedule === undefined ? unrefTimeout : o.schedule;
  }

  /** Records one event; one more than the interval after the previous starts a new episode. */
  event(fields: object = {}): void {
    const now = this.now();
    if (this.active && now - this.lastEventAt > this.intervalMs) {
      // A quiet gap: this episode is over (no success ended it; nothing says one happened).
      this.flush();
      this.active = false;
    }
    this.lastEventAt = now;
    this.lastFields = fields;
    if (!this.active) {
      this.active = true;
      this.startedAt = this.lastLineAt = now;
      this.total = 1;
      this.unlogged = 0;
      this.o.logger.warn(fields, this.o.message);
      return;
    }
    this.total++;
    this.unlogged++;
    const v = this.o.maxOf === undefined ? undefined : (fields as Record<string, unknown>)[this.o.maxOf];
    if (typeof v === 'number') {
      if (!(v <= this.max)) this.max = v;
      if (!(v >= this.min)) this.min = v;
    }
    const since = now - this.lastLineAt;
    if (since < this.intervalMs) {
      if (this.unlogged === 1 && this.schedule !== null)
        this.cancelTimer = this.schedule(() => this.flush(), this.intervalMs - since);
      return;
    }
    this.summary(now);
  }

  /** Sums up the events since the last line in one warn line (call it at shutdown). */
  flush(): void {
    if (this.active && this.unlogged > 0) this.summary(this.now());
  }

  /** Ends the current episode: one info line with its figures (without `endMessage`: `flush` only). */
  end(): void {
    if (!this.active) return;
    if (this.o.endMessage === undefined) this.flush();
    this.active = false;
    if (this.o.endMessage === undefined) return;
    const durationMs = this.now() - this.startedAt;
    const unlogged = this.unlogged;
    this.o.logger.info(
      { total: this.total, unlogged, durationMs: Math.round(durationMs), ...this.window() },
      `${this.o.endMessage} (${count(this.total)} ${this.o.noun} in ${seconds(durationMs)} s${unlogged > 0 ? `, ${count(unlogged)} of them since the last line` : ''})`,
    );
    this.lineWritten(this.lastLineAt);
  }

  private summary(now: number): void {
    const since = now - this.lastLineAt;
    this.o.logger.warn(
      {
        ...this.lastFields,
        ...this.window(),
        suppressed: this.unlogged,
        sinceLastLineMs: Math.round(since),
        episodeTotal: this.total,
      },
      `${this.o.message} (${count(this.unlogged)} more ${this.o.noun} in the last ${seconds(since)} s)`,
    );
    this.lineWritten(now);
  }

  private lineWritten(at: number): void {
    this.unlogged = 0;
    this.lastLineAt = at;
    this.max = this.min = NaN;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private window(): Record<string, number> {
    const f = this.o.maxOf;
    return f === undefined || Number.isNaN(this.max) ? {} : { [f]: this.max, [`${f}Min`]: this.min };
  }
}
