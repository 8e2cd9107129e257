// `flurry.v1.IdService` over the service's one issuer, the HTTP routes' own, so no protocol can issue an ID another
// has issued. StreamIds issues a chunk only once Connect wrote the previous one (a slow reader slows issuing).
import { endianness } from 'node:os';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { WireType } from '@bufbuild/protobuf/wire';
import { FlurryError, parseId, parseTime, type UuidTextForm } from '@flurry/core';
import type { Sequences } from '@flurry/segments';
import { serverError } from '../errors.js';
import type { HttpContext, IdSource, UuidSource } from '../http/context.js';
import { requirePublicIds, type PublicIds } from '../public-ids/codec.js';
import { parseUuidForm, requireUuids } from '../http/routes/uuids.js';
import { IdService, StreamIdsResponseSchema, type StreamIdsRequest } from './gen-proto/flurry/v1/id_service_pb.js';

/** What IdService needs; `token`: public IDs need one; `maxBatch`: the largest count of a call or a StreamIds chunk. */
export interface IdServiceContext
  extends Pick<HttpContext, 'layout' | 'ids'>, Pick<HttpContext['limits'], 'token' | 'maxBatch'> {
  readonly publicIds: PublicIds | undefined;
  readonly sequences?: Sequences | undefined;
  readonly uuids?: UuidSource | undefined;
}

/** Default IDs per StreamIds message: 8 KB, a few HTTP/2 frames. */
export const DEFAULT_CHUNK = 1000;
/** Whether this machine's BigUint64Array bytes are the wire's (little-endian fixed64). */
export const LITTLE_ENDIAN = endianness() === 'LE';

export function idServiceHandlers(ctx: IdServiceContext): ServiceImpl<typeof IdService> {
  const { ids, layout, maxBatch } = ctx;
  return {
    nextId() {
      const id = ids.next();
      return { id, idString: id.toString() };
    },
    batchIds(req) {
      const a = new BigUint64Array(countOf(req.count, maxBatch, 'count'));
      fillAll(ids, a);
      return { ids: Array.from(a) };
    },
    streamIds: (req, hc) => streamIds(ids, maxBatch, req, hc),
    decodeId(req) {
      const v = req.value;
      if (v.case === undefined) {
        throw serverError('BAD_REQUEST', 'DecodeId needs the ID: set id (a number) or id_string (decimal)');
      }
      const d = layout.decode(parseId(v.value, layout));
      return { ...d, idString: d.id.toString(), unixMs: BigInt(d.unixMs) };
    },
    getLayout() {
      const info = layout.describe();
      return { ...info, epochMs: BigInt(info.epochMs) };
    },
    idRange(req) {
      const b = layout.bounds(parseTime(req.from, 'from'), parseTime(req.to, 'to'));
      const [fromMs, toMs] = [BigInt(b.fromMs), BigInt(b.toMs)];
      const [minString, maxExclusiveString] = [b.min.toString(), b.maxExclusive.toString()];
      return { ...b, layout: layout.name, fromMs, toMs, minString, maxExclusiveString };
    },
    async nextSequence(req) {
      if (!ctx.sequences) {
        throw new FlurryError(
          'FLURRY_E_SEQUENCES_DISABLED',
          'segment mode is off on this service: start it with --sequences URL (postgres://…, mysql://…, redis://…) to serve NextSequence',
        );
      }
      const seq = ctx.sequences.get(req.key);
      const values = await seq.batchBigInt(req.count === 0 ? 1 : countOf(req.count, maxBatch, 'count'));
      return { key: seq.key, values };
    },
    encodePublicId(req) {
      const c = publicCodec(ctx, 'encoding');
      if (!c.encode) throw serverError('PUBLIC_IDS_DISABLED', 'this service cannot encode public IDs');
      return { publicId: c.encode(parseId(req.id, layout)) };
    },
    decodePublicId(req) {
      const id = publicCodec(ctx, 'decoding').decode(req.publicId);
      return { id, idString: id.toString() };
    },
    nextUuid(req) {
      const src = requireUuids(ctx.uuids);
      const form = uuidForm(req.format);
      return { uuid: form === undefined ? src.next() : src.nextAs(form) };
    },
    batchUuids(req) {
      const src = requireUuids(ctx.uuids);
      const form = uuidForm(req.format);
      return { uuids: src.batch(countOf(req.count, maxBatch, 'count'), form) };
    },
  };
}

