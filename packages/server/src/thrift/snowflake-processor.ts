// The processor of Twitter Snowflake's Thrift service (packages/server/thrift/snowflake.thrift), one framed
// binary-protocol call at a time. Hand-written: the Thrift 0.17 compiler's Node processor fails against thrift 0.24
// (callback handlers reply with no result, promise handlers call the removed `thrift.Q`) and the library's
// `TApplicationException.write` drops the exception type. Replies are the bytes a generated processor writes.
import thrift from 'thrift';

const { Thrift, TBinaryProtocol } = thrift;
const T = Thrift.Type;
const MessageType = Thrift.MessageType;

/** Twitter's user-agent rule (`IdWorker.scala`: `[a-zA-Z][a-zA-Z\-0-9]*`, whole string). */
export const USER_AGENT_PATTERN = /^[a-zA-Z][a-zA-Z\-0-9]*$/;

/**
 * The four calls of Twitter's service. `getId` throws a {@link SnowflakeCallError} to reply with one of the IDL's
 * exceptions; anything else thrown becomes a `TApplicationException` (`INTERNAL_ERROR`) with the error's message.
 */
export interface SnowflakeHandler {
  getWorkerId(): bigint;
  getDatacenterId(): bigint;
  getTimestamp(): bigint;
  getId(userAgent: string): bigint;
}

/** One of `get_id`'s declared exceptions: `InvalidUserAgentError` (result field 1) or `InvalidSystemClock` (2). */
export class SnowflakeCallError extends Error {
  constructor(
    readonly exception: 'InvalidUserAgentError' | 'InvalidSystemClock',
    message: string,
  ) {
    super(message);
    this.name = exception;
  }
}

/** A request that is not a well-formed call (version, message type, truncated or malformed arguments): its connection is closed. */
export class ThriftProtocolViolation extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ThriftProtocolViolation';
  }
}

type Frame = InstanceType<typeof thrift.TFramedTransport>;
type Protocol = InstanceType<typeof TBinaryProtocol>;

const CALLS: ReadonlyMap<string, (h: SnowflakeHandler, userAgent: string) => bigint> = new Map([
  ['get_worker_id', (h) => h.getWorkerId()],
  ['get_datacenter_id', (h) => h.getDatacenterId()],
  ['get_timestamp', (h) => h.getTimestamp()],
  ['get_id', (h, userAgent) => h.getId(userAgent)],
]);

/** TApplicationExceptionType values. */
const APP_UNKNOWN_METHOD = 1;
const APP_INTERNAL_ERROR = 6;
const VERSION_1 = -2147418112; // 0x80010000 as an i32

/** Answers Snowflake calls, one framed message at a time, synchronously. */
export class SnowflakeProcessor {
  constructor(private readonly handler: SnowflakeHandler) {}

  /**
   * The framed reply to one message of `frame` (thrift's `TFramedTransport`, typed `object` so the declarations need
   * no `@types/thrift`), `null` for a one-way call; throws {@link ThriftProtocolViolation} for a malformed call.
   */
  process(frame: object): Buffer | null {
    const input: Protocol = new TBinaryProtocol(frame as Frame);
    let name: string;
    let mtype: thrift.Thrift.MessageType;
    let seqid: number;
    let userAgent: string | undefined;
    try {
      const head = input.readMessageBegin();
      // Non-strict (pre-versioned) messages carry the name as raw bytes.
      name =
        typeof head.fname === 'string' ? head.fname : Buffer.from(head.fname as unknown as Uint8Array).toString('utf8');
      mtype = head.mtype;
      seqid = head.rseqid;
      if (mtype !== MessageType.CALL && mtype !== MessageType.ONEWAY) {
        throw new ThriftProtocolViolation(`message type ${mtype} is not a call (1) or one-way call (4)`);
      }
      userAgent = readArgs(input, name === 'get_id');
      input.readMessageEnd();
    } catch (err) {
      if (err instanceof ThriftProtocolViolation) throw err;
      throw new ThriftProtocolViolation(`malformed Thrift message: ${(err as Error)?.message ?? String(err)}`, {
        cause: err,
      });
    }

    const [type, body] = answer(this.handler, name, userAgent ?? '');
    return mtype === MessageType.ONEWAY ? null : reply(name, type, seqid, body);
  }
}

/** The reply's message type and body (the handler runs for a one-way call too; its reply is dropped). */
function answer(handler: SnowflakeHandler, name: string, userAgent: string): [number, Buffer] {
  const call = CALLS.get(name);
  if (call === undefined) return appException(APP_UNKNOWN_METHOD, `Unknown function ${name.slice(0, 64)}`);
  try {
    const id = Buffer.allocUnsafe(8);
    id.writeBigInt64BE(BigInt.asIntN(64, call(handler, userAgent))); // i64: IDs of 63-bit layouts stay positive
    return [MessageType.REPLY, struct(field(T.I64, 0, id))];
  } catch (err) {
    if (err instanceof SnowflakeCallError && name === 'get_id') {
      const id = err.exception === 'InvalidUserAgentError' ? 1 : 2;
      return [MessageType.REPLY, struct(field(T.STRUCT, id, struct(field(T.STRING, 1, str(err.message)))))];
    }
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: unknown })?.code;
    return appException(APP_INTERNAL_ERROR, typeof code === 'string' ? `${code}: ${message}` : message);
  }
}

/** Reads an argument struct; returns field 1 (`useragent`) when `wantUserAgent`, skipping everything else. */
function readArgs(input: Protocol, wantUserAgent: boolean): string | undefined {
  let userAgent: string | undefined;
  input.readStructBegin();
  for (;;) {
    const f = input.readFieldBegin();
    if (f.ftype === T.STOP) break;
    if (wantUserAgent && f.fid === 1 && f.ftype === T.STRING) userAgent = input.readString();
    else if (!KNOWN_TYPES.has(f.ftype)) throw new ThriftProtocolViolation(`unknown Thrift field type ${f.ftype}`);
    else input.skip(f.ftype);
    input.readFieldEnd();
  }
  input.readStructEnd();
  return userAgent;
}

/** The field types a reader can skip (16: UUID). */
const KNOWN_TYPES = new Set<number>(
  (['BOOL', 'BYTE', 'I16', 'I32', 'I64', 'DOUBLE', 'STRING', 'STRUCT', 'MAP', 'SET', 'LIST'] as const).map((k) => T[k]),
).add(16);

const i32 = (v: number): Buffer => Buffer.from([v >>> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255]);
const str = (s: string): Buffer => Buffer.concat([i32(Buffer.byteLength(s)), Buffer.from(s)]);
const field = (type: number, id: number, value: Buffer): Buffer =>
  Buffer.concat([Buffer.from([type, id >> 8, id & 255]), value]);
const struct = (...fields: Buffer[]): Buffer => Buffer.concat([...fields, Buffer.from([T.STOP])]);

function appException(type: number, message: string): [number, Buffer] {
  return [MessageType.EXCEPTION, struct(field(T.STRING, 1, str(message)), field(T.I32, 2, i32(type)))];
}

/** The framed message: length, strict version and type, name, sequence ID, body. */
function reply(name: string, type: number, seqid: number, body: Buffer): Buffer {
  const message = Buffer.concat([i32(VERSION_1 | type), str(name), i32(seqid), body]);
  return Buffer.concat([i32(message.length), message]);
}
