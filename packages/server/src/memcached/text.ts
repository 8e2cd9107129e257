// memcached's text protocol as katsubushi answers it: docs/service-api.md#memcached-protocol-katsubushi-compatible.
import { CMD, MAX_KEY_BYTES, MAX_LINE_BYTES, Session, putLatin1, refusalText } from './session.js';

/** A storage command's data block larger than this is not skipped: the line is refused. */
const MAX_SKIP_BYTES = 1024 * 1024;
const STORAGE = new Set(['set', 'add', 'replace', 'append', 'prepend', 'cas']);
const ERROR = 'ERROR\r\n';
const TOO_LONG = `CLIENT_ERROR line too long: a command line is at most ${MAX_LINE_BYTES} bytes; send fewer keys per get\r\n`;

/** One text-protocol connection. */
export class TextSession extends Session {
  /** Skipping the rest of an overlong line, up to its newline. */
  private discarding = false;
  /** The key of the last `get KEY` line (clients reuse one key; latin1, so its char codes are its bytes). */
  private lastKey = '';
  /** The one-key list of the `get KEY` fast path, and the IDs of one `get`, both reused. */
  private readonly oneKey: string[] = [''];
  private readonly issued: string[] = [];

  protected request(buf: Buffer, pos: number): number {
    const nl = newline(buf, pos);
    if (this.discarding) {
      if (nl < 0) return buf.length;
      this.discarding = false;
      return nl + 1;
    }
    if (nl < 0) {
      if (buf.length - pos <= MAX_LINE_BYTES + 1) return -1; // the rest of the line comes later
      this.rejectLine();
      this.discarding = true;
      return buf.length;
    }
    if (this.backedUp()) return -1;
    const end = nl > pos && buf[nl - 1] === 13 ? nl - 1 : nl;
    if (end - pos > MAX_LINE_BYTES) this.rejectLine();
    else this.line(buf, pos, end);
    return nl + 1;
  }

  private rejectLine(): void {
    this.queue(TOO_LONG);
    this.answered(CMD.invalid * 2 + 1);
  }

  /** Answers the line `buf[pos, end)`; `get KEY` with one valid key goes straight to {@link get}. */
  private line(buf: Buffer, pos: number, end: number): void {
    const key = end - pos > 4 && isGet(buf, pos) && buf[pos + 3] === 32 ? this.singleKey(buf, pos + 4, end) : undefined;
    if (key === undefined) return this.answered(this.dispatch(tokenize(buf, pos, end)));
    this.oneKey[0] = key;
    this.answered(CMD.get * 2 + (this.get(this.oneKey, 0, false) ? 0 : 1));
  }

  /** Answers one line's tokens; returns `command * 2 + (failed ? 1 : 0)`. */
  private dispatch(tokens: string[]): number {
    if (tokens.length === 0) {
      this.queue(ERROR);
      return CMD.unknown * 2 + 1;
    }
    let name = tokens[0];
    if (name !== 'get' && name !== 'gets') name = name.toLowerCase();
    switch (name) {
      case 'get':
        return CMD.get * 2 + (this.get(tokens, 1, false) ? 0 : 1);
      case 'gets':
        return CMD.gets * 2 + (this.get(tokens, 1, true) ? 0 : 1);
      case 'stats':
        if (this.refuseUnauthenticated()) return CMD.stats * 2 + 1;
        this.queue(this.ctx.statLines().reduce((s, [k, v]) => s + `STAT ${k} ${v}\r\n`, '') + 'END\r\n');
        return CMD.stats * 2;
      case 'version':
        this.queue(`VERSION ${this.ctx.version}\r\n`);
        return CMD.version * 2;
      case 'quit':
        this.finish();
        return CMD.quit * 2;
      default:
        if (STORAGE.has(name)) this.skipDataBlock(tokens);
        this.queue(ERROR);
        return CMD.unknown * 2 + 1;
    }
  }

