/**
 * UUIDv7 from a fleet (docs/client.md, "UUIDs"): `client.uuid()` and `client.uuids(n)`.
 * Like IDs, UUIDs are prefetched into a local buffer (sized to the consumption rate by the
 * same {@link PrefetchSizer} and `prefetch` options) refilled in the background with
 * `GET /v1/uuids?count=N`, with failover across servers; UUIDs fetched longer ago than
 * `prefetch.maxAgeMs` are discarded, not handed out. Each server answer is checked: the
 * count asked, every UUID a canonical v7, strictly increasing.
 */
import type { Clock, FlurryError } from '@flurry/core';
import { clientError } from './errors.js';
import { PrefetchSizer, type SizerSettings } from './id-buffer.js';
import type { SequenceHost } from './sequence.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * @internal Parses `{"uuids":[…]}`: exactly `expected` canonical v7 UUIDs, strictly
 * increasing; `FLURRY_E_CLIENT_BAD_RESPONSE` otherwise.
 */
export function parseUuidsBody(body: Buffer, expected: number): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('latin1'));
  } catch {
    throw clientError('BAD_RESPONSE', 'the server\'s UUID answer is not JSON (expected {"uuids":[…]})');
  }
  const uuids = (doc as { uuids?: unknown } | null)?.uuids;
  if (!Array.isArray(uuids))
    throw clientError('BAD_RESPONSE', 'the server\'s UUID answer has no "uuids" array (expected {"uuids":[…]})');
  if (uuids.length !== expected) {
    throw clientError('BAD_RESPONSE', `the server sent ${uuids.length} UUIDs for a request of ${expected}`, {
      expected,
      got: uuids.length,
    });
  }
  let prev = '';
  for (let i = 0; i < uuids.length; i++) {
    const u: unknown = uuids[i];
    if (typeof u !== 'string' || !V7.test(u)) {
      throw clientError(
        'BAD_RESPONSE',
        `the server sent ${JSON.stringify(u).slice(0, 60)} at index ${i}, not a canonical UUIDv7`,
      );
    }
    if (u <= prev)
      throw clientError('BAD_RESPONSE', `the server's UUIDs are not strictly increasing at index ${i} (${u})`);
    prev = u;
  }
  return uuids as string[];
}

interface UuidChunk {
  readonly uuids: string[];
  /** The next one to hand out. */
  i: number;
  /** When the request was sent (monotonic ms). */
  readonly at: number;
}

/** @internal The client's UUID buffer and its refills (one at a time). */
export class ClientUuids {
  private readonly chunks: UuidChunk[] = [];
  private held = 0;
  private taken = 0;
  private latency = 0;
  private refilling: Promise<Error | undefined> | undefined;
  private readonly sizer: PrefetchSizer;

  constructor(
    private readonly clock: Clock,
    private readonly prefetch: SizerSettings & { readonly maxBatch: number },
    private readonly host: SequenceHost,
  ) {
    this.sizer = new PrefetchSizer(clock, prefetch);
  }

  /** UUIDs buffered now. */
  get size(): number {
    return this.held;
  }

  /** One UUID from the buffer, or `undefined` (a refill is then under way). */
  tryTake(): string | undefined {
    this.dropStale();
    const c = this.chunks[0];
    let v: string | undefined;
    if (c !== undefined) {
      v = c.uuids[c.i++];
      this.held--;
      this.taken++;
      if (c.i === c.uuids.length) this.chunks.shift();
    }
    if (this.held < this.sizer.lowWater || this.held === 0) void this.refill();
    return v;
  }

  /** The next UUID: from the buffer, else after a refill (with failover). */
  async next(): Promise<string> {
    for (let round = 0; round < 100; round++) {
      this.assertOpen();
      const v = this.tryTake();
      if (v !== undefined) return v;
      const err = await this.refill();
      this.assertOpen();
      if (err !== undefined && this.held === 0) throw err;
    }
    throw clientError('UNAVAILABLE', 'uuid(): the refills brought no UUIDs');
  }

  /** `n` UUIDs: from the buffer when it holds them (in one chunk), else fetched directly. */
  async batch(n: number): Promise<string[]> {
    this.assertOpen();
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1_000_000) {
      throw clientError('ARGUMENT', `uuids(n) takes an integer n from 1 to 1000000; got ${String(n)}`, {
        value: String(n),
      });
    }
    this.dropStale();
    const c = this.chunks[0];
    if (c !== undefined && c.uuids.length - c.i >= n) {
      const out = c.uuids.slice(c.i, c.i + n);
      c.i += n;
      this.held -= n;
      this.taken += n;
      if (c.i === c.uuids.length) this.chunks.shift();
      return out;
    }
    const out: string[] = [];
    while (out.length < n) {
      const chunk = await this.fetch(n - out.length, `uuids(${n})`);
      for (const u of chunk) out.push(u);
    }
    this.taken += n;
    return out;
  }

  /** Drops everything (at close). */
  clear(): void {
    this.chunks.length = 0;
    this.held = 0;
  }

  private assertOpen(): void {
    if (this.host.closed()) throw clientError('CLOSED', 'the client is closed; create a new one with createClient()');
  }

  private dropStale(): void {
    const limit = this.clock.monotonic() - this.prefetch.maxAgeMs;
    while (this.chunks.length > 0 && this.chunks[0].at < limit) {
      const c = this.chunks.shift()!;
      this.held -= c.uuids.length - c.i;
    }
  }

  /** Up to `want` UUIDs in one request (fewer when the server's maxBatch is smaller). */
  private fetch(want: number, what: string): Promise<string[]> {
    return this.host.request(
      what,
      (s) => `/v1/uuids?count=${Math.min(want, s.maxBatch, this.prefetch.maxBatch)}`,
      (body, path) => parseUuidsBody(body, Number(path.slice(path.lastIndexOf('=') + 1))),
      (e: FlurryError) => (e.code.startsWith('FLURRY_E_UUID_') ? 'caller' : undefined),
    );
  }

  /** Starts a refill unless one is in flight; resolves with its error, if any. */
  private refill(): Promise<Error | undefined> {
    if (this.refilling) return this.refilling;
    if (this.host.closed()) return Promise.resolve(undefined);
    this.sizer.update(this.taken, this.latency);
    const want = Math.max(1, this.sizer.target - this.held);
    const sentAt = this.clock.monotonic();
    const p: Promise<Error | undefined> = this.fetch(want, 'uuid() refill')
      .then((uuids) => {
        const elapsed = this.clock.monotonic() - sentAt;
        this.latency = this.latency === 0 ? elapsed : this.latency * 0.7 + elapsed * 0.3;
        if (this.host.closed()) return undefined;
        this.chunks.push({ uuids, i: 0, at: sentAt });
        this.held += uuids.length;
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
