/** `openSequences(url, options)`: opens a store and hands out one {@link Sequence} per key, plus formatted serials. */
import { assertKnownOptions, FlurryError, systemClock, type Clock } from '@flurry/core';
import { sequenceError, SequenceErrorCode } from './errors.js';
import {
  formatterFor,
  parseSerialFormat,
  periodOf,
  periodStamp,
  renderSerial,
  type ResetPeriod,
  type SerialFormat,
} from './format.js';
import { Sequence } from './sequence.js';
import type { SequenceEvent, SequencesOptions, SequenceStatus, SequenceTuning } from './sequence.js';
import {
  assertKey,
  assertStep,
  MAX_KEY_LENGTH,
  normaliseCreate,
  type CreateKeyOptions,
  type KeyInfo,
  type SegmentStore,
} from './store.js';
import { createMemoryStore } from './stores/memory.js';
import { parseStoreUrl } from './url.js';

/** The numeric options: [min, max, default] (integers, but `prefetchAt`). */
const RANGES = {
  prefetchAt: [0, 0.9, 0.1],
  targetSegmentMs: [1000, 86_400_000, 900_000],
  maxStep: [1, 2 ** 31 - 1, 1_000_000],
  retryMs: [10, 60_000, 500],
  waitTimeoutMs: [100, 600_000, 30_000],
  maxBatch: [1, 10_000_000, 100_000],
  timeoutMs: [100, 120_000, 5000],
} as const;
const KNOWN = [
  'clock',
  'autoCreate',
  'defaultStep',
  ...Object.keys(RANGES),
  'allowVolatileStore',
  'createTable',
  'onEvent',
];

function range(options: SequencesOptions, name: keyof typeof RANGES): number {
  const [min, max, dflt] = RANGES[name];
  const v = options[name];
  if (v === undefined) return dflt;
  const integer = name !== 'prefetchAt';
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    const message = `${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${String(v)}`;
    throw sequenceError('OPTION', message, { option: name, value: String(v), min, max });
  }
  return v;
}

/** The options of `Sequences.serial`. */
export interface SerialOptions {
  format: string;
  /** Default `day`. */
  reset?: ResetPeriod;
  /** An IANA zone (default `UTC`). */
  timeZone?: string;
  /** The stored step of each period's key (default the sequences' `defaultStep`). */
  step?: number;
  /** The first number of each period (default 1). */
  start?: number | bigint;
}

/**
 * A formatted serial (docs/segments.md, "Formatted serials"): each period of the reset (day, month, year) is its
 * own key `KEY:STAMP`, created on first use; the previous period's sequence is retired.
 */
export class Serial {
  private current: { stamp: string; seq: Sequence } | undefined;

  /** @internal */
  constructor(
    readonly key: string,
    readonly format: SerialFormat,
    readonly timeZone: string,
    private readonly owner: Sequences,
    private readonly create: Parameters<SegmentStore['create']>[1],
  ) {}

  /** The next serial (a promise only when it must wait); the clock is read once, so date and counter agree. */
  next(): string | Promise<string> {
    const p = periodOf(this.owner.clock.now(), this.timeZone);
    const seq = this.sequenceFor(periodStamp(p, this.format.reset));
    const v = seq.tryNextBigInt();
    if (v !== undefined) return renderSerial(this.format, p, v);
    return Promise.resolve(seq.nextBigInt()).then((n) => renderSerial(this.format, p, n));
  }

  /** The key of the period that `unixMs` falls in (`order:20261123`). */
  keyAt(unixMs: number): string {
    const stamp = periodStamp(periodOf(unixMs, this.timeZone), this.format.reset);
    return stamp ? `${this.key}:${stamp}` : this.key;
  }

  private sequenceFor(stamp: string): Sequence {
    if (this.current && this.current.stamp === stamp) return this.current.seq;
    const previous = this.current;
    const seq = this.owner.sequenceWithCreate(stamp ? `${this.key}:${stamp}` : this.key, this.create);
    this.current = { stamp, seq };
    // The previous period is over (or the clock stepped back into it: its own sequence keeps serving then).
    if (previous && previous.stamp < stamp) this.owner.retire(previous.seq);
    return seq;
  }
}

