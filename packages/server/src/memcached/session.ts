// What both memcached protocols share: the server-wide context, the wording of a refused issue, the Session base.
import { createHash, timingSafeEqual } from 'node:crypto';
import type net from 'node:net';
import type { ProtocolRecorder } from '../protocol-metrics.js';

/** The longest text command line accepted, in bytes without its `\r\n` (longer: `CLIENT_ERROR`). */
export const MAX_LINE_BYTES = 2048;
/** The longest key, in bytes (memcached's limit). */
export const MAX_KEY_BYTES = 250;
/** The largest binary request body accepted (larger ones are skipped and answered `E2BIG`). */
export const MAX_BINARY_BODY_BYTES = 4096;
/** Replies queued in a socket beyond which the session stops reading from it until they drain. */
const OUTPUT_HIGH_WATER_BYTES = 64 * 1024;

const COMMANDS = ['get', 'gets', 'stats', 'version', 'quit', 'noop', 'sasl', 'unknown', 'invalid'] as const;
/** The `command` label values of the `protocol="memcached"` metrics, in {@link ProtocolRecorder.request}'s order. */
export const MEMCACHED_COMMANDS: string[] = [...COMMANDS];
/** Indexes into {@link MEMCACHED_COMMANDS}. */
export const CMD = Object.fromEntries(COMMANDS.map((c, i) => [c, i])) as Record<(typeof COMMANDS)[number], number>;

/** The counters behind `stats` (katsubushi's names, as memcached's). */
export interface MemcachedCounters {
  currConnections: number;
  totalConnections: number;
  /** Keys asked for (`get`/`gets` keys, binary GETs). */
  cmdGet: number;
  /** IDs issued over memcached. */
  getHits: number;
  /** Keys refused (no lease, …). */
  getMisses: number;
  bytesRead: number;
  /** Bytes handed to clients' sockets. */
  bytesWritten: number;
}

/** What every session of one server sees. */
export interface MemcachedContext {
  /** Issues the IDs (the service's issuer). */
  readonly ids: { nextString(): string };
  /** Null without a token; else whether a SASL PLAIN password is the token. */
  readonly auth: ((password: Buffer) => boolean) | null;
  readonly counters: MemcachedCounters;
  /** The version `version` answers. */
  readonly version: string;
  readonly recorder: ProtocolRecorder | undefined;
  /** The `stats` lines, in order. */
  statLines(): Array<[string, string]>;
  /** Logs a connection closed for a protocol violation. */
  violation(socket: net.Socket, reason: string): void;
}

/** A check of a SASL PLAIN password against `token` in constant time (both sides hashed first, as the HTTP bearer check). */
export function tokenCheck(token: string): (password: Buffer) => boolean {
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return (password) => timingSafeEqual(createHash('sha256').update(password).digest(), expected);
}

/** The one-line answer to a failed issue: code, what happened, what to do (a fenced refusal reworded for callers). */
export function refusalText(err: unknown): string {
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' && raw.startsWith('FLURRY_E_') ? raw : 'FLURRY_E_INTERNAL';
  const message =
    code === 'FLURRY_E_LEASE_EXPIRED'
      ? 'this instance issues no IDs now: it holds no valid node-ID lease, and resumes once the registry renews or grants one; retry shortly or use another instance'
      : code === 'FLURRY_E_INTERNAL' && !(typeof raw === 'string')
        ? `issuing failed unexpectedly (${String((err as Error)?.message ?? err)}); retry, and report it if it persists`
        : String((err as Error).message);
  // One line, printable ASCII, bounded: it goes on the wire.
  return `${code} ${message}`.replace(/[^\x20-\x7e]+/g, ' ').slice(0, 1024);
}

/** One connection: one unfinished request held at most, reading paused while replies back up, refused bodies skipped. */
export abstract class Session {
  private pending: Buffer | undefined = undefined;
  /** Replies not yet handed to the socket: `out[0, outLen)`. */
  protected out: Buffer = Buffer.allocUnsafe(OUT_FIRST_BYTES);
  private outLen = 0;
  private view: Buffer = EMPTY;
  private viewOf: Buffer = EMPTY;
  /** Reads so far, and whether the one being answered is timed; the requests answered in a timed one. */
  private reads = 0;
  private timing = false;
  private readonly outcomes: number[] = [];
  /** Set once the connection is being closed: nothing more is read or answered. */
  protected closed = false;
  /** Bytes of a refused request still to skip. */
  protected skip = 0;
  private paused = false;

  constructor(
    protected readonly ctx: MemcachedContext,
    protected readonly socket: net.Socket,
  ) {
    socket.on('drain', () => {
      if (!this.paused || this.closed) return;
      this.paused = false;
      socket.resume();
      this.feed(EMPTY);
    });
  }

