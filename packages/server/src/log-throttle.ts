/**
 * Rate-limited logging of repeated events ("episodes"): the first event at warn, then at
 * most one summary per interval, an unref'd timer (or {@link EpisodeLog.flush}) for what is
 * still pending, and one info line when the episode ends (docs/operations.md#logging).
 * Time and timer are injectable. Count every event in the metrics, whatever is logged.
 */

import type { FlurryLogger } from '@flurry/core';

/**
 * Runs `fn` once after `ms` milliseconds and returns a function that cancels it. The
 * default is an unref'd `setTimeout`, so a pending summary never keeps the process alive.
 */
export type Schedule = (fn: () => void, ms: number) => () => void;

/** Options of {@link EpisodeLog}. */
export interface EpisodeLogOptions {
  readonly logger: FlurryLogger;
  /** The warn message of each event (summaries append the count). */
  readonly message: string;
  /** What the events are, plural, for summaries: `refusals`. */
  readonly noun: string;
  /** The info message when the episode ends; without it {@link EpisodeLog.end} only sums up the pending events. */
  readonly endMessage?: string;
  /**
   * A numeric field whose value in a summary (and in the end line) is the largest over the
   * events it sums up, with `<field>Min` the smallest: `byMs`.
   */
  readonly maxOf?: string;
  /** Monotonic milliseconds (default `performance.now()`). */
  readonly now?: () => number;
  /** At most one summary line per this many ms (default 10 000). */
  readonly intervalMs?: number;
  /**
   * The timer that sums up events still pending an interval after the last line (default an
   * unref'd `setTimeout`); `null`: no timer, only {@link EpisodeLog.flush} and later events do.
   */
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
  /** The fields of the latest event (a summary carries them). */
  private lastFields: object = {};
  /** Events since the last line written. */
  private unlogged = 0;
  /** Events of the episode. */
  private total = 0;
  /** Largest and smallest value of the `maxOf` field over the unlogged events (NaN: none). */
  private max = NaN;
  private min = NaN;
  /** Cancels the pending summary timer; set exactly while `unlogged > 0` and a scheduler exists. */
  private cancelTimer: (() => void) | undefined;

  constructor(private readonly o: EpisodeLogOptions) {
    this.now = o.now ?? (() => performance.now());
    this.intervalMs = o.intervalMs ?? 10_000;
    this.schedule = o.schedule === undefined ? unrefTimeout : o.schedule;
  }

  /**
   * Records one event: the first of an episode is logged at warn with `fields`; later ones
   * are counted and summed up at most once per interval. An event more than the interval
   * after the previous one starts a new episode.
   */
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

  /**
   * Sums up the events counted since the last line, if any, in one warn line (the
   * episode goes on). Call it at shutdown so no count is lost.
   */
  flush(): void {
    if (this.active && this.unlogged > 0) this.summary(this.now());
  }

  /**
   * Ends the current episode, if any: one info line with its total, its duration and the
   * events not yet summed up (without an end message: the summary of those only); the next
   * event is logged again at once.
   */
  end(): void {
    if (!this.active) return;
    if (this.o.endMessage === undefined) {
      this.flush();
      this.active = false;
      return;
    }
    this.active = false;
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

  /** Resets the window after a line: nothing pending, no timer. */
  private lineWritten(at: number): void {
    this.unlogged = 0;
    this.lastLineAt = at;
    this.max = this.min = NaN;
    if (this.cancelTimer !== undefined) {
      this.cancelTimer();
      this.cancelTimer = undefined;
    }
  }

  /** The `maxOf` field over the unlogged events: `{ byMs: largest, byMsMin: smallest }`. */
  private window(): Record<string, number> {
    const f = this.o.maxOf;
    return f === undefined || Number.isNaN(this.max) ? {} : { [f]: this.max, [`${f}Min`]: this.min };
  }
}
