// The Flurry client: IDs from a fleet of `flurry serve` processes through a local buffer refilled in the
// background, with failover and backoff (docs/client.md: "Prefetching", "High availability", "Order and uniqueness").
import { FlurryError } from '@flurry/core';
import { assertCount, clientError, closedError } from './errors.js';
import { HttpTransport } from './http-transport.js';
import { collect, IdBuffer, PrefetchSizer, type RemoteHost } from './id-buffer.js';
import { resolveOptions, type ClientOptions } from './options.js';
import { idText, jsonBody, parseIdsBody } from './parse-ids.js';
import { ClientUuids } from './uuids.js';
import { ServerPool, type ServerReport, type ServerState } from './server-pool.js';
import {
  checkSequenceArgs,
  ClientSequence,
  skippedError,
  type RemoteSequence,
  type SequenceOptions,
} from './sequence.js';

/** An ID decoded by a server under its layout (`GET /v1/ids/{id}`). */
export interface DecodedRemoteId {
  id: bigint;
  unixMs: number;
  /** ISO 8601. */
  timestamp: string;
  /** Node fields, e.g. `{ datacenter: 1, worker: 7 }`. */
  fields: Record<string, number>;
  sequence: number;
}

/** Counters of a client. */
export interface ClientStats {
  /** IDs in the buffer now. */
  buffered: number;
  /** IDs handed out from the buffer. */
  taken: number;
  /** IDs dropped because they got older than `maxAgeMs`. */
  discarded: number;
  /** HTTP requests sent (refills, batches, decodes). */
  requests: number;
  /** Refill requests sent. */
  refills: number;
  /** The buffer size the client currently aims at (adapts to the consumption rate). */
  targetSize: number;
  /** The low-water mark in force now. */
  lowWater: number;
  /** Observed consumption, IDs per second. */
  ratePerSecond: number;
  servers: ServerReport[];
}

/** A client of a Flurry fleet. */
export type FlurryClient = Pick<Client, keyof Client>;

/** Creates a client (docs/client.md); bad options throw `FLURRY_E_CLIENT_CONFIG` at once, and no request is sent before the first ID. */
export function createClient(opts: ClientOptions): FlurryClient {
  return new Client(resolveOptions(opts));
}

class Client {
  private readonly buffer: IdBuffer;
  private readonly pool: ServerPool;
  private readonly transport: HttpTransport;
  private readonly waiters: { resolve(id: bigint): void; reject(err: unknown): void }[] = [];
  private closed = false;
  private inflightIds = 0;
  private inflightRefills = 0;
  private refills = 0;
  private readonly sizer: PrefetchSizer;
  /** The sizer's low-water mark, copied at each refill (read on every take). */
  private lowWater: number;
  /** Moving average of refill request times, ms. */
  private latency = 0;
  /** When refill() last found no server to ask: when one may be asked (Infinity: only a refill in flight frees one). */
  private blockedUntil = 0;
  private readonly sequences = new Map<string, ClientSequence>();
  private uuidBuffer: ClientUuids | undefined;
  private readonly host: RemoteHost = {
    request: (what, pathFor, parse, classify) => this.request(what, pathFor, parse, classify),
    closed: () => this.closed,
  };

  constructor(private readonly s: ReturnType<typeof resolveOptions>) {
    this.buffer = new IdBuffer(s.clock, s.prefetch.maxAgeMs);
    this.pool = new ServerPool(s.servers, s.strategy, s.backoff, s.clock, s.prefetch.maxBatch);
    this.transport = new HttpTransport({ timeoutMs: s.timeoutMs, token: s.token });
    this.sizer = new PrefetchSizer(s.clock, s.prefetch);
    this.lowWater = this.sizer.lowWater;
  }

  /** The next ID from the buffer, synchronously, or `undefined` when the buffer is empty (a refill is then under way). */
  tryNext(): bigint | undefined {
    const v = this.buffer.take();
    this.checkLowWater();
    return v;
  }

