// The service's UUIDv7 (docs/uuids.md#in-the-service): one UUID generator on the node lease of the
// service's Snowflake generator (same node, fencing deadlines and floor), so its UUIDs are unique as its IDs are.
import {
  FlurryError,
  UuidFormat,
  UUID_DEFAULTS,
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
import type { UuidSource } from './http/context.js';
import { generatorEventLogging, type EventLogger, type EventLogging } from './issuing.js';

/** The generator policies the service gives its generators (from its configuration). */
export type UuidPolicies = NonNullable<Parameters<typeof uuidGeneratorOnLease>[1]['generator']>;

/** Options of {@link UuidIssuer}. */
export interface UuidIssuerOptions {
  /** The service's Snowflake layout: its node fields are the UUID node. */
  layout: Layout;
  /** The error thrown while no lease is held yet. */
  notStarted: () => FlurryError;
  /** Where the UUID generator's refusal episodes are logged (rate-limited, as the ID generator's). */
  logger: EventLogger;
  /** Sees every UUID generator event (the metrics). */
  count: (e: GeneratorEvent) => void;
}

/** The service's UUIDs on its Snowflake lease (see the module comment). */
export class UuidIssuer implements UuidSource {
  readonly format: UuidFormat;
  private gen: LeasedUuidGenerator | undefined = undefined;
  private failed: Error | undefined = undefined;
  /** Episodes of their own: a refusal of UUIDs ends with the next UUID issued. */
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

  /** One new UUID, canonical. */
  next(): string {
    const u = this.current().next();
    this.issuedOk();
    return u;
  }

  /** One new UUID in a text form. */
  nextAs(form: UuidTextForm): string {
    const u = this.current().nextAs(form);
    this.issuedOk();
    return u;
  }

  /** `n` new increasing UUIDs. */
  batch(n: number, form?: UuidTextForm): string[] {
    const u = this.current().batch(n, form);
    this.issuedOk();
    return u;
  }

  /** Closes the generator; the lease stays with the Snowflake generator, which releases it. */
  async close(): Promise<void> {
    this.logging.flush();
    const g = this.gen;
    if (g !== undefined) await g.close();
  }
}