/** The open sequences of one store. */
export class Sequences {
  private readonly seqs = new Map<string, Sequence>();
  private closed = false;

  /** @internal */
  constructor(
    readonly store: SegmentStore,
    readonly clock: Clock,
    private readonly tuning: SequenceTuning,
    private readonly o: { autoCreate: boolean; defaultStep: number; onEvent: ((e: SequenceEvent) => void) | undefined },
  ) {}

  /** The sequence of `key` (the same object on every call); `FLURRY_E_SEQUENCE_KEY_INVALID`. */
  get(key: string): Sequence {
    const known = this.closed ? undefined : this.seqs.get(key);
    if (known !== undefined) return known; // checked when it was first asked for
    assertKey(key);
    return this.sequenceWithCreate(key, undefined);
  }

  /** @internal */
  sequenceWithCreate(key: string, create: Parameters<SegmentStore['create']>[1] | undefined): Sequence {
    if (this.closed) throw sequenceError('CLOSED', 'the sequences were closed');
    let s = this.seqs.get(key);
    if (!s) {
      const ensure =
        create || this.o.autoCreate
          ? async (k: string): Promise<void> => {
              try {
                await this.store.create(k, create ?? { start: 1n, step: this.o.defaultStep, description: null });
              } catch (err) {
                if (!(err instanceof FlurryError && err.code === SequenceErrorCode.KEY_EXISTS)) throw err;
              }
            }
          : undefined;
      const observe = (e: SequenceEvent): void => {
        if (e.type === 'fetch-failed' && e.code === SequenceErrorCode.KEY_UNKNOWN) this.forgetUnknown(key);
        try {
          this.o.onEvent?.(e);
        } catch {
          // A listener's failure must not break issuing.
        }
      };
      s = new Sequence(key, this.store, this.clock, this.tuning, ensure, observe);
      this.seqs.set(key, s);
    }
    return s;
  }

  /** A key the store does not know is dropped after its retry delay (made-up keys cannot fill memory or labels). */
  private forgetUnknown(key: string): void {
    setTimeout(() => {
      const s = this.closed ? undefined : this.seqs.get(key);
      if (s === undefined) return;
      const st = s.status();
      if (st.fetches > 0 || st.fetching || st.lastError?.code !== SequenceErrorCode.KEY_UNKNOWN) return;
      if (st.waiting > 0) return this.forgetUnknown(key);
      this.seqs.delete(key);
      void s.close().catch(() => undefined);
    }, this.tuning.retryMs + 1).unref();
  }

  /** @internal Closes a sequence no longer used (a past serial period), handing its numbers back. */
  retire(seq: Sequence): void {
    // Callers of the last period may still be waiting for its fetch: close it once they are done (or timed out).
    setTimeout(() => {
      if (this.seqs.get(seq.key) === seq) this.seqs.delete(seq.key);
      void seq.close().catch(() => undefined);
    }, this.tuning.waitTimeoutMs + 1000).unref();
  }

  /** A formatted serial; `FLURRY_E_SEQUENCE_FORMAT`, `…_OPTION` (time zone), `…_KEY_INVALID`. */
  serial(key: string, options: SerialOptions): Serial {
    assertKnownOptions(options, ['format', 'reset', 'timeZone', 'step', 'start'], 'serial options');
    assertKey(key);
    const reset = options.reset ?? 'day';
    const format = parseSerialFormat(options.format, reset);
    if (reset !== 'never' && key.length > MAX_KEY_LENGTH - 9) {
      const message = `a serial key is at most ${MAX_KEY_LENGTH - 9} characters (":yyyyMMdd" is appended per period)`;
      throw sequenceError('KEY_INVALID', message, { key });
    }
    const timeZone = options.timeZone ?? 'UTC';
    formatterFor(timeZone);
    const create = normaliseCreate({ start: options.start ?? 1n, step: options.step ?? this.o.defaultStep });
    return new Serial(key, format, timeZone, this, create);
  }

