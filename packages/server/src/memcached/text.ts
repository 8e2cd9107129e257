/**
 * memcached's text protocol as katsubushi answers it (`get`, `gets`, `stats`, `version`, `quit`),
 * over the service's issuer: docs/service-api.md#memcached-protocol-katsubushi-compatible.
 */
import { CMD, MAX_KEY_BYTES, MAX_LINE_BYTES, Session, refusalText } from './session.js';

/** A storage command's data block larger than this is not skipped: the line is refused. */
const MAX_SKIP_BYTES = 1024 * 1024;
const STORAGE = new Set(['set', 'add', 'replace', 'append', 'prepend', 'cas']);
const ERROR = 'ERROR\r\n';
const TOO_LONG = `CLIENT_ERROR line too long: a command line is at most ${MAX_LINE_BYTES} bytes; send fewer keys per get\r\n`;

/** One text-protocol connection. */
export class TextSession extends Session {
  /** Skipping the rest of an overlong line, up to its newline. */
  private discarding = false;

  protected request(buf: Buffer, pos: number): number {
    const nl = buf.indexOf(10, pos);
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
    this.ctx.recorder?.request(CMD.invalid, false, 0);
  }

  /** Answers the line `buf[pos, end)` and records it. */
  private line(buf: Buffer, pos: number, end: number): void {
    const recorder = this.ctx.recorder;
    const started = recorder ? performance.now() : 0;
    const outcome = this.dispatch(tokenize(buf, pos, end));
    if (recorder) recorder.request(outcome >> 1, (outcome & 1) === 0, (performance.now() - started) / 1000);
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
        return CMD.get * 2 + (this.get(tokens, false) ? 0 : 1);
      case 'gets':
        return CMD.gets * 2 + (this.get(tokens, true) ? 0 : 1);
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

  private get(tokens: string[], withCas: boolean): boolean {
    const n = tokens.length - 1;
    if (n === 0) {
      this.queue(ERROR); // memcached's and katsubushi's answer to a get without a key
      return false;
    }
    for (let i = 1; i <= n; i++) {
      const problem = keyProblem(tokens[i]);
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
    let out = '';
    try {
      for (let i = 1; i <= n; i++) {
        const id = ids.nextString();
        out += withCas
          ? 'VALUE ' + tokens[i] + ' 0 ' + id.length + ' ' + id + '\r\n' + id + '\r\n'
          : 'VALUE ' + tokens[i] + ' 0 ' + id.length + '\r\n' + id + '\r\n';
      }
    } catch (err) {
      counters.getMisses += n;
      this.queue(`SERVER_ERROR ${refusalText(err)}\r\n`);
      return false;
    }
    counters.getHits += n;
    this.queue(out + 'END\r\n');
    return true;
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

/**
 * Splits the line `buf[pos, end)` on spaces (runs of them count as one) into latin1 strings,
 * straight from the bytes: the hot path (`get KEY`) makes no string of the whole line.
 */
function tokenize(buf: Buffer, pos: number, end: number): string[] {
  const tokens: string[] = [];
  let i = pos;
  while (i < end) {
    while (i < end && buf[i] === 32) i++;
    const start = i;
    while (i < end && buf[i] !== 32) i++;
    if (i > start) tokens.push(i - start === 3 && isGet(buf, start) ? 'get' : buf.toString('latin1', start, i));
  }
  return tokens;
}

/** Whether `buf` holds `get` at `i` (the common command, named without making a string). */
function isGet(buf: Buffer, i: number): boolean {
  return buf[i] === 103 && buf[i + 1] === 101 && buf[i + 2] === 116;
}

/** Why `key` is not a valid memcached key, or null. */
function keyProblem(key: string): string | null {
  if (key.length > MAX_KEY_BYTES) return `it has ${key.length} bytes`;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x21 || c === 0x7f) return `it holds the control character 0x${c.toString(16).padStart(2, '0')}`;
  }
  return null;
}
