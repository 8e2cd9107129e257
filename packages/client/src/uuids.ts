/**
 * UUIDv7 from a fleet (docs/client.md, "UUIDs"): `client.uuid()` and `client.uuids(n)`, prefetched like IDs
 * (`GET /v1/uuids?count=N`), each server answer checked.
 */
import type { Clock, FlurryError } from '@flurry/core';
import { assertCount, clientError } from './errors.js';
import { PrefetchSizer, Refilled, type RemoteHost, type SizerSettings } from './id-buffer.js';
import { jsonBody } from './parse-ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * @internal Parses `{"uuids":[…]}`: exactly `expected` canonical v7 UUIDs, strictly
 * increasing; `FLURRY_E_CLIENT_BAD_RESPONSE` otherwise.
 */
export function parseUuidsBody(body: Buffer, expected: number): string[] {
  const notJson = 'the server\'s UUID answer is not JSON (expected {"uuids":[…]})';
  const doc = jsonBody(body, () => clientError('BAD_RESPONSE', notJson), 'latin1');
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

/** @internal The client's UUID buffer (chunks in the order their requests were sent) and its refills. */
export class ClientUuids extends Refilled<string> {
  private readonly chunks: { readonly uuids: string[]; i: number; readonly at: number }[] = [];
  private size = 0;
  private latency = 0;
  private readonly sizer: PrefetchSizer;

  constructor(
    clock: Clock,
    private readonly prefetch: SizerSettings & { readonly maxBatch: number },
    host: RemoteHost,
  ) {
    super(host, clock, 'uuid() refill');
    this.sizer = new PrefetchSizer(clock, prefetch);
  }

  /** One UUID from the buffer, or `undefined` (a refill is then under way). */
  tryNext(): string | undefined {
    this.dropStale();
    const c = this.chunks[0];
    let v: string | undefined;
    if (c !== undefined) {
      v = c.uuids[c.i++];
      this.size--;
      this.taken++;
      if (c.i === c.uuids.length) this.chunks.shift();
    }
    if (this.size < this.sizer.lowWater || this.size === 0) void this.refill();
    return v;
  }

  next(): Promise<string> {
    return this.nextBuffered('uuid(): the refills brought no UUIDs');
  }

  /** `n` UUIDs: from the buffer when one chunk there holds them, else fetched directly. */
  async batch(n: number): Promise<string[]> {
    this.assertOpen();
    assertCount('uuids', n);
    this.dropStale();
    const c = this.chunks[0];
    if (c === undefined || c.uuids.length - c.i < n) return this.fetchAll(n, `uuids(${n})`);
    const out = c.uuids.slice(c.i, c.i + n);
    c.i += n;
    this.size -= n;
    this.taken += n;
    if (c.i === c.uuids.length) this.chunks.shift();
    return out;
  }

  /** Drops everything (at close). */
  clear(): void {
    this.chunks.length = 0;
    this.size = 0;
  }

  protected held(): number {
    return this.size;
  }

  protected wanted(): number {
    this.sizer.update(this.taken, this.latency);
    return Math.max(1, this.sizer.target - this.size);
  }

  protected fetch(want: number, what: string): Promise<string[]> {
    return this.host.request(
      what,
      (s) => `/v1/uuids?count=${Math.min(want, s.maxBatch, this.prefetch.maxBatch)}`,
      (body, path) => parseUuidsBody(body, Number(path.slice(path.lastIndexOf('=') + 1))),
      (e: FlurryError) => (e.code.startsWith('FLURRY_E_UUID_') ? 'caller' : undefined),
    );
  }

  protected keep(uuids: string[], sentAt: number): void {
    const elapsed = this.clock.monotonic() - sentAt;
    this.latency = this.latency === 0 ? elapsed : this.latency * 0.7 + elapsed * 0.3;
    this.chunks.push({ uuids, i: 0, at: sentAt });
    this.size += uuids.length;
  }

  private dropStale(): void {
    const limit = this.clock.monotonic() - this.prefetch.maxAgeMs;
    while (this.chunks.length > 0 && this.chunks[0].at < limit) {
      const c = this.chunks.shift()!;
      this.size -= c.uuids.length - c.i;
    }
  }
}
