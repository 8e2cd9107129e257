/**
 * `NextId` over gRPC's binary protocol, answered on node:http2's stream API instead of
 * through Connect's per-call pipeline, which allocates about 100 KB a call and lets V8
 * promote a quarter of it (docs/grpc.md#memory). Every other call (Connect, gRPC-Web,
 * JSON, compressed requests, a malformed `grpc-timeout`, browsers, other methods) goes to
 * Connect. The answers, errors, headers and trailers are Connect's own, frame for frame
 * (unary.test.ts compares the two); the token check, metrics and error mapping are status.ts's.
 */
import type http2 from 'node:http2';
import { fromBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { compressionNegotiate } from '@connectrpc/connect/protocol';
import { parseTimeout, setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import { BearerAuth } from '../http/auth.js';
import type { IdSource } from '../http/context.js';
import { IdService, NextIdRequestSchema } from './gen-proto/flurry/v1/id_service_pb.js';
import { codeName, toConnectError, type CallRecorder } from './status.js';

const PATH = `/${IdService.typeName}/${IdService.method.nextId.name}`;
const METHOD = `${IdService.name}/${IdService.method.nextId.name}`;
const CONTENT_TYPES = new Set(['application/grpc', 'application/grpc+proto']);
/** The response compressions Connect's Node adapter offers; NextId's answer is under its 1 KiB threshold, so only the header shows it. */
const OFFERED = [{ name: 'gzip' }, { name: 'br' }] as Parameters<typeof compressionNegotiate>[0];

/** What the NextId path needs: the issuer, the request size limit, the token and the metrics. */
export interface NextIdPathOptions {
  ids: IdSource;
  maxMessageBytes: number;
  token: string | undefined;
  record: CallRecorder | undefined;
  now?: () => number;
}

/**
 * A `stream` listener for the HTTP/2 server: answers a gRPC `NextId` call and returns true,
 * or returns false (and reads nothing) for any call it leaves to Connect.
 */
export function nextIdPath(
  opts: NextIdPathOptions,
): (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean {
  const { ids, maxMessageBytes, record } = opts;
  const auth = opts.token === undefined ? undefined : new BearerAuth(opts.token);
  const now = opts.now ?? performance.now.bind(performance);
  return (stream, headers) => {
    if (headers[':path'] !== PATH || headers[':method'] !== 'POST' || headers.origin !== undefined) return false;
    const type = headers['content-type'];
    const encoding = headers['grpc-encoding'];
    if (type === undefined || !CONTENT_TYPES.has(type.toLowerCase())) return false;
    if (encoding !== undefined && encoding !== 'identity') return false;
    const timeout = headers['grpc-timeout'];
    if (
      timeout !== undefined &&
      (typeof timeout !== 'string' || parseTimeout(timeout, Number.MAX_SAFE_INTEGER).error)
    ) {
      return false;
    }
    const accept = headers['grpc-accept-encoding'];
    if (typeof accept === 'object') return false;
    const compression = compressionNegotiate(OFFERED, null, accept ?? null, 'grpc-accept-encoding').response;
    const start = now();
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('error', () => undefined); // a reset by the client; nothing was issued yet
    stream.on('data', (c: Buffer) => {
      // Two largest envelopes decide the answer; past them it is an error anyway.
      if (size < 2 * (maxMessageBytes + 5)) chunks.push(c);
      size += c.length;
    });
    stream.on('end', () => {
      if (stream.destroyed || stream.closed) return;
      let body: Buffer | undefined;
      let error: ConnectError | undefined;
      try {
        checkRequest(Buffer.concat(chunks), maxMessageBytes);
        const refused = auth?.check(headers.authorization);
        if (refused) throw refused;
        body = nextIdAnswer(ids.next());
      } catch (err) {
        error = toConnectError(err);
      }
      const head: http2.OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc+proto' };
      if (compression) head['grpc-encoding'] = compression.name;
      const trailer: http2.OutgoingHttpHeaders = {};
      setTrailerStatus(new Headers(), error).forEach((v, k) => (trailer[k] = v));
      stream.respond(head, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers(trailer));
      stream.end(body);
      record?.('grpc', METHOD, error ? codeName(error.code) : 'ok', (now() - start) / 1000);
    });
    return true;
  };
}

/**
 * Throws Connect's error for a request body that is not exactly one uncompressed,
 * parseable NextIdRequest, in Connect's order for a body that arrives in one piece.
 */
function checkRequest(body: Buffer, maxMessageBytes: number): void {
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
      throw new ConnectError('protocol error: missing input message for unary method', Code.Unimplemented);
    }
    throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
  }
  if ((first[0] & 1) === 1) {
    throw new ConnectError('received compressed envelope, but do not know how to decompress', Code.Internal);
  }
  if (first.length > 5) {
    try {
      fromBinary(NextIdRequestSchema, first.subarray(5));
    } catch (e) {
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
    }
  }
  if (envelopes.length > 1) {
    throw new ConnectError('protocol error: received extra input message for unary method', Code.Unimplemented);
  }
  if (at < body.length) throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
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
