/**
 * Segment-mode numbers from a Flurry fleet (`flurry serve --sequences URL`): `client.sequence('order').next()`.
 *
 * - **Dense by default:** without `prefetch` every `next()` is one `GET /v1/sequences/{key}/next` and every
 *   `batch(n)` one `GET /v1/sequences/{key}?count=n` (split by the server's `maxBatch`), so the client holds
 *   no numbers it could lose: gaps come only from the servers' own segments (see docs/segments.md).
 * - **Prefetch (opt-in):** `{ prefetch: N }` keeps up to N numbers in memory, refilled in the background when
 *   half are used, so `tryNext()` answers without a round trip; numbers still buffered when the process ends
 *   are never issued by anyone (gaps), and they are older than numbers other clients take meanwhile.
 * - **Failover:** like IDs, a call goes to the next server when one is down, times out, answers 5xx, or has
 *   no numbers for the key right now (503 `FLURRY_E_SEQUENCE_STORE_UNAVAILABLE`, or 404 `FLURRY_E_NOT_FOUND`
 *   from a server without `--sequences`); the last two do not put the server in backoff for IDs. An answer
 *   lost in flight leaves a gap, never a repeat: the server counted the number as issued.
 * - **Order:** numbers from one server increase; after a failover the next server's numbers interleave with
 *   the first's (unique, not increasing across servers), as for the servers themselves.
 * - **Errors** (coded): `FLURRY_E_CLIENT_ARGUMENT` (a bad key or count), the server's
 *   `FLURRY_E_SEQUENCE_KEY_UNKNOWN` / `FLURRY_E_SEQUENCE_KEY_INVALID` (thrown as is, never retried),
 *   `FLURRY_E_CLIENT_UNAVAILABLE` (no server could give a number; `details.retryInMs`, `details.servers`),
 *   `FLURRY_E_CLIENT_BAD_RESPONSE`, `FLURRY_E_CLIENT_CLOSED`.
 */
import { FlurryError } from '@flurry/core';
import { clientError } from './errors.js';
import type { ServerReport, ServerState } from './server-pool.js';

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
  /** Numbers handed out, requests sent (failover attempts included), numbers buffered now. */
  taken: number;
  requests: number;
  buffered: number;
}

/** The numbers of one key, from the fleet. */
export interface RemoteSequence {
  readonly key: string;
  /** The next number (one request, with failover; from the buffer with `prefetch`). */
  next(): Promise<bigint>;
  /** `n` increasing numbers (1 to 1,000,000): one request per server `maxBatch`, each answer increasing. */
  batch(n: number): Promise<bigint[]>;
  /** A buffered number, or undefined (always undefined without `prefetch`); starts a refill when half used. */
  tryNext(): bigint | undefined;
  stats(): RemoteSequenceStats;
}

/**
 * @internal What a remote sequence needs from the client: one request with failover, where `classify` may
 * call a server's error the caller's (thrown as is) or a skip (next server, no backoff), and whether the
 * client is closed.
 */
export interface SequenceHost {
  request<T>(
    what: string,
    pathFor: (s: ServerState) => string,
    parse: (body: Buffer, path: string) => T,
    classify: (e: FlurryError) => 'caller' | 'skip' | undefined,
  ): Promise<T>;
  closed(): boolean;
}

/** @internal Checks a key and the options; `FLURRY_E_CLIENT_ARGUMENT` otherwise. */
export function checkSequenceArgs(key: unknown, options: SequenceOptions | undefined): number {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw clientError(
      'ARGUMENT',
      `sequence(key) takes 1 to 128 characters from A-Z a-z 0-9 _ . : - (a Leaf biz_tag); got ${JSON.stringify(String(key)).slice(0, 140)}`,
      { value: String(key).slice(0, 140) },
    );
  }
  const extra = Object.keys(options ?? {}).filter((k) => k !== 'prefetch');
  if (extra.length > 0) {
    throw clientError('ARGUMENT', `sequence() options: unknown option ${extra.join(', ')}; the only one is prefetch`);
  }
  const p = options?.prefetch ?? 0;
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 100_000) {
    throw clientError('ARGUMENT', `sequence() prefetch must be an integer from 0 to 100000; got ${String(p)}`, {
      value: String(p),
    });
  }
  return p;
}

function badResponse(what: string): FlurryError {
  return clientError('BAD_RESPONSE', `the server's answer to ${what} is not a Flurry sequence answer`);
}

/** `{ key, value }` → the value. */
function parseOne(body: Buffer, key: string): bigint {
  let d: { key?: unknown; value?: unknown };
  try {
    d = JSON.parse(body.toString('utf8')) as typeof d;
  } catch {
    throw badResponse('next()');
  }
  if (d.key !== key || typeof d.value !== 'string' || !NUMBER.test(d.value)) throw badResponse('next()');
  return BigInt(d.value);
}