  /** The next ID. Rejects with `FLURRY_E_CLIENT_UNAVAILABLE` only when every server is down and the buffer is empty. */
  next(): Promise<bigint> {
    const v = this.tryNext();
    return v !== undefined ? Promise.resolve(v) : this.wait();
  }

  /** Below the low-water mark: refill unless the last attempt found nothing to ask and nothing changed since. */
  private checkLowWater(): void {
    if (this.buffer.size + this.inflightIds >= this.lowWater) return;
    const until = this.blockedUntil;
    if (until === 0 || (until !== Infinity && this.s.clock.monotonic() >= until)) this.refill();
  }

  /** The next ID as a decimal string. */
  nextString(): Promise<string> {
    const v = this.tryNext();
    return v !== undefined ? Promise.resolve(v.toString()) : this.wait().then(String);
  }

  private wait(): Promise<bigint> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise<bigint>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.refill();
    });
  }

  /** Refills while below the low-water mark or waiters are uncovered; fails waiters when nothing can come. */
  private refill(): void {
    if (this.closed) return;
    this.buffer.discardStale();
    this.sizer.update(this.buffer.taken, this.latency);
    this.lowWater = this.sizer.lowWater;
    this.blockedUntil = 0;
    for (;;) {
      const level = this.buffer.size + this.inflightIds;
      const uncovered = this.waiters.length - level;
      if (level >= this.lowWater && uncovered <= 0) break;
      const server = this.pool.pick({ forRefill: true });
      if (!server) {
        this.blockedUntil = this.pool.nextAskAt(true);
        break;
      }
      const count = Math.min(server.maxBatch, Math.max(this.sizer.target - level, uncovered, 1));
      this.startRefill(server, count);
    }
    if (this.waiters.length > 0 && this.inflightRefills === 0) {
      this.serveWaiters();
      if (this.waiters.length > 0) this.failWaiters(this.unavailableError('next()'));
    }
  }

  private startRefill(server: ServerState, count: number): void {
    server.refilling = true;
    server.requests++;
    this.refills++;
    this.inflightIds += count;
    this.inflightRefills++;
    const sentAt = this.s.clock.monotonic();
    this.transport
      .get(server.base, `/v1/ids?count=${count}`)
      .then((body) => {
        const elapsed = this.s.clock.monotonic() - sentAt;
        // Ask for the next chunk (when due) before parsing this one, so the server issues while the client
        // parses; the arriving IDs still count as in flight, so nothing is asked for twice.
        server.refilling = false;
        if (this.closed) return;
        this.refill();
        return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          const ids = parseIdsBody(body, count);
          const age = this.s.clock.monotonic() - sentAt;
          if (age > this.s.prefetch.maxAgeMs)
            throw clientError(
              'TIMEOUT',
              `${server.url} answered after ${Math.round(age)} ms, later than prefetch.maxAgeMs (${this.s.prefetch.maxAgeMs} ms); its IDs were discarded`,
              { server: server.url },
            );
          this.pool.succeeded(server, elapsed);
          this.latency = this.latency === 0 ? elapsed : this.latency * 0.7 + elapsed * 0.3;
          if (!this.closed) this.buffer.push(ids, sentAt);
        });
      })
      .catch((err: unknown) => {
        if (!this.closed) this.onRequestError(server, err, count, true);
      })
      .finally(() => {
        server.refilling = false;
        this.inflightIds -= count;
        this.inflightRefills--;
        if (this.closed) return;
        this.serveWaiters();
        this.refill();
      });
  }

  /** Records a failed request: `refused` (401), `smaller` (maxBatch learnt), `caller` (a 4xx blaming a non-refill request) or `down`. */
  private onRequestError(
    server: ServerState,
    err: unknown,
    count: number,
    refill: boolean,
  ): 'refused' | 'smaller' | 'caller' | 'down' {
    const e =
      err instanceof FlurryError
        ? err
        : clientError('NETWORK', `${server.url}: ${String(err)}`, { server: server.url }, err);
    const status = typeof e.details.status === 'number' ? e.details.status : 0;
    if (status === 401 || e.code === 'FLURRY_E_UNAUTHORIZED') {
      this.pool.refused(server, e);
      return 'refused';
    }
    if (e.code === 'FLURRY_E_BATCH_COUNT' && count > 1 && server.maxBatch > 1) {
      const stated =
        typeof e.details.max === 'number' ? e.details.max : Number(/from 1 to (\d+)/.exec(e.message)?.[1] ?? NaN);
      const max = Number.isInteger(stated) && stated >= 1 ? stated : Math.floor(count / 2);
      server.maxBatch = Math.max(1, Math.min(server.maxBatch, max, count - 1));
      server.lastError = e;
      return 'smaller';
    }
    if (!refill && status >= 400 && status < 500 && status !== 404 && status !== 408 && status !== 429) return 'caller';
    const retryAfterMs = typeof e.details.retryAfterMs === 'number' ? e.details.retryAfterMs : 0;
    this.pool.failed(server, e, retryAfterMs);
    return 'down';
  }

  private serveWaiters(): void {
    for (let v; this.waiters.length > 0 && (v = this.buffer.take()) !== undefined;) this.waiters.shift()!.resolve(v);
  }

  private failWaiters(err: FlurryError): void {
    for (const w of this.waiters.splice(0)) w.reject(err);
  }

  private unavailableError(what: string): FlurryError {
    const servers = this.pool.report();
    if (this.pool.allUnauthorized()) {
      return clientError(
        'UNAUTHORIZED',
        `${what}: every server answered 401 (missing or wrong token); check the token option. Servers: ${servers.map((s) => s.url).join(', ')}`,
        { servers },
      );
    }
    const ms = this.pool.msUntilRetry();
    const retryInMs = Number.isFinite(ms) ? Math.ceil(ms) : null;
    const lines = servers.map(
      (s) => `${s.url} ${s.state}${s.lastError ? ` (${s.lastError.code}: ${s.lastError.message})` : ''}`,
    );
    return clientError(
      'UNAVAILABLE',
      `${what}: no Flurry server could be reached and the buffer is empty; next retry in ${retryInMs ?? '∞'} ms. Tried: ${lines.join('; ')}`,
      { servers, retryInMs },
    );
  }

  /** `n` IDs (1 to 1,000,000): from the buffer when it holds them, else fetched directly; increasing within each server answer. */
  async batch(n: number): Promise<bigint[]> {
    if (this.closed) throw closedError();
    assertCount('batch', n);
    const fromBuffer = this.buffer.takeMany(n);
    if (fromBuffer) {
      this.checkLowWater();
      return fromBuffer;
    }
    return collect(n, (want) =>
      this.request(
        'batch()',
        (s) => `/v1/ids?count=${Math.min(want, s.maxBatch)}`,
        (body, path) => parseIdsBody(body, Number(path.slice(path.indexOf('=') + 1))),
      ),
    );
  }

  /** Asks a server to decode an ID under its layout. */
  async decode(id: bigint | string | number): Promise<DecodedRemoteId> {
    if (this.closed) throw closedError();
    const text = idText(id);
    const d = await this.request(
      'decode()',
      () => `/v1/ids/${text}`,
      (body) => {
        const notJson = () => clientError('BAD_RESPONSE', "the server's decode answer is not JSON");
        const d = jsonBody(body, notJson) as Record<string, unknown> | null;
        const types = { id: 'string', unixMs: 'number', timestamp: 'string', sequence: 'number', fields: 'object' };
        if (!d?.fields || Object.entries(types).some(([k, t]) => typeof d[k] !== t))
          throw clientError(
            'BAD_RESPONSE',
            "the server's decode answer lacks id, unixMs, timestamp, fields or sequence",
          );
        return d as Omit<DecodedRemoteId, 'id'> & { id: string };
      },
    );
    const { unixMs, timestamp, fields, sequence } = d;
    return { id: BigInt(d.id), unixMs, timestamp, fields: { ...fields }, sequence };
  }

  /** One request with failover, in strategy order; an answer that blames the caller's input is thrown as it is. */
  private async request<T>(
    what: string,
    pathFor: (s: ServerState) => string,
    parse: (body: Buffer, path: string) => T,
    classify?: (e: FlurryError) => 'caller' | 'skip' | undefined,
  ): Promise<T> {
    const tried = new Set<ServerState>();
    const skipped: Array<{ server: string; code: string; message: string; retryAfterMs: number }> = [];
    // Each server is tried once, plus up to 16 retries with a smaller batch after a FLURRY_E_BATCH_COUNT.
    for (let attempt = 0; attempt < this.pool.servers.length + 16; attempt++) {
      if (this.closed) throw closedError();
      const server = this.pool.pick({ exclude: tried });
      if (!server) break;
      const path = pathFor(server);
      server.requests++;
      const sentAt = this.s.clock.monotonic();
      try {
        const result = parse(await this.transport.get(server.base, path), path);
        this.pool.succeeded(server, this.s.clock.monotonic() - sentAt);
        return result;
      } catch (err) {
        if (this.closed) throw closedError();
        const verdict0 = classify && err instanceof FlurryError ? classify(err) : undefined;
        if (verdict0 === 'caller') throw err;
        if (verdict0 === 'skip' && err instanceof FlurryError) {
          const retryAfterMs = typeof err.details.retryAfterMs === 'number' ? err.details.retryAfterMs : 0;
          skipped.push({ server: server.url, code: err.code, message: err.message, retryAfterMs });
          tried.add(server);
          continue;
        }
        const count = Number(/count=(\d+)/.exec(path)?.[1] ?? 0);
        const verdict = this.onRequestError(server, err, count, false);
        if (verdict === 'caller') throw err;
        if (verdict !== 'smaller') tried.add(server);
      }
    }
    if (skipped.length > 0) throw skippedError(what, skipped, this.pool.report());
    throw this.unavailableError(what);
  }

  /** The next UUIDv7 (canonical), prefetched like IDs, with failover (servers with `GET /v1/uuids`). */
  uuid(): Promise<string> {
    return this.uuidSource().next();
  }
  /** `n` UUIDv7 (1 to 1,000,000), strictly increasing within each server answer. */
  uuids(n: number): Promise<string[]> {
    return this.uuidSource().batch(n);
  }
  private uuidSource(): ClientUuids {
    return (this.uuidBuffer ??= new ClientUuids(this.s.clock, this.s.prefetch, this.host));
  }

  /** The numbers of a segment-mode key (servers with `--sequences`), dense by default; one object per key. */
  sequence(key: string, options?: SequenceOptions): RemoteSequence {
    const prefetch = checkSequenceArgs(key, options);
    const seq = this.sequences.get(key) ?? new ClientSequence(key, prefetch, this.host, this.s.clock);
    if (seq.prefetch !== prefetch)
      throw clientError(
        'ARGUMENT',
        `sequence("${key}") was first asked for with prefetch ${seq.prefetch}; one client keeps one setting per key`,
      );
    this.sequences.set(key, seq);
    return seq;
  }

  /** Counters and server states. */
  stats(): ClientStats {
    return {
      buffered: this.buffer.size,
      taken: this.buffer.taken,
      discarded: this.buffer.discarded,
      requests: this.pool.servers.reduce((a, s) => a + s.requests, 0),
      refills: this.refills,
      targetSize: this.sizer.target,
      lowWater: this.lowWater,
      ratePerSecond: Math.round(this.sizer.ratePerMs * 1000),
      servers: this.pool.report(),
    };
  }

  /** Rejects waiting calls with `FLURRY_E_CLIENT_CLOSED`, aborts requests, drops the buffer. */
  // eslint-disable-next-line @typescript-eslint/require-await -- synchronous body; `async` makes a failure a rejection, as the API documents
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failWaiters(closedError());
    this.transport.close();
    this.buffer.clear();
    this.uuidBuffer?.buf.clear();
  }
}