  /** Answers `get`/`gets` for `keys[from…]`, one fresh ID each or none; the fast path's key (`from` 0) is checked. */
  private get(keys: string[], from: number, withCas: boolean): boolean {
    const n = keys.length - from;
    if (n === 0) {
      this.queue(ERROR); // memcached's and katsubushi's answer to a get without a key
      return false;
    }
    for (let i = 1; from > 0 && i <= n; i++) {
      const problem = keyProblem(keys[i]);
      if (problem !== null) {
        this.queue(
          `CLIENT_ERROR bad key ${i}: ${problem}; a key is 1 to ${MAX_KEY_BYTES} bytes without spaces or control characters\r\n`,
        );
        return false;
      }
    }
    if (this.refuseUnauthenticated()) return false;
    const counters = this.ctx.counters;
    counters.cmdGet += n;
    const ids = this.ctx.ids;
    const issued = this.issued;
    try {
      for (let i = 0; i < n; i++) issued[i] = ids.nextString(); // entries past n are stale, never read
    } catch (err) {
      counters.getMisses += n;
      this.queue(`SERVER_ERROR ${refusalText(err)}\r\n`);
      return false;
    }
    counters.getHits += n;
    for (let i = 0; i < n; i++) this.value(keys[from + i], issued[i], withCas, i === n - 1);
    return true;
  }

  /** Queues `VALUE key 0 len [cas]\r\nid\r\n`, then `END\r\n` after the `last`. */
  private value(key: string, id: string, withCas: boolean, last: boolean): void {
    const len = String(id.length);
    let at = this.reserve(13 + key.length + len.length + id.length + (withCas ? id.length + 1 : 0) + (last ? 5 : 0));
    const o = this.out;
    at = putLatin1(o, putLatin1(o, putLatin1(o, putLatin1(o, at, 'VALUE '), key), ' 0 '), len);
    if (withCas) at = putLatin1(o, putLatin1(o, at, ' '), id); // the ID doubles as the CAS value
    at = putLatin1(o, putLatin1(o, at, '\r\n'), id);
    putLatin1(o, at, last ? '\r\nEND\r\n' : '\r\n');
  }

  /** The one valid key in `buf[start, end)`, else undefined (the general path words errors); reused while unchanged. */
  private singleKey(buf: Buffer, start: number, end: number): string | undefined {
    const n = end - start;
    if (n > MAX_KEY_BYTES) return undefined;
    const last = this.lastKey;
    let same = last.length === n;
    for (let i = 0; i < n; i++) {
      const c = buf[start + i];
      if (badKeyByte(c)) return undefined;
      if (same && last.charCodeAt(i) !== c) same = false;
    }
    if (!same) this.lastKey = buf.toString('latin1', start, end);
    return this.lastKey;
  }

  private refuseUnauthenticated(): boolean {
    if (this.ctx.auth === null) return false;
    this.queue(
      'CLIENT_ERROR FLURRY_E_UNAUTHORIZED this service needs its token: use the binary protocol and authenticate with SASL PLAIN (any user name, the token as the password)\r\n',
    );
    return true;
  }

  /** `set KEY FLAGS EXPTIME BYTES …`: skip the data block that follows, so the next line is a command again. */
  private skipDataBlock(tokens: string[]): void {
    const bytes = tokens[4];
    if (bytes === undefined || !/^\d{1,8}$/.test(bytes)) return;
    const n = Number(bytes);
    if (n <= MAX_SKIP_BYTES) this.skip = n + 2;
  }
}

/** Splits the line `buf[pos, end)` on spaces (runs of them count as one) into latin1 strings. */
function tokenize(buf: Buffer, pos: number, end: number): string[] {
  const tokens: string[] = [];
  let i = pos;
  while (i < end) {
    while (i < end && buf[i] === 32) i++;
    const start = i;
    while (i < end && buf[i] !== 32) i++;
    if (i > start) tokens.push(buf.toString('latin1', start, i));
  }
  return tokens;
}

/** Where the next `\n` from `pos` is, or -1: a loop over a short line costs less than a call into C++. */
function newline(buf: Buffer, pos: number): number {
  const stop = Math.min(buf.length, pos + 32);
  for (let i = pos; i < stop; i++) if (buf[i] === 10) return i;
  return stop === buf.length ? -1 : buf.indexOf(10, stop);
}

/** Whether `buf` holds `get` at `i`. */
function isGet(buf: Buffer, i: number): boolean {
  return buf[i] === 103 && buf[i + 1] === 101 && buf[i + 2] === 116;
}

/** Whether a key may not hold the byte `c`: spaces and control characters. */
function badKeyByte(c: number): boolean {
  return c < 0x21 || c === 0x7f;
}

/** Why `key` is not a valid memcached key, or null. */
function keyProblem(key: string): string | null {
  if (key.length > MAX_KEY_BYTES) return `it has ${key.length} bytes`;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (badKeyByte(c)) return `it holds the control character 0x${c.toString(16).padStart(2, '0')}`;
  }
  return null;
}