/** `{ key, values }` → `count` increasing values. */
function parseMany(body: Buffer, key: string, count: number): bigint[] {
  let d: { key?: unknown; values?: unknown };
  try {
    d = JSON.parse(body.toString('utf8')) as typeof d;
  } catch {
    throw badResponse('batch()');
  }
  if (d.key !== key || !Array.isArray(d.values) || d.values.length !== count) throw badResponse('batch()');
  const out: bigint[] = new Array<bigint>(count);
  for (let i = 0; i < count; i++) {
    const v: unknown = d.values[i];
    if (typeof v !== 'string' || !NUMBER.test(v)) throw badResponse('batch()');
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
export class ClientSequence implements RemoteSequence {
  private readonly buffer: bigint[] = [];
  private head = 0;
  private refilling: Promise<Error | undefined> | undefined;
  private taken = 0;
  private requests = 0;
  private readonly path: string;

  constructor(
    readonly key: string,
    readonly prefetch: number,
    private readonly host: SequenceHost,
  ) {
    this.path = `/v1/sequences/${encodeURIComponent(key)}`;
  }

  tryNext(): bigint | undefined {
    if (this.host.closed()) {
      this.buffer.length = this.head = 0;
      return undefined;
    }
    const left = this.buffer.length - this.head;
    if (this.prefetch > 0 && left * 2 <= this.prefetch) void this.refill();
    if (left === 0) return undefined;
    const v = this.buffer[this.head++];
    if (this.head === this.buffer.length) this.buffer.length = this.head = 0;
    this.taken++;
    return v;
  }

  async next(): Promise<bigint> {
    this.assertOpen();
    if (this.prefetch === 0) {
      const v = await this.host.request(
        `sequence("${this.key}").next()`,
        () => {
          this.requests++;
          return `${this.path}/next`;
        },
        (body) => parseOne(body, this.key),
        classify,
      );
      this.taken++;
      return v;
    }
    for (let round = 0; round < 100; round++) {
      const v = this.tryNext();
      if (v !== undefined) return v;
      const err = await this.refill();
      this.assertOpen();
      if (err !== undefined && this.buffer.length === this.head) throw err;
    }
    throw clientError('UNAVAILABLE', `sequence("${this.key}").next(): the refills brought no numbers`);
  }

  async batch(n: number): Promise<bigint[]> {
    this.assertOpen();
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1_000_000) {
      throw clientError('ARGUMENT', `batch(n) takes an integer n from 1 to 1000000; got ${String(n)}`, {
        value: String(n),
      });
    }
    const out: bigint[] = [];
    while (out.length < n) {
      const chunk = await this.fetch(n - out.length, `sequence("${this.key}").batch(${n})`);
      for (const v of chunk) out.push(v);
    }
    this.taken += n;
    return out;
  }

  stats(): RemoteSequenceStats {
    return { taken: this.taken, requests: this.requests, buffered: this.buffer.length - this.head };
  }

  private assertOpen(): void {
    if (this.host.closed()) throw clientError('CLOSED', 'the client is closed; create a new one with createClient()');
  }

  /** Up to `want` numbers in one request (fewer when the server's maxBatch is smaller). */
  private fetch(want: number, what: string): Promise<bigint[]> {
    return this.host.request(
      what,
      (s) => {
        this.requests++;
        return `${this.path}?count=${Math.min(want, s.maxBatch)}`;
      },
      (body, path) => parseMany(body, this.key, Number(path.slice(path.lastIndexOf('=') + 1))),
      classify,
    );
  }

  /** Starts a refill unless one is in flight; the promise resolves with the refill's error, if any. */
  private refill(): Promise<Error | undefined> {
    if (this.refilling) return this.refilling;
    const want = this.prefetch - (this.buffer.length - this.head);
    if (want <= 0 || this.host.closed()) return Promise.resolve(undefined);
    const p: Promise<Error | undefined> = this.fetch(want, `sequence("${this.key}") refill`)
      .then((values) => {
        if (this.host.closed()) return undefined;
        // Drop the numbers already taken before appending: a buffer refilled at half, before it drains, never
        // reaches the reset in tryNext(), and would otherwise keep every number ever taken.
        if (this.head > 0) {
          this.buffer.splice(0, this.head);
          this.head = 0;
        }
        for (const v of values) this.buffer.push(v);
        return undefined;
      })
      .catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
      .finally(() => {
        this.refilling = undefined;
      });
    this.refilling = p;
    return p;
  }
}

/**
 * @internal The error of a sequence call that no server could serve (their stores down, or segment mode off
 * there): `FLURRY_E_CLIENT_UNAVAILABLE` with each server's answer and the shortest `Retry-After`.
 */
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
