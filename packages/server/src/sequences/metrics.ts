// Per-key metrics of segment mode, at most `maxKeys` key labels plus `key="_other"` (docs/segments.md#metrics).
import type { Registry } from 'prom-client';
import { bucketOf, pushHistogram, registerScrapeMetric, type ScrapeValue as Value } from '../scrape-metric.js';
import type { SequenceEvent, Sequences, SequenceStatus } from '@flurry/segments';

/** Keys with a label of their own, by default (the rest are aggregated under `key="_other"`). */
export const DEFAULT_MAX_KEY_LABELS = 100;

/** The label of the keys beyond the bound. */
export const OTHER_KEYS = '_other';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The counts a sequence keeps (`wasted` and `handedBack` are decimal strings there). */
const COUNTS = ['issued', 'fetches', 'failures', 'waits', 'wasted', 'handedBack'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;

type Totals = Counts & { hist: Float64Array; sum: number };
type Gauges = { step: number; buffered: number; segments: number };

const countsOf = (s?: SequenceStatus): Counts =>
  Object.fromEntries(COUNTS.map((k) => [k, s ? Number(s[k]) : 0])) as Counts;
const ZERO = countsOf();

function bufferOf(s: SequenceStatus): Omit<Gauges, 'step'> {
  const cur = s.current && s.current.remaining > 0 ? s.current.remaining : 0;
  const nxt = s.next ? Number(BigInt(s.next.end) - BigInt(s.next.start)) : 0;
  return { buffered: cur + nxt, segments: (cur > 0 ? 1 : 0) + (nxt > 0 ? 1 : 0) };
}

/** The per-key metrics of segment mode (see the module comment). */
export class SequenceMetrics {
  readonly maxKeys: number;
  private sequences: Sequences | undefined;
  /** Key → its label (itself, or OTHER_KEYS). */
  private readonly labels = new Map<string, string>();
  private own = 0;
  /** Label → counts folded in so far. */
  private readonly totals = new Map<string, Totals>();
  /** Key → the counts of its sequence already folded into its label's totals. */
  private readonly seen = new Map<string, Counts>();
  /** Keys whose sequence closed (still listed by a closed `Sequences`) until a new sequence of the key fetches. */
  private readonly closed = new Set<string>();

  constructor(registry: Registry, options: { maxKeys?: number } = {}) {
    const max = options.maxKeys ?? DEFAULT_MAX_KEY_LABELS;
    if (!Number.isInteger(max) || max < 0 || max > 10_000) {
      throw new RangeError(`maxKeys must be an integer from 0 to 10000, got ${String(max)}`);
    }
    this.maxKeys = max;
    for (const [name, k, help] of [
      ['flurry_segment_issued_total', 'issued', 'Numbers issued by this process, by key.'],
      ['flurry_segment_fetches_total', 'fetches', 'Segments fetched from the store, by key.'],
      ['flurry_segment_fetch_failures_total', 'failures', 'Fetches from the store that failed, by key.'],
      [
        'flurry_segment_empty_waits_total',
        'waits',
        'Calls that waited on an empty buffer (both segments used up), by key.',
      ],
      [
        'flurry_segment_wasted_total',
        'wasted',
        'Numbers that will never be issued: remainders not handed back at close, allocations of unknown outcome.',
      ],
      ['flurry_segment_handed_back_total', 'handedBack', 'Numbers handed back to the store at close, by key.'],
    ] as const)
      registerScrapeMetric(registry, name, help, 'counter', () =>
        this.collect().map(([label, t]) => ({ value: t[k], labels: { key: label } })),
      );
    const histogram = 'flurry_segment_fetch_duration_seconds';
    registerScrapeMetric(
      registry,
      histogram,
      'Latency of each segment fetch (failed ones too), seconds, by key.',
      'histogram',
      () => {
        const out: Value[] = [];
        for (const [label, t] of this.totals) pushHistogram(out, histogram, { key: label }, t.hist, t.sum, BUCKETS);
        return out;
      },
    );
    for (const [name, k, help] of [
      ['flurry_segment_step', 'step', 'The step the next fetch asks for, by key.'],
      [
        'flurry_segment_buffered',
        'buffered',
        'Numbers held in memory (current remainder plus next segment), by key: what a crash would lose.',
      ],
      ['flurry_segment_buffer_segments', 'segments', 'Segments holding numbers (0, 1 or 2), by key.'],
    ] as const)
      registerScrapeMetric(registry, name, help, 'gauge', () =>
        this.gauges().map(([label, g]) => ({ value: g[k], labels: { key: label } })),
      );
    registerScrapeMetric(registry, 'flurry_segment_keys', 'Keys open in this process.', 'gauge', () => [
      { value: this.statuses().length, labels: {} },
    ]);
    registerScrapeMetric(
      registry,
      'flurry_segment_keys_aggregated',
      `Keys open in this process counted under key="${OTHER_KEYS}" (past the bound of labelled keys).`,
      'gauge',
      () => [{ value: this.statuses().filter((s) => this.labelOf(s.key) === OTHER_KEYS).length, labels: {} }],
    );
  }

  readonly onEvent = (e: SequenceEvent): void => {
    if (e.type === 'closed') {
      this.fold(e.status);
      this.seen.delete(e.key);
      this.closed.add(e.key);
      const label = this.labels.get(e.key);
      this.labels.delete(e.key);
      if (label !== undefined && label !== OTHER_KEYS) {
        this.own--;
        this.totals.delete(label);
      }
      return;
    }
    this.closed.delete(e.key);
    const t = this.totalsOf(this.labelOf(e.key));
    const s = e.latencyMs / 1000;
    t.hist[bucketOf(s, BUCKETS)]++;
    t.sum += s;
  };

  attach(sequences: Sequences): void {
    this.sequences = sequences;
  }

  private statuses(): SequenceStatus[] {
    const all = this.sequences?.status() ?? [];
    return this.closed.size === 0 ? all : all.filter((s) => !this.closed.has(s.key));
  }

  private labelOf(key: string): string {
    let label = this.labels.get(key);
    if (label === undefined) {
      label = this.own < this.maxKeys ? key : OTHER_KEYS;
      if (label !== OTHER_KEYS) this.own++;
      this.labels.set(key, label);
    }
    return label;
  }

  private totalsOf(label: string): Totals {
    let t = this.totals.get(label);
    if (!t) {
      t = { ...ZERO, hist: new Float64Array(BUCKETS.length + 1), sum: 0 };
      this.totals.set(label, t);
    }
    return t;
  }

  /** Adds what a key's sequence counted since the last fold to its label's totals. */
  private fold(s: SequenceStatus): void {
    const now = countsOf(s);
    const before = this.seen.get(s.key) ?? ZERO;
    const t = this.totalsOf(this.labelOf(s.key));
    for (const k of COUNTS) t[k] += Math.max(now[k] - before[k], 0);
    this.seen.set(s.key, now);
  }

  private collect(): Array<[string, Totals]> {
    for (const s of this.statuses()) this.fold(s);
    return [...this.totals.entries()];
  }

  private gauges(): Array<[string, Gauges]> {
    const out = new Map<string, Gauges>();
    for (const s of this.statuses()) {
      const label = this.labelOf(s.key);
      const b = bufferOf(s);
      const g = out.get(label);
      if (g) {
        g.step = Math.max(g.step, s.step);
        g.buffered += b.buffered;
        g.segments += b.segments;
      } else out.set(label, { step: s.step, ...b });
    }
    return [...out.entries()];
  }
}
