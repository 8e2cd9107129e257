// Request metrics of the non-HTTP front-ends (docs/service-api.md#metrics): each names its protocol and
// fixed command list once, so what clients send never adds a series.
import type { Registry } from 'prom-client';
import {
  bucketOf,
  LATENCY_BUCKETS as BUCKETS,
  p99Ms,
  pushHistogram,
  registerScrapeMetric,
  RequestTable,
  type ScrapeValue as Value,
} from './scrape-metric.js';

/** Records the requests of one protocol (see {@link ProtocolMetrics.recorder}). */
export interface ProtocolRecorder {
  /** One finished request: `command` is its index in the recorder's command list. */
  request(command: number, ok: boolean, seconds: number): void;
  /** One finished request whose latency was not measured (a front-end that times only a sample). */
  count?(command: number, ok: boolean): void;
}

/** One protocol × command: requests, the failed ones, and the p99 latency (ms, its bucket's upper bound). */
export interface ProtocolRow {
  protocol: string;
  command: string;
  requests: number;
  errors: number;
  p99Ms: number | null;
}

interface CallSeries {
  readonly labels: { protocol: string; command: string };
  requests: number;
  errors: number;
  readonly buckets: Float64Array;
  sum: number;
}

const OUTCOMES = ['ok', 'error'];

/** The per-protocol request metrics of one service (one per registry). */
export class ProtocolMetrics {
  private readonly entries: { protocol: string; commands: readonly string[]; table: RequestTable }[] = [];
  // Series of `call`: `protocol command outcome` → count, and `protocol command` → latency.
  private readonly calls = new Map<string, { labels: Record<string, string>; count: number }>();
  private readonly callLatency = new Map<string, CallSeries>();

  constructor(registry: Registry) {
    registerScrapeMetric(
      registry,
      'flurry_protocol_requests_total',
      'Requests of the non-HTTP protocols, by protocol, command and outcome.',
      'counter',
      () => {
        const out: Value[] = [];
        for (const e of this.entries)
          e.table.pushCounts(out, (c, o) => ({ protocol: e.protocol, command: e.commands[c], outcome: OUTCOMES[o] }));
        for (const c of this.calls.values()) out.push({ value: c.count, labels: c.labels });
        return out;
      },
    );
    const latency = 'flurry_protocol_request_duration_seconds';
    registerScrapeMetric(
      registry,
      latency,
      'Request latency of the non-HTTP protocols in seconds, by protocol and command.',
      'histogram',
      () => {
        const out: Value[] = [];
        for (const e of this.entries)
          e.table.pushHistograms(out, latency, (c) => ({ protocol: e.protocol, command: e.commands[c] }));
        for (const l of this.callLatency.values()) pushHistogram(out, latency, l.labels, l.buckets, l.sum);
        return out;
      },
    );
  }

  /** The recorder of `protocol` with its fixed command names (asking twice for one protocol gives the same counts). */
  recorder(protocol: string, commands: readonly string[]): ProtocolRecorder {
    let e = this.entries.find((x) => x.protocol === protocol);
    if (!e) this.entries.push((e = { protocol, commands: [...commands], table: new RequestTable(commands.length, 2) }));
    const table = e.table;
    return {
      request: (command, ok, seconds) => table.record(command, ok ? 0 : 1, seconds),
      count: (command, ok) => table.bump(command, ok ? 0 : 1),
    };
  }

  /** Records one call with a richer outcome (gRPC's code name); both names from fixed lists, never from a client. */
  call(protocol: string, command: string, outcome: string, seconds: number): void {
    const key = protocol + ' ' + command;
    let c = this.calls.get(key + ' ' + outcome);
    if (c === undefined)
      this.calls.set(key + ' ' + outcome, (c = { labels: { protocol, command, outcome }, count: 0 }));
    c.count++;
    let l = this.callLatency.get(key);
    if (l === undefined) {
      const buckets = new Float64Array(BUCKETS.length + 1);
      this.callLatency.set(key, (l = { labels: { protocol, command }, requests: 0, errors: 0, buckets, sum: 0 }));
    }
    l.requests++;
    if (outcome !== 'ok') l.errors++;
    l.buckets[bucketOf(seconds)]++;
    l.sum += seconds;
  }

  /** Requests of `protocol` so far: `{ command: { ok, error } }` (the console and tests read it). */
  totals(protocol: string): Record<string, { ok: number; error: number }> {
    const out: Record<string, { ok: number; error: number }> = {};
    const e = this.entries.find((x) => x.protocol === protocol);
    if (e) e.commands.forEach((c, i) => (out[c] = { ok: e.table.count(i, 0), error: e.table.count(i, 1) }));
    return out;
  }

  /** Every protocol × command with a request, sorted by protocol then command (the console's table). */
  rows(): ProtocolRow[] {
    const out: ProtocolRow[] = [];
    for (const e of this.entries) {
      e.commands.forEach((command, i) => {
        const errors = e.table.count(i, 1);
        const requests = e.table.count(i, 0) + errors;
        if (requests > 0)
          out.push({ protocol: e.protocol, command, requests, errors, p99Ms: p99Ms(e.table.histogram(i)) });
      });
    }
    for (const { labels, requests, errors, buckets } of this.callLatency.values())
      out.push({ ...labels, requests, errors, p99Ms: p99Ms(buckets) });
    return out.sort((a, b) =>
      a.protocol === b.protocol ? (a.command < b.command ? -1 : 1) : a.protocol < b.protocol ? -1 : 1,
    );
  }
}
