// Every caller (HTTP routes, public IDs, Thrift, memcached, gRPC) issues through LeasedIssuer, which counts
// what it issued and logs what was refused; UuidIssuer issues UUIDv7 on the same node lease (same node,
// fencing deadlines and floor), so its UUIDs are unique as the IDs are (docs/uuids.md#in-the-service).
import {
  UuidFormat,
  UUID_DEFAULTS,
  type FlurryError,
  type FlurryLogger,
  type Generator,
  type GeneratorEvent,
  type Layout,
  type UuidGenerator,
  type UuidTextForm,
} from '@flurry/core';
import {
  uuidGeneratorOnLease,
  type LeasedGenerator,
  type LeasedUuidGenerator,
  type Registry,
} from '@flurry/coordination';
import type { IdSource, UuidSource } from './http/context.js';
import { EpisodeLog, type Schedule } from './log-throttle.js';

export type { FlurryLogger as EventLogger } from '@flurry/core';

/** Options of {@link LeasedIssuer}: where refusal episodes are logged, what sees every event (the metrics), and the log's clock and timer. */
export interface IssuerOptions {
  logger: FlurryLogger;
  count: (e: GeneratorEvent) => void;
  /** The error thrown while no generator is attached yet. */
  notStarted: () => FlurryError;
  now?: () => number;
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

  get leased(): LeasedGenerator | undefined {
    return this.lg;
  }

  next(): bigint {
    const g = this.gen;
    if (g === undefined) throw this.notStarted();
    const id = g.next();
    this.issuedOk();
    return id;
  }

  nextString(): string {
    const g = this.gen;
    if (g === undefined) throw this.notStarted();
    const id = g.nextString();
    this.issuedOk();
    return id;
  }

  fill(target: BigUint64Array, offset: number, count: number): number {
    const g = this.gen;
    if (g === undefined) throw this.notStarted();
    const n = g.fill(target, offset, count);
    this.issuedOk();
    return n;
  }

  /** IDs issued by this process (every generator it has had). */
  issued(): number {
    return this.issuedBase + (this.gen?.stats.issued ?? 0);
  }

  /** Writes the refusal counts not yet logged (call at shutdown, once nothing issues any more). */
  flush(): void {
    this.logging.flush();
  }
}

type EventLogging = { onEvent: (e: GeneratorEvent) => void; issuedOk: () => void; flush: () => void };

/**
 * The service's handling of generator events: `count` sees every event; the logs are rate-limited per
 * episode. Fenced and `throw`-policy refusals end with one info line at the next issue (`issuedOk()`).
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

type UuidPolicies = NonNullable<Parameters<typeof uuidGeneratorOnLease>[1]['generator']>;

/** The ID issuer's options, and the Snowflake layout: its node fields are the UUID node. */
type UuidIssuerOptions = Omit<IssuerOptions, 'now' | 'schedule'> & { layout: Layout };

/** The service's UUIDv7 on its Snowflake lease (see the module comment). */
export class UuidIssuer implements UuidSource {
  readonly format: UuidFormat;
  private gen: LeasedUuidGenerator | undefined = undefined;
  private failed: Error | undefined = undefined;
  private readonly logging: EventLogging;
  private readonly issuedOk: () => void;

  constructor(private readonly opts: UuidIssuerOptions) {
    // 16 node bits (the UUID default), or the layout's node bits when they are wider.
    const bits = opts.layout.nodeFields.reduce((s, f) => s + f.bits, 0);
    this.format = UuidFormat.from({ nodeBits: Math.max(UUID_DEFAULTS.nodeBits, bits) });
    this.logging = generatorEventLogging(opts.logger, opts.count);
    this.issuedOk = this.logging.issuedOk;
  }

  /** Builds the UUID generator on `lg`'s lease (replacing one built on an earlier lease). */
  attach(lg: LeasedGenerator, registry: Registry, policies: UuidPolicies): void {
    this.gen?.close().catch(() => undefined);
    this.gen = undefined;
    this.failed = undefined;
    try {
      this.gen = uuidGeneratorOnLease(lg.lease, {
        registry,
        layout: this.opts.layout,
        nodeBits: this.format.nodeBits,
        generator: { ...policies, onEvent: this.logging.onEvent },
      });
    } catch (err) {
      // Issuing IDs goes on; the UUID routes answer with this error.
      this.failed = err instanceof Error ? err : new Error(String(err));
    }
  }

  private current(): UuidGenerator {
    const g = this.gen;
    if (g !== undefined) return g.generator;
    throw this.failed ?? this.opts.notStarted();
  }

  next(): string {
    const u = this.current().next();
    this.issuedOk();
    return u;
  }

  nextAs(form: UuidTextForm): string {
    const u = this.current().nextAs(form);
    this.issuedOk();
    return u;
  }

  batch(n: number, form?: UuidTextForm): string[] {
    const u = this.current().batch(n, form);
    this.issuedOk();
    return u;
  }

  /** Closes the generator; the lease stays with the Snowflake generator, which releases it. */
  async close(): Promise<void> {
    this.logging.flush();
    await this.gen?.close();
  }
}