export function fillAll(ids: IdSource, a: BigUint64Array): void {
  let at = 0;
  while (at < a.length) at += ids.fill(a, at, a.length - at);
}

// eslint-disable-next-line @typescript-eslint/require-await -- Connect's server-streaming shape; Connect awaits each write (drain) between pulls
async function* streamIds(
  ids: IdSource,
  maxBatch: number,
  req: StreamIdsRequest,
  hc: HandlerContext,
): AsyncGenerator<MessageInitShape<typeof StreamIdsResponseSchema>> {
  const chunk = req.chunk === 0 ? Math.min(DEFAULT_CHUNK, maxBatch) : countOf(req.chunk, maxBatch, 'chunk');
  let left = req.limit === 0n ? Number.POSITIVE_INFINITY : Number(req.limit);
  // Binary protocols get the packed field's bytes as they sit in memory (an unknown field 1, written verbatim, which
  // every client reads as `ids`); JSON gets the list.
  const raw = LITTLE_ENDIAN && hc.requestHeader.get('content-type')?.includes('json') !== true;
  while (left > 0 && !hc.signal.aborted) {
    const n = Math.min(chunk, left);
    // 8 bytes ahead of the IDs hold the field's length (a varint, right-aligned).
    const buf = new ArrayBuffer(8 + n * 8);
    const a = new BigUint64Array(buf, 8, n);
    fillAll(ids, a);
    left -= n;
    if (raw) {
      const m = create(StreamIdsResponseSchema);
      const k = varintBefore(new Uint8Array(buf, 0, 8), n * 8);
      m.$unknown = [{ no: 1, wireType: WireType.LengthDelimited, data: new Uint8Array(buf, 8 - k, k + n * 8) }];
      yield m;
    } else yield { ids: Array.from(a) };
  }
}

/** `n` when it is 1 to `max`; 0 is bad input (FLURRY_E_BAD_REQUEST: INVALID_ARGUMENT), past `max` the limit (FLURRY_E_BATCH_COUNT: RESOURCE_EXHAUSTED). */
export function countOf(n: number, max: number, name: string): number {
  if (n > 0 && n <= max) return n;
  const allowed = `it must be an integer from 1 to ${max}`;
  if (n === 0) throw serverError('BAD_REQUEST', `${name} is 0 (or not set): ${allowed}`, { min: 1, max });
  throw serverError('BATCH_COUNT', `${name} ${n} is out of range: ${allowed} (the service's maxBatch)`, {
    value: n,
    min: 1,
    max,
  });
}

function publicCodec(ctx: IdServiceContext, what: string): PublicIds {
  const codec = requirePublicIds(ctx.publicIds);
  if (ctx.token === undefined) {
    throw serverError(
      'PUBLIC_DECODE_DISABLED',
      `${what} public IDs reveals the mapping to real IDs, so it needs a bearer token, and this service has none: start it with --token / FLURRY_TOKEN`,
    );
  }
  return codec;
}

/** The text form a UUID call asks for: empty is canonical; else the HTTP routes' check and messages. */
function uuidForm(format: string): UuidTextForm | undefined {
  return format === '' ? undefined : parseUuidForm(new URLSearchParams({ format }).toString());
}

/** Writes `v` as a varint ending at the end of `into`; returns its length in bytes. */
export function varintBefore(into: Uint8Array, v: number): number {
  const bytes: number[] = [];
  do {
    const b = v % 128;
    v = Math.floor(v / 128);
    bytes.push(v > 0 ? b | 128 : b);
  } while (v > 0);
  into.set(bytes, into.length - bytes.length);
  return bytes.length;
}
