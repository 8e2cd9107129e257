// gRPC's NextId and StreamIds (binary protocol) on node:http2's stream API instead of Connect's per-call pipeline
// (docs/grpc.md#memory), in Connect's own frames (hot-calls.test.ts compares them); every other call goes to Connect.
import type http2 from 'node:http2';
import { fromBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { compressionNegotiate } from '@connectrpc/connect/protocol';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { parseTimeout, setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import { BearerAuth } from '../http/auth.js';
import type { IdSource } from '../http/context.js';
import { IdService, NextIdRequestSchema, StreamIdsRequestSchema } from './gen-proto/flurry/v1/id_service_pb.js';
import { DEFAULT_CHUNK, LITTLE_ENDIAN, countOf, fillAll, varintBefore } from './id-service.js';
import { toConnectError, type CallRecorder } from './status.js';

const NEXT_ID = `/${IdService.typeName}/${IdService.method.nextId.name}`;
const STREAM_IDS = `/${IdService.typeName}/${IdService.method.streamIds.name}`;
const CONTENT_TYPES = new Set(['application/grpc', 'application/grpc+proto']);
// Named in the answer's header as Connect does, but nothing is compressed (NextId is under Connect's 1 KiB
// threshold; gzip would cost a stream more CPU than its IDs' bytes on the wire).
const OFFERED = [{ name: 'gzip' }, { name: 'br' }] as Parameters<typeof compressionNegotiate>[0];
/** What `setTrailerStatus` writes for a call that ended well, built once. */
const OK_TRAILER: http2.OutgoingHttpHeaders = { 'grpc-status': '0' };

export interface HotCallOptions {
  ids: IdSource;
  maxBatch: number;
  maxMessageBytes: number;
  token: string | undefined;
  record: CallRecorder | undefined;
  now?: () => number;
}

type Stream = http2.ServerHttp2Stream;

/** A `stream` listener: takes a gRPC NextId or StreamIds call (true), or reads nothing and leaves it to Connect. */
export function hotCalls(opts: HotCallOptions): (stream: Stream, headers: http2.IncomingHttpHeaders) => boolean {
  const { ids, maxBatch, maxMessageBytes, record } = opts;
  const auth = opts.token === undefined ? undefined : new BearerAuth(opts.token);
  const now = opts.now ?? performance.now.bind(performance);
  return (stream, headers) => {
    const path = headers[':path'];
    const streaming = path === STREAM_IDS;
    if ((path !== NEXT_ID && !streaming) || headers[':method'] !== 'POST' || headers.origin !== undefined) return false;
    const type = headers['content-type'];
    const encoding = headers['grpc-encoding'];
    const accept = headers['grpc-accept-encoding'];
    const timeout = headers['grpc-timeout'];
    if (type === undefined || !CONTENT_TYPES.has(type.toLowerCase())) return false;
    if ((encoding !== undefined && encoding !== 'identity') || typeof accept === 'object') return false;
    if (
      timeout !== undefined &&
      (streaming || typeof timeout !== 'string' || parseTimeout(timeout, Number.MAX_SAFE_INTEGER).error)
    ) {
      return false;
    }
    if (streaming && !LITTLE_ENDIAN) return false;
    const compression = compressionNegotiate(OFFERED, null, accept ?? null, 'grpc-accept-encoding').response;
    const head: http2.OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc+proto' };
    if (compression) head['grpc-encoding'] = compression.name;
    const start = now();
    const method = streaming ? 'IdService/StreamIds' : 'IdService/NextId';
    const finish = (err: unknown): void => {
      if (stream.destroyed || stream.closed) return; // cancelled: Connect counts nothing either
      const error = err === undefined ? undefined : toConnectError(err);
      const trailer: http2.OutgoingHttpHeaders = error ? {} : OK_TRAILER;
      if (error) setTrailerStatus(new Headers(), error).forEach((v, k) => (trailer[k] = v));
      if (!stream.headersSent) stream.respond(head, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers(trailer));
      stream.end();
      record?.('grpc', method, error ? codeToString(error.code) : 'ok', (now() - start) / 1000);
    };
    readBody(stream, maxMessageBytes, (body) => {
      try {
        if (!streaming) {
          checkRequest(body, maxMessageBytes, 'unary', NextIdRequestSchema);
          const refused = auth?.check(headers.authorization);
          if (refused) throw refused;
          const answer = nextIdAnswer(ids.next());
          stream.respond(head, { waitForTrailers: true });
          stream.write(answer);
          finish(undefined);
          return;
        }
        const refused = auth?.check(headers.authorization);
        if (refused) throw refused;
        const req = checkRequest(body, maxMessageBytes, 'server-streaming', StreamIdsRequestSchema);
        const chunk = req.chunk === 0 ? Math.min(DEFAULT_CHUNK, maxBatch) : countOf(req.chunk, maxBatch, 'chunk');
        void sendIds(stream, ids, chunk, req.limit === 0n ? Number.POSITIVE_INFINITY : Number(req.limit), head).then(
          (done) => done && finish(undefined),
          finish,
        );
      } catch (err) {
        finish(err);
      }
    });
    return true;
  };
}

/** Collects the request body (at most two largest envelopes: past them the answer is an error anyway), then calls `then` unless the call was reset. */
function readBody(stream: Stream, maxMessageBytes: number, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('error', () => undefined); // a reset by the client
  stream.on('data', (c: Buffer) => {
    if (size < 2 * (maxMessageBytes + 5)) chunks.push(c);
    size += c.length;
  });
  stream.on('end', () => {
    if (!stream.destroyed && !stream.closed) then(Buffer.concat(chunks));
  });
}

// Writes chunks until `limit` IDs were sent (true) or the call was cancelled (false), each once HTTP/2 took the
// previous one; a buffer is sent without a copy and reused only after its write callback (flushed).
async function sendIds(
  stream: Stream,
  ids: IdSource,
  chunk: number,
  limit: number,
  head: http2.OutgoingHttpHeaders,
): Promise<boolean> {
  const free: ArrayBuffer[] = [];
  let left = limit;
  while (left > 0) {
    if (stream.destroyed || stream.closed) return false;
    const n = Math.min(chunk, left);
    const mem = free.pop() ?? new ArrayBuffer(16 + chunk * 8);
    fillAll(ids, new BigUint64Array(mem, 16, n));
    left -= n;
    // Before the IDs: the envelope (flag, length), field 1's tag and the IDs' byte length.
    const prefix = new Uint8Array(mem, 0, 16);
    const k = varintBefore(prefix, n * 8);
    prefix[15 - k] = 0x0a;
    new DataView(mem).setUint32(15 - k - 4, 1 + k + n * 8);
    prefix[15 - k - 5] = 0;
    if (!stream.headersSent) stream.respond(head, { waitForTrailers: true });
    if (!stream.write(new Uint8Array(mem, 10 - k, 6 + k + n * 8), () => free.push(mem))) await drained(stream);
  }
  return !stream.destroyed && !stream.closed;
}

function drained(stream: Stream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('close', done);
  });
}