  /** Creates a key in the store (`start` default 1, `step` default 1000); `FLURRY_E_SEQUENCE_KEY_EXISTS`. */
  async create(key: string, options: CreateKeyOptions = {}): Promise<KeyInfo> {
    assertKey(key);
    assertKnownOptions(options, ['start', 'step', 'description'], 'create options');
    const c = normaliseCreate(options);
    const info = await this.store.create(key, c);
    this.seqs.get(key)?.resetBackoff();
    return info;
  }

  /** The key as stored, or undefined. */
  async show(key: string): Promise<KeyInfo | undefined> {
    assertKey(key);
    return this.store.show(key);
  }

  /** Every key in the store, by name. */
  list(): Promise<KeyInfo[]> {
    return this.store.list();
  }

  /** The status of every key used by this instance. */
  status(): SequenceStatus[] {
    return [...this.seqs.values()].map((s) => s.status());
  }

  /** The status of `key` here without opening it (empty, zero counts when not in use); `…_KEY_INVALID`. */
  statusOf(key: string): SequenceStatus {
    const known = this.closed ? undefined : this.seqs.get(key);
    if (known !== undefined) return known.status();
    assertKey(key);
    return new Sequence(key, this.store, this.clock, this.tuning).status();
  }

  /** Closes every sequence (handing unused numbers back when safe) and the store; the numbers handed back and wasted. */
  async close(): Promise<{ handedBack: bigint; wasted: bigint }> {
    if (this.closed) return { handedBack: 0n, wasted: 0n };
    this.closed = true;
    // Summed after all are in (`+= await` inside the callbacks would keep only one key's figure).
    const each = await Promise.all(
      [...this.seqs.values()].map(async (s) => [await s.close(), BigInt(s.status().wasted)]),
    );
    await this.store.close();
    let handedBack = 0n;
    let wasted = 0n;
    for (const [back, w] of each) [handedBack, wasted] = [handedBack + back, wasted + w];
    return { handedBack, wasted };
  }
}

/**
 * Opens the sequences of a store URL (or a {@link SegmentStore}). Rejects with `FLURRY_E_SEQUENCE_URL`,
 * `…_CLIENT_MISSING`, `…_STORE_UNAVAILABLE`, `…_AUTH`, `…_STORE_VOLATILE`, `…_STORE_CORRUPT`, `…_OPTION`.
 */
export async function openSequences(url: string | SegmentStore, options: SequencesOptions = {}): Promise<Sequences> {
  assertKnownOptions(options, KNOWN, 'openSequences options');
  const clock = options.clock ?? systemClock;
  const names = Object.keys(RANGES) as (keyof typeof RANGES)[];
  const all = Object.fromEntries(names.map((n) => [n, range(options, n)])) as Record<(typeof names)[number], number>;
  const { timeoutMs, ...tuning }: SequenceTuning & { timeoutMs: number } = all;
  const defaultStep = options.defaultStep ?? 1000;
  assertStep(defaultStep, 'defaultStep');
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function')
    throw sequenceError('OPTION', 'onEvent must be a function (e: SequenceEvent) => void', { option: 'onEvent' });
  const now = (): number => clock.now();
  const p = typeof url === 'string' ? parseStoreUrl(url) : undefined;
  let store = url as SegmentStore;
  if (p?.kind === 'memory') store = createMemoryStore(p.name || undefined, now);
  else if (p?.kind === 'redis') {
    const allowVolatileStore = options.allowVolatileStore ?? false;
    store = await (await import('./stores/redis.js')).openRedisStore(p, { timeoutMs, allowVolatileStore, now });
  } else if (p) {
    const createTable = options.createTable ?? true;
    store = await (await import('./stores/sql.js')).openSqlStore(p, { timeoutMs, createTable });
  }
  const o = { autoCreate: options.autoCreate ?? false, defaultStep, onEvent: options.onEvent };
  return new Sequences(store, clock, tuning, o);
}
