/**
 * Raw-socket helpers of the memcached tests: a connection that sends bytes and waits
 * (bounded) for a number of text replies or binary responses, and the binary request and
 * response framing written out by hand from memcached's protocol_binary.txt, so the tests
 * check the server against the specification, not against its own code.
 */
import { connect, type Socket } from 'node:net';

/** The last line of a complete text reply. */
const TERMINAL = /^(END|ERROR|CLIENT_ERROR .*|SERVER_ERROR .*|VERSION .*)$/;

/** One binary response, parsed. */
export interface BinaryResponse {
  magic: number;
  opcode: number;
  status: number;
  opaque: number;
  cas: bigint;
  extras: Buffer;
  key: string;
  value: string;
}

/** A binary request: 24-byte header (magic 0x80), then extras, key and value. */
export function binaryRequest(
  opcode: number,
  key = '',
  opts: { value?: Buffer | string; extras?: Buffer; opaque?: number; bodyLength?: number; magic?: number } = {},
): Buffer {
  const k = Buffer.from(key, 'latin1');
  const v = typeof opts.value === 'string' ? Buffer.from(opts.value, 'latin1') : (opts.value ?? Buffer.alloc(0));
  const e = opts.extras ?? Buffer.alloc(0);
  const h = Buffer.alloc(24);
  h[0] = opts.magic ?? 0x80;
  h[1] = opcode;
  h.writeUInt16BE(k.length, 2);
  h[4] = e.length;
  h.writeUInt32BE(opts.bodyLength ?? e.length + k.length + v.length, 8);
  h.writeUInt32BE(opts.opaque ?? 0, 12);
  return Buffer.concat([h, e, k, v]);
}

function parseBinary(buf: Buffer): { responses: BinaryResponse[]; used: number } {
  const responses: BinaryResponse[] = [];
  let pos = 0;
  while (buf.length - pos >= 24) {
    const bodyLen = buf.readUInt32BE(pos + 8);
    if (buf.length - pos < 24 + bodyLen) break;
    const keyLen = buf.readUInt16BE(pos + 2);
    const extLen = buf[pos + 4];
    const body = buf.subarray(pos + 24, pos + 24 + bodyLen);
    responses.push({
      magic: buf[pos],
      opcode: buf[pos + 1],
      status: buf.readUInt16BE(pos + 6),
      opaque: buf.readUInt32BE(pos + 12),
      cas: buf.readBigUInt64BE(pos + 16),
      extras: Buffer.from(body.subarray(0, extLen)),
      key: body.subarray(extLen, extLen + keyLen).toString('latin1'),
      value: body.subarray(extLen + keyLen).toString('latin1'),
    });
    pos += 24 + bodyLen;
  }
  return { responses, used: pos };
}

/** A raw connection to a memcached endpoint. */
export class RawConnection {
  private data = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  /** True once the server closed the connection. */
  ended = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.data = Buffer.concat([this.data, d]);
      this.waiter?.();
    });
    const end = (): void => {
      this.ended = true;
      this.waiter?.();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', end);
  }

  /** Connects to 127.0.0.1:`port`. */
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port }, () => resolve(new RawConnection(s)));
      s.once('error', reject);
    });
  }

  /** Sends bytes. */
  send(bytes: string | Buffer): void {
    this.socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  }

  /** Waits (bounded) until `done(data)` holds or the connection ends. */
  async wait(done: (data: Buffer) => boolean, timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!done(this.data) && !this.ended) {
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no complete reply within ${timeoutMs} ms; got ${JSON.stringify(this.peek())}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }

  /** What has arrived and not been taken yet (latin1). */
  peek(): string {
    return this.data.toString('latin1').slice(0, 2000);
  }

  /** Sends `bytes` (if any) and takes `n` complete text replies (each ending with its terminal line). */
  async text(bytes: string | Buffer | undefined, n = 1, timeoutMs?: number): Promise<string[]> {
    if (bytes !== undefined) this.send(bytes);
    await this.wait(() => this.scanText() >= n, timeoutMs);
    if (this.ends.length < n)
      throw new Error(`connection ended after ${this.ends.length} of ${n} replies: ${this.peek()}`);
    const replies: string[] = [];
    let start = 0;
    for (let i = 0; i < n; i++) {
      replies.push(this.data.toString('latin1', start, this.ends[i]));
      start = this.ends[i];
    }
    this.data = this.data.subarray(start);
    this.ends = this.ends.slice(n).map((e) => e - start);
    this.scanned -= start;
    return replies;
  }

  /** Where complete text replies end in `data` (found incrementally: a long pipelined run stays linear). */
  private ends: number[] = [];
  private scanned = 0;
  private scanText(): number {
    for (;;) {
      const nl = this.data.indexOf('\r\n', this.scanned, 'latin1');
      if (nl < 0) break;
      const line = this.data.toString('latin1', this.scanned, Math.min(nl, this.scanned + 200));
      this.scanned = nl + 2;
      if (TERMINAL.test(line)) this.ends.push(nl + 2);
    }
    return this.ends.length;
  }

  /** Sends `bytes` (if any) and takes `n` binary responses. */
  async binary(bytes: Buffer | undefined, n = 1, timeoutMs?: number): Promise<BinaryResponse[]> {
    if (bytes !== undefined) this.send(bytes);
    await this.wait((d) => parseBinary(d).responses.length >= n, timeoutMs);
    const { responses, used } = parseBinary(this.data);
    if (responses.length < n) throw new Error(`connection ended after ${responses.length} of ${n} responses`);
    const take = responses.slice(0, n);
    let consumed = 0;
    for (const r of take) consumed += 24 + r.extras.length + Buffer.byteLength(r.key, 'latin1') + r.value.length;
    this.data = this.data.subarray(Math.min(consumed, used));
    return take;
  }

  /** Waits (bounded) for the server to close the connection. */
  async closedByServer(timeoutMs = 5_000): Promise<boolean> {
    await this.wait(() => false, timeoutMs).catch(() => undefined);
    return this.ended;
  }

  /** Closes this side. */
  close(): void {
    this.socket.destroy();
  }
}

/** The decimal IDs in text replies (`VALUE k 0 n\r\nID\r\n`), in order. */
export function idsOf(replies: string[]): bigint[] {
  const out: bigint[] = [];
  for (const r of replies)
    for (const m of r.matchAll(/^VALUE \S+ 0 \d+(?: \d+)?\r\n(\d+)\r\n/gm)) out.push(BigInt(m[1]));
  return out;
}