/** The one uncompressed message of `schema` in `body`, else Connect's error for it (in Connect's order). */
function checkRequest<S extends DescMessage>(
  body: Buffer,
  maxMessageBytes: number,
  kind: string,
  schema: S,
): MessageShape<S> {
  const envelopes: Buffer[] = [];
  let at = 0;
  while (body.length - at >= 5) {
    const length = body.readUInt32BE(at + 1);
    if (length > maxMessageBytes) {
      throw new ConnectError(
        `message size ${length} is larger than configured readMaxBytes ${maxMessageBytes}`,
        Code.ResourceExhausted,
      );
    }
    if (at + 5 + length > body.length) break;
    envelopes.push(body.subarray(at, at + 5 + length));
    at += 5 + length;
  }
  const first = envelopes[0];
  if (first === undefined) {
    if (body.length === 0) {
      throw new ConnectError(`protocol error: missing input message for ${kind} method`, Code.Unimplemented);
    }
    throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
  }
  if ((first[0] & 1) === 1) {
    throw new ConnectError('received compressed envelope, but do not know how to decompress', Code.Internal);
  }
  let message: MessageShape<S>;
  try {
    message = fromBinary(schema, first.subarray(5));
  } catch (e) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
  if (envelopes.length > 1) {
    throw new ConnectError(`protocol error: received extra input message for ${kind} method`, Code.Unimplemented);
  }
  if (at < body.length) throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
  return message;
}

/** The enveloped NextIdResponse: field 1 (fixed64) the ID, unless 0 (proto3 leaves defaults out), field 2 its decimal string. */
export function nextIdAnswer(id: bigint): Buffer {
  const text = id.toString();
  const idBytes = id === 0n ? 0 : 9;
  const out = Buffer.allocUnsafe(5 + idBytes + 2 + text.length);
  out[0] = 0;
  out.writeUInt32BE(idBytes + 2 + text.length, 1);
  if (idBytes > 0) {
    out[5] = 0x09;
    out.writeBigUInt64LE(id, 6);
  }
  out[5 + idBytes] = 0x12;
  out[6 + idBytes] = text.length; // at most 20 digits: a one-byte varint
  out.write(text, 7 + idBytes, 'latin1');
  return out;
}
