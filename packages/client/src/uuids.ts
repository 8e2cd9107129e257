// UUIDv7 from a fleet, prefetched like IDs (docs/client.md, "UUIDs").
import type { Clock, FlurryError } from '@flurry/core';
import { assertCount, clientError } from './errors.js';
import { PrefetchSizer, Refilled, type RemoteHost, type SizerSettings } from './id-buffer.js';
import { jsonBody } from './parse-ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** @internal Parses `{"uuids":[…]}`: exactly `expected` strictly increasing canonical v7 UUIDs. */
export function parseUuidsBody(body: Buffer, expected: number): string[] {
  const notJson = 'the server\'s UUID answer is not JSON (expected {"uuids":[…]})';
  const doc = jsonBody(body, () => clientError('BAD_RESPONSE', notJson), 'latin1');
  const uuids = (doc as { uuids?: unknown } | null)?.uuids;
  if (!Array.isArray(uuids))
    throw clientError('BAD_RESPONSE', 'the server\'s UUID answer has no "uuids" array (expected {"uuids":[…]})');
  if (uuids.length !== expected)
    throw clientError('BAD_RESPONSE', `the server sent ${uuids.length} UUIDs for a request of ${expected}`, {
      expected,
      got: uuids.length,
    });
  let prev = '';
  for (let i = 0; i < uuids.length; i++) {
    const u: unknown = uuids[i];
    if (typeof u !== 'string' || !V7.test(u))
      throw clientError(
        'BAD_RESPONSE',
        `the server sent ${JSON.stringify(u).slice(0, 60)} at index ${i}, not a canonical UUIDv7`,
      );
    if (u <= prev)
      throw clientError('BAD_RESPONSE', `the server's UUIDs are not strictly increasing at index ${i} (${u})`);
    prev = u;
  }
  return uuids as string[];
}

/** @internal The client's UUID buffer and its refills. */
export class ClientUuids extends Refilled<string> {
  private readonly sizer: PrefetchSizer;

  constructor(
    clock: Clock,
    private readonly prefetch: SizerSettings & { readonly maxBatch: number },
    host: RemoteHost,
  ) {
    super(host, clock, 'uuid() refill', prefetch.maxAgeMs);
    this.sizer = new PrefetchSizer(clock, prefetch);
  }

  tryNext(): string | undefined {
    const v = this.buf.take();
    if (this.buf.size < this.sizer.lowWater || this.buf.size === 0) void this.refill();
    return v;
  }

  next(): Promise<string> {
    return this.nextBuffered('uuid(): the refills brought no UUIDs');
  }

  /** `n` UUIDs: from the buffer when one server answer there holds them, else fetched directly. */
  async batch(n: number): Promise<string[]> {
    this.assertOpen();
    assertCount('uuids', n);
    return this.buf.takeMany(n, true) ?? this.fetchAll(n, `uuids(${n})`);
  }

  protected wanted(): number {
    this.sizer.update(this.buf.taken, this.latency);
    return Math.max(1, this.sizer.target - this.buf.size);
  }

  protected fetch(want: number, what: string): Promise<string[]> {
    return this.host.request(
      what,
      (s) => `/v1/uuids?count=${Math.min(want, s.maxBatch, this.prefetch.maxBatch)}`,
      (body, path) => parseUuidsBody(body, Number(path.slice(path.lastIndexOf('=') + 1))),
      (e: FlurryError) => (e.code.startsWith('FLURRY_E_UUID_') ? 'caller' : undefined),
    );
  }
}
