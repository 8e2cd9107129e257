// memcached's binary protocol, the part katsubushi answers, plus SASL PLAIN for the token
// (docs/service-api.md#memcached-protocol-katsubushi-compatible). A bad magic byte cannot be resynchronised: it closes.
import { CMD, MAX_BINARY_BODY_BYTES, MAX_KEY_BYTES, Session, putLatin1, refusalText } from './session.js';

/** The first byte of every binary request. */
export const BINARY_MAGIC = 0x80;
const RESPONSE_MAGIC = 0x81;
const HEADER = 24;

const OP = {
  get: 0x00,
  quit: 0x07,
  getq: 0x09,
  noop: 0x0a,
  version: 0x0b,
  getk: 0x0c,
  getkq: 0x0d,
  stat: 0x10,
  quitq: 0x17,
  saslList: 0x20,
  saslAuth: 0x21,
  saslStep: 0x22,
} as const;

const STATUS = {
  ok: 0x0000,
  tooLarge: 0x0003,
  invalid: 0x0004,
  authError: 0x0020,
  unknown: 0x0081,
  temporaryFailure: 0x0086,
} as const;

const FLAGS = Buffer.alloc(4);
const NONE = Buffer.alloc(0);

/** One binary-protocol connection. */
export class BinarySession extends Session {
  private authenticated = false;
  /** The opcode and opaque of the request being answered (every reply repeats them). */
  private opcode = 0;
  private opaque = 0;

  protected request(buf: Buffer, pos: number): number {
    if (buf.length - pos < HEADER) return -1;
    if (buf[pos] !== BINARY_MAGIC) {
      this.abort(`binary request magic 0x${buf[pos].toString(16)} is not 0x80`);
      return buf.length;
    }
    if (this.backedUp()) return -1;
    this.opcode = buf[pos + 1];
    this.opaque = buf.readUInt32BE(pos + 12);
    const keyLen = buf.readUInt16BE(pos + 2);
    const extLen = buf[pos + 4];
    const bodyLen = buf.readUInt32BE(pos + 8);
    if (bodyLen > MAX_BINARY_BODY_BYTES || keyLen + extLen > bodyLen) {
      const tooLarge = bodyLen > MAX_BINARY_BODY_BYTES;
      this.reply(
        tooLarge ? STATUS.tooLarge : STATUS.invalid,
        tooLarge
          ? `request body of ${bodyLen} bytes is over the ${MAX_BINARY_BODY_BYTES}-byte limit`
          : 'key and extras are longer than the body',
      );
      this.answered(CMD.invalid * 2 + 1);
      this.skip = bodyLen;
      return pos + HEADER;
    }
    if (buf.length - pos < HEADER + bodyLen) return -1; // the rest of the body comes later
    const bodyAt = pos + HEADER + extLen;
    const key = buf.subarray(bodyAt, bodyAt + keyLen);
    const value = buf.subarray(bodyAt + keyLen, pos + HEADER + bodyLen);
    this.answered(this.dispatch(key, value));
    return pos + HEADER + bodyLen;
  }

  /** Answers one request; returns `command * 2 + (failed ? 1 : 0)`. */
  private dispatch(key: Buffer, value: Buffer): number {
    switch (this.opcode) {
      case OP.version:
        this.reply(STATUS.ok, this.ctx.version);
        return CMD.version * 2;
      case OP.noop:
        this.reply(STATUS.ok, '');
        return CMD.noop * 2;
      case OP.quit:
        this.reply(STATUS.ok, '');
        this.finish();
        return CMD.quit * 2;
      case OP.quitq:
        this.finish();
        return CMD.quit * 2;
      case OP.saslList:
      case OP.saslAuth:
      case OP.saslStep:
        if (this.ctx.auth === null) break;
        return CMD.sasl * 2 + (this.sasl(key, value) ? 0 : 1);
      case OP.get:
      case OP.getq:
      case OP.getk:
      case OP.getkq:
        if (this.refuseUnauthenticated()) return CMD.get * 2 + 1;
        return CMD.get * 2 + (this.get(key) ? 0 : 1);
      case OP.stat:
        if (this.refuseUnauthenticated()) return CMD.stats * 2 + 1;
        for (const [k, v] of this.ctx.statLines()) this.reply(STATUS.ok, v, Buffer.from(k));
        this.reply(STATUS.ok, '');
        return CMD.stats * 2;
    }
    this.reply(STATUS.unknown, 'Unknown command');
    return CMD.unknown * 2 + 1;
  }

  private get(key: Buffer): boolean {
    if (key.length === 0 || key.length > MAX_KEY_BYTES) {
      this.reply(STATUS.invalid, `a key is 1 to ${MAX_KEY_BYTES} bytes; got ${key.length}`);
      return false;
    }
    const counters = this.ctx.counters;
    counters.cmdGet++;
    let id: string;
    try {
      id = this.ctx.ids.nextString();
    } catch (err) {
      counters.getMisses++;
      this.reply(STATUS.temporaryFailure, refusalText(err));
      return false;
    }
    counters.getHits++;
    this.reply(STATUS.ok, id, this.opcode === OP.getk || this.opcode === OP.getkq ? key : NONE, FLAGS);
    return true;
  }

  private sasl(key: Buffer, value: Buffer): boolean {
    if (this.opcode === OP.saslList) {
      this.reply(STATUS.ok, 'PLAIN');
      return true;
    }
    if (this.opcode === OP.saslStep || key.toString('latin1') !== 'PLAIN') {
      this.reply(STATUS.authError, 'Auth failure: only the PLAIN mechanism is offered');
      return false;
    }
    // PLAIN: authzid \0 authcid \0 password; the user names are not checked, the password is the token.
    const first = value.indexOf(0);
    const second = first < 0 ? -1 : value.indexOf(0, first + 1);
    const ok = second >= 0 && this.ctx.auth !== null && this.ctx.auth(value.subarray(second + 1));
    this.authenticated = ok;
    this.reply(ok ? STATUS.ok : STATUS.authError, ok ? 'Authenticated' : 'Auth failure: the password is not the token');
    return ok;
  }

  private refuseUnauthenticated(): boolean {
    if (this.ctx.auth === null || this.authenticated) return false;
    this.reply(
      STATUS.authError,
      'FLURRY_E_UNAUTHORIZED authenticate first: SASL PLAIN with any user name and the token as the password',
    );
    return true;
  }

  /** Queues the answer to the current request. */
  private reply(status: number, value: string, key: Buffer = NONE, extras: Buffer = NONE): void {
    const valueLen = Buffer.byteLength(value, 'latin1');
    const body = extras.length + key.length + valueLen;
    const at = this.reserve(HEADER + body);
    const b = this.out;
    b[at] = RESPONSE_MAGIC;
    b[at + 1] = this.opcode;
    b.writeUInt16BE(key.length, at + 2);
    b[at + 4] = extras.length;
    b[at + 5] = 0;
    b.writeUInt16BE(status, at + 6);
    b.writeUInt32BE(body, at + 8);
    b.writeUInt32BE(this.opaque, at + 12);
    b.fill(0, at + 16, at + 24); // CAS
    extras.copy(b, at + HEADER);
    key.copy(b, at + HEADER + extras.length);
    putLatin1(b, at + HEADER + extras.length + key.length, value);
  }
}
