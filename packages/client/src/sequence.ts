// Segment-mode numbers from a fleet (`flurry serve --sequences URL`), dense by default (docs/client.md, "Sequences").
import type { Clock, FlurryError } from '@flurry/core';
import { assertCount, clientError } from './errors.js';
import { Refilled, type RemoteHost } from './id-buffer.js';
import { jsonBody } from './parse-ids.js';
import type { ServerReport } from './server-pool.js';

/** Key names as the service allows them (Leaf's biz_tag: at most 128 characters). */
const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
const NUMBER = /^[0-9]{1,20}$/;

/** Options of {@link FlurryClient.sequence}. */
export interface SequenceOptions {
  /** Numbers kept in memory, 0 (default: none, numbers stay dense) to 100,000. */
  prefetch?: number;
}

/** Counters of one remote sequence. */
export interface RemoteSequenceStats {
  taken: number;
  requests: number;
  buffered: number;
}

/** The numbers of one key, from the fleet. */
export type RemoteSequence = Pick<ClientSequence, 'key' | 'next' | 'batch' | 'tryNext' | 'stats'>;

/** @internal Checks a key and the options; `FLURRY_E_CLIENT_ARGUMENT` otherwise. */
export function checkSequenceArgs(key: unknown, options: SequenceOptions | undefined): number {
  if (typeof key !== 'string' || !KEY.test(key))
    throw clientError(
      'ARGUMENT',
      `sequence(key) takes 1 to 128 characters from A-Z a-z 0-9 _ . : - (a Leaf biz_tag); got ${JSON.stringify(String(key)).slice(0, 140)}`,
      { value: String(key).slice(0, 140) },
    );
  const extra = Object.keys(options ?? {}).filter((k) => k !== 'prefetch');
  if (extra.length > 0)
    throw clientError('ARGUMENT', `sequence() options: unknown option ${extra.join(', ')}; the only one is prefetch`);
  const p = options?.prefetch ?? 0;
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 100_000)
    throw clientError('ARGUMENT', `sequence() prefetch must be an integer from 0 to 100000; got ${String(p)}`, {
      value: String(p),
    });
  return p;
}

function badResponse(what: string): FlurryError {
  return clientError('BAD_RESPONSE', `the server's answer to ${what} is not a Flurry sequence answer`);
}

/** The numbers of a next answer (`{key, value}`, no `count`) or of a batch answer (`{key, values}`, increasing). */
function parseNumbers(body: Buffer, key: string, count?: number): bigint[] {
  const what = count === undefined ? 'next()' : 'batch()';
  const d = jsonBody(body, () => badResponse(what)) as { key?: unknown; value?: unknown; values?: unknown };
  const values = count === undefined ? [d.value] : d.values;
  if (d.key !== key || !Array.isArray(values) || values.length !== (count ?? 1)) throw badResponse(what);
  const out = new Array<bigint>(values.length);
  for (let i = 0; i < out.length; i++) {
    const v: unknown = values[i];
    if (typeof v !== 'string' || !NUMBER.test(v)) throw badResponse(what);
    out[i] = BigInt(v);
    if (i > 0 && out[i] <= out[i - 1]) throw badResponse('batch() (values not increasing)');
  }
  return out;
}

/** Server errors a sequence call does not retry elsewhere, and those that move on without backoff. */
function classify(e: FlurryError): 'caller' | 'skip' | undefined {
  if (e.code === 'FLURRY_E_SEQUENCE_KEY_UNKNOWN' || e.code === 'FLURRY_E_SEQUENCE_KEY_INVALID') return 'caller';
  if (e.code === 'FLURRY_E_SEQUENCE_NUMBER_UNSAFE' || e.code === 'FLURRY_E_SEQUENCE_COUNT') return 'caller';
  if (e.code === 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE' || e.code === 'FLURRY_E_NOT_FOUND') return 'skip';
  return undefined;
}

/** @internal A remote sequence over a client (see the module comment). */
export class ClientSequence extends Refilled<bigint> {
  private requests = 0;
  private readonly path: string;

  constructor(
    readonly key: string,
    readonly prefetch: number,
    host: RemoteHost,
    clock: Clock,
  ) {
    super(host, clock, `sequence("${key}") refill`);
    this.path = `/v1/sequences/${encodeURIComponent(key)}`;
  }

  /** A buffered number, or undefined (always undefined without `prefetch`); starts a refill when half used. */
  tryNext(): bigint | undefined {
    if (this.host.closed()) {
      this.buf.clear();
      return undefined;
    }
    if (this.prefetch > 0 && this.buf.size * 2 <= this.prefetch) void this.refill();
    return this.buf.take();
  }

  /** The next number (one request, with failover; from the buffer with `prefetch`). */
  async next(): Promise<bigint> {
    this.assertOpen();
    if (this.prefetch > 0) return this.nextBuffered(`sequence("${this.key}").next(): the refills brought no numbers`);
    const v = await this.host.request(
      `sequence("${this.key}").next()`,
      () => {
        this.requests++;
        return `${this.path}/next`;
      },
      (body) => parseNumbers(body, this.key)[0],
      classify,
    );
    this.buf.taken++;
    return v;
  }

  /** `n` increasing numbers (1 to 1,000,000): one request per server `maxBatch`, each answer increasing. */
  async batch(n: number): Promise<bigint[]> {
    this.assertOpen();
    assertCount('batch', n);
    return this.fetchAll(n, `sequence("${this.key}").batch(${n})`);
  }

  /** Numbers handed out, requests sent (failover attempts included), numbers buffered now. */
  stats(): RemoteSequenceStats {
    return { taken: this.buf.taken, requests: this.requests, buffered: this.buf.size };
  }

  protected wanted(): number {
    return this.prefetch - this.buf.size;
  }

  protected fetch(want: number, what: string): Promise<bigint[]> {
    return this.host.request(
      what,
      (s) => {
        this.requests++;
        return `${this.path}?count=${Math.min(want, s.maxBatch)}`;
      },
      (body, path) => parseNumbers(body, this.key, Number(path.slice(path.lastIndexOf('=') + 1))),
      classify,
    );
  }
}

/** @internal No server could serve a sequence call: `FLURRY_E_CLIENT_UNAVAILABLE` with each answer and the shortest `Retry-After`. */
export function skippedError(
  what: string,
  skipped: Array<{ server: string; code: string; message: string; retryAfterMs: number }>,
  servers: ServerReport[],
): FlurryError {
  const waits = skipped.map((s) => s.retryAfterMs).filter((ms) => ms > 0);
  const retryInMs = waits.length > 0 ? Math.min(...waits) : null;
  return clientError(
    'UNAVAILABLE',
    `${what}: no server could give a number` +
      (retryInMs !== null ? `; retry in ${retryInMs} ms` : '') +
      `. Tried: ${skipped.map((s) => `${s.server} (${s.code}: ${s.message})`).join('; ')}`,
    { servers, skipped, retryInMs },
  );
}