  /** Handles bytes read from the socket. */
  feed(chunk: Buffer): void {
    this.ctx.counters.bytesRead += chunk.length;
    if (this.closed) return;
    // One read in TIMED_READS is timed: two clock reads per request cost more than the rest of the metrics, and the
    // sample keeps the latency histogram's shape (docs/service-api.md#metrics).
    const recorder = this.ctx.recorder;
    this.timing = recorder !== undefined && (recorder.count === undefined || this.reads++ % TIMED_READS === 0);
    const started = this.timing ? performance.now() : 0;
    let buf = chunk;
    if (this.pending !== undefined) {
      buf = chunk.length === 0 ? this.pending : Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let pos = 0;
    while (pos < buf.length && !this.closed) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, buf.length - pos);
        this.skip -= n;
        pos += n;
        continue;
      }
      const next = this.request(buf, pos);
      if (next < 0) break;
      pos = next;
    }
    this.flush();
    if (this.outcomes.length > 0) this.record(started);
    if (this.closed) return;
    if (pos < buf.length) this.pending = buf.subarray(pos);
    if (this.backedUp() && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** Answers the request at `buf[pos]`; returns where the next one starts, or -1 (unfinished, or {@link backedUp}). */
  protected abstract request(buf: Buffer, pos: number): number;

  /** Whether the socket's queued replies pass the high-water mark: `request` stops, `feed` pauses until it drains. */
  protected backedUp(): boolean {
    if (this.outLen >= FLUSH_BYTES) this.flush();
    return this.socket.writableLength > OUTPUT_HIGH_WATER_BYTES;
  }

  /** Counts a request answered in this chunk: `command * 2 + (failed ? 1 : 0)` ({@link CMD}). */
  protected answered(outcome: number): void {
    if (this.timing) this.outcomes.push(outcome);
    else this.ctx.recorder?.count?.(outcome >> 1, (outcome & 1) === 0);
  }

  /** Records a timed chunk's requests after its replies are written, each with the chunk's time. */
  private record(started: number): void {
    const seconds = (performance.now() - started) / 1000;
    for (const o of this.outcomes) this.ctx.recorder!.request(o >> 1, (o & 1) === 0, seconds);
    this.outcomes.length = 0;
  }

  /** Makes room for a reply of `n` bytes and returns where it starts in {@link out}. */
  protected reserve(n: number): number {
    if (this.outLen + n > this.out.length) {
      // A full buffer means replies come in runs (pipelining): the next one is larger, up to OUT_MAX_BYTES.
      const size = Math.max(n, Math.min(this.out.length * 4, OUT_MAX_BYTES));
      this.flush();
      if (size > this.out.length) this.out = Buffer.allocUnsafe(size);
    }
    const at = this.outLen;
    this.outLen += n;
    return at;
  }

  /** Queues a text reply (latin1: keys go back byte for byte). */
  protected queue(s: string): void {
    putLatin1(this.out, this.reserve(s.length), s);
  }

  /** Writes what is queued, then ends the connection (`quit`). */
  protected finish(): void {
    this.flush();
    this.closed = true;
    this.socket.end();
  }

  /** Closes the connection at once (a request the protocol cannot recover from). */
  protected abort(reason: string): void {
    this.flush();
    this.closed = true;
    this.ctx.violation(this.socket, reason);
    this.socket.end(() => this.socket.destroy());
  }

  private flush(): void {
    const n = this.outLen;
    if (n === 0) return;
    this.outLen = 0;
    if (this.socket.destroyed) return;
    this.ctx.counters.bytesWritten += n;
    // Clients repeat one request, so the view of out[0, n) is kept for the next reply of that length.
    if (this.view.length !== n || this.viewOf !== this.out) {
      this.view = this.out.subarray(0, n);
      this.viewOf = this.out;
    }
    this.socket.write(this.view);
    // Written at once (the usual case), the bytes are the kernel's and `out` is free again;
    // else the socket holds them until the write ends, and the next replies go to a new buffer.
    if (this.socket.writableLength > 0) this.out = Buffer.allocUnsafe(this.out.length);
  }
}

/** Writes `s` as latin1 at `out[at]` and returns where it ends (a loop: replies are short, a call into C++ costs more). */
export function putLatin1(out: Buffer, at: number, s: string): number {
  if (s.length > 64) return at + out.write(s, at, 'latin1');
  for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  return at + s.length;
}

const EMPTY = Buffer.alloc(0);
/** Replies queued in the session are handed to the socket once they reach this size. */
const FLUSH_BYTES = 16 * 1024;
/** One read in this many (the first included) is timed for the latency histogram. */
const TIMED_READS = 16;
/** A session's first reply buffer (small: idle connections hold little), and the largest it grows to. */
const OUT_FIRST_BYTES = 1024;
const OUT_MAX_BYTES = 2 * FLUSH_BYTES;
