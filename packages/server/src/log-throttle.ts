/**
 * Rate-limited logging of repeated events ("episodes"), so a server refusing every call
 * (fenced after its lease deadline, or a clock step under the `throw` policy) writes a few
 * lines instead of one per refused call:
 *
 * - the first event of an episode is logged at warn, as it is;
 * - further events are counted, and at most once per interval (10 s) a warn line sums them
 *   up: `refused to issue: lease deadline passed (4,812 more refusals in the last 10 s)`;
 * - {@link EpisodeLog.end} (called at the next success) logs one info line with the
 *   episode's total and duration, and re-arms the first-event line.
 *
 * The time comes from an injectable monotonic clock (ms). Metrics are not this module's
 * business: count every event there, whatever is logged.
 *
 * @example
 * ```ts
 * const fenced = new EpisodeLog({ logger, message: 'refused to issue: lease deadline passed', noun: 'refusals', endMessage: 'issuing resumed' });
 * fenced.event({ code: 'FLURRY_E_LEASE_EXPIRED' }); // warn: refused to issue: lease deadline passed
 * fenced.event({ code: 'FLURRY_E_LEASE_EXPIRED' }); // counted, not logged
 * fenced.end();                                      // info: issuing resumed (2 refusals in 0 s)
 * ```
 */

/**
 * The two levels an {@link EpisodeLog} writes at (pino-shaped).
 *
 * @example
 * ```ts
 * const logger: ThrottledLogger = pino();
 * ```
 */
export interface ThrottledLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/**
 * Options of {@link EpisodeLog}.
 *
 * @example
 * ```ts
 * const opts: EpisodeLogOptions = { logger, message: 'the wall clock stepped backwards', noun: 'refusals', now: () => performance.now() };
 * ```
 */
export interface EpisodeLogOptions {
  readonly logger: ThrottledLogger;
  /** The warn message of each event (summaries append the count). */
  readonly message: string;
  /** What the events are, plural, for summaries: `refusals`. */
  readonly noun: string;
  /** The info message when the episode ends; without it {@link EpisodeLog.end} logs nothing. */
  readonly endMessage?: string;
  /** Monotonic milliseconds (default `performance.now()`). */
  readonly now?: () => number;
  /** At most one summary line per this many ms (default 10 000). */
  readonly intervalMs?: number;
}

const count = (n: number): string => n.toLocaleString('en-US');
const seconds = (ms: number): string => String(Math.round(ms / 1000));

/**
 * One kind of repeated event, logged per episode (see the module comment).
 *
 * @example
 * ```ts
 * const log = new EpisodeLog({ logger, message: 'refused to issue: lease deadline passed', noun: 'refusals', endMessage: 'issuing resumed after the lease deadline refusals' });
 * log.event({ code: 'FLURRY_E_LEASE_EXPIRED' });
 * ```
 */
export class EpisodeLog {
  /** True between the first event of an episode and {@link end}. Cheap to read on a hot path. */
  active = false;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private startedAt = 0;
  private lastLineAt = 0;
  /** Events since the last line written. */
  private unlogged = 0;
  /** Events of the episode. */
  private total = 0;

  constructor(private readonly o: EpisodeLogOptions) {
    this.now = o.now ?? (() => performance.now());
    this.intervalMs = o.intervalMs ?? 10_000;
  }

  /**
   * Records one event: the first of an episode is logged at warn with `fields`; later ones
   * are counted and summed up at most once per interval.
   *
   * @example
   * ```ts
   * log.event({ byMs: 40, action: 'threw' });
   * ```
   */
  event(fields: object = {}): void {
    const now = this.now();
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
    const since = now - this.lastLineAt;
    if (since < this.intervalMs) return;
    this.o.logger.warn(
      { ...fields, suppressed: this.unlogged, sinceLastLineMs: Math.round(since), episodeTotal: this.total },
      `${this.o.message} (${count(this.unlogged)} more ${this.o.noun} in the last ${seconds(since)} s)`,
    );
    this.unlogged = 0;
    this.lastLineAt = now;
  }

  /**
   * Ends the current episode, if any: one info line with its total, its duration and the
   * events not yet summed up; the next event is logged again at once.
   *
   * @example
   * ```ts
   * const id = gen.next(); log.end();
   * ```
   */
  end(): void {
    if (!this.active) return;
    this.active = false;
    if (this.o.endMessage === undefined) return;
    const durationMs = this.now() - this.startedAt;
    this.o.logger.info(
      { total: this.total, unlogged: this.unlogged, durationMs: Math.round(durationMs) },
      `${this.o.endMessage} (${count(this.total)} ${this.o.noun} in ${seconds(durationMs)} s${this.unlogged > 0 ? `, ${count(this.unlogged)} of them since the last line` : ''})`,
    );
  }
}
