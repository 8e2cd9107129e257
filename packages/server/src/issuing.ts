// Every caller (HTTP routes, public IDs, Thrift, memcached, gRPC) issues through LeasedIssuer,
// which counts what it issued and logs what was refused.
import type { FlurryError, Generator, GeneratorEvent, FlurryLogger } from '@flurry/core';
import type { LeasedGenerator } from '@flurry/coordination';
import type { IdSource } from './http/context.js';
import { EpisodeLog, type Schedule } from './log-throttle.js';

export type { FlurryLogger as EventLogger } from '@flurry/core';

/** Options of {@link LeasedIssuer}. */
export interface IssuerOptions {
  /** Where refusal episodes are logged. */
  logger: FlurryLogger;
  /** Sees every generator event (the metrics). */
  count: (e: GeneratorEvent) => void;
  /** The error thrown while no generator is attached yet. */
  notStarted: () => FlurryError;
  /** The rate limit's monotonic clock (see log-throttle.ts). */
  now?: () => number;
  /** The rate limit's timer (`null`: none). */
  schedule?: Schedule | null;
}

/** The one caller of the service's leased generator. */
export class LeasedIssuer implements IdSource {
  /** Give to the generator (`generator: { onEvent }`): counts and logs its events. */
  readonly onEvent: (e: GeneratorEvent) => void;
  private readonly issuedOk: () => void;
  private readonly logging: EventLogging;
  private readonly notStarted: () => FlurryError;
  private lg: LeasedGenerator | undefined = undefined;
  private gen: Generator | undefined = undefined;
  /** Issued by generators attached before the current one. */
  private issuedBase = 0;

  constructor(opts: IssuerOptions) {
    this.logging = generatorEventLogging(opts.logger, opts.count, opts.now, opts.schedule);
    ({ onEvent: this.onEvent, issuedOk: this.issuedOk } = this.logging);
    this.notStarted = opts.notStarted;
  }

  /** Starts issuing from `lg` (made with `generator: { onEvent: this.onEvent }`). */
  attach(lg: LeasedGenerator): void {
    this.issuedBase = this.issued();
    this.lg = lg;
    this.gen = lg.generator;
  }

  /** The leased generator, once attached. */
  get leased(): LeasedGenerator | undefined {
    return this.lg;
  }

  /** One new ID. */
  next(): bigint {
    const g = this.gen;
    if (g === undefined) throw this.notStarted();
    const id = g.next();
    this.issuedOk();
    return id;
  }

  /** One new ID as a decimal string. */
  nextString(): string {
    const g = this.gen;
    if (g === undefined) throw this.notStarted();
    const id = g.nextString();
    this.issuedOk();
    return id;
  }

  /** Writes `count` new increasing IDs into `target` from `offset`. */
  fill(target: BigUint64Array, offset: number, count: number): number {
    const g = this.gen;
    if (g === undefined) throw this.notStarted();
    const n = g.fill(target, offset, count);
    this.issuedOk();
    return n;
  }

  /** IDs issued by this process. */
  issued(): number {
    return this.issuedBase + (this.gen?.stats.issued ?? 0);
  }

  /** Writes the refusal counts not yet logged (call at shutdown, once nothing issues any more). */
  flush(): void {
    this.logging.flush();
  }
}

/** What {@link generatorEventLogging} returns. */
export type EventLogging = { onEvent: (e: GeneratorEvent) => void; issuedOk: () => void; flush: () => void };

/**
 * The service's handling of generator events: `count` sees every event (the metrics); the
 * logs are rate-limited per episode ({@link EpisodeLog}). Fenced and `throw`-policy refusals
 * end with one info line at the next issued ID (call `issuedOk()` after each issue).
 */
export function generatorEventLogging(
  logger: FlurryLogger,
  count: (e: GeneratorEvent) => void,
  now?: () => number,
  schedule?: Schedule | null,
): EventLogging {
  const t = { logger, ...(now === undefined ? {} : { now }), ...(schedule === undefined ? {} : { schedule }) };
  const stepped = 'the wall clock stepped backwards';
  const fenced = new EpisodeLog({
    message: 'refused to issue: lease deadline passed',
    noun: 'refusals',
    endMessage: 'issuing resumed: the lease is valid again',
    ...t,
  });
  const backwardsRefused = new EpisodeLog({
    message: stepped,
    noun: 'refusals',
    endMessage: 'issuing resumed after the clock stepped backwards',
    maxOf: 'byMs',
    ...t,
  });
  const backwards = new EpisodeLog({ message: stepped, noun: 'clock-backwards events', maxOf: 'byMs', ...t });
  return {
    onEvent: (e) => {
      count(e);
      if (e.type === 'clock-backwards')
        (e.action === 'threw' ? backwardsRefused : backwards).event({ byMs: e.byMs, action: e.action });
      else if (e.type === 'high-water-wait')
        logger.warn({ waitedMs: e.waitedMs }, "waited for the clock to pass the node's high-water mark");
      else if (e.type === 'fenced') fenced.event({ code: e.code });
    },
    issuedOk: () => {
      if (fenced.active || backwardsRefused.active) {
        fenced.end();
        backwardsRefused.end();
      }
    },
    flush: () => {
      fenced.flush();
      backwardsRefused.flush();
      backwards.flush();
    },
  };
}
