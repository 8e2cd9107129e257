/** {@link UuidIssuer}: the UUID words and forms both UUID generators compose over their tick source. */
import { asciiBuffer, asciiText } from '#platform';
import { LITTLE_ENDIAN, badOption, checkCount, checkFill, type GeneratorStats } from '../generator/options.js';
import type { PlannerLayout } from '../generator/tick-planner.js';
import type { TickRuns } from '../generator/tick-ids.js';
import { HEX2, MAX_UNIX_MS, UuidFormat, tickWords, writeCanonical } from './format.js';
import { UUID_FORMS, base32Of, formOf, writeBytes, type UuidForm, type UuidTextForm } from './forms.js';
import { randomFill } from '../random.js';

const TEXT_CHUNK = 1024;

// Random words for this thread's generators, 64 KiB per refill from Web Crypto (in process: a system call per
// UUID cost more than the rest of nextBytes()), or the kernel's device where Web Crypto is missing.
const pool = new Uint32Array(16384);
const POOL_WORDS = pool.length;
const cursor = { at: POOL_WORDS };
function refill(): void {
  const webCrypto = globalThis.crypto;
  if (webCrypto !== undefined && typeof webCrypto.getRandomValues === 'function') webCrypto.getRandomValues(pool);
  else randomFill(new Uint8Array(pool.buffer));
  cursor.at = 0;
}

/** The tick planner's view of UUIDv7 with a `sequenceBits`-bit sequence: ticks are Unix milliseconds. */
export function uuidPlan(sequenceBits: number): PlannerLayout {
  return {
    name: 'uuidv7',
    epochMs: 0,
    unitMs: 1,
    maxSequence: 2 ** sequenceBits - 1,
    maxTick: MAX_UNIX_MS,
    sequenceBits,
    timestampBits: 48,
    expiresAt: new Date(MAX_UNIX_MS + 1),
  };
}

/** The process-wide claim of a UUID node, keyed by the number alone: other formats of one node are refused too. */
export function uuidClaim(format: UuidFormat, node: number): { key: string; describe: string } {
  return {
    key: `uuidv7-node-${node}`,
    describe: `UUIDv7 node ${node} (nodeBits ${format.nodeBits}, sequenceBits ${format.sequenceBits})`,
  };
}

/** The forms API of a UUIDv7 generator over the `(millisecond, sequence)` source its subclass sets. */
export abstract class UuidIssuer {
  readonly format: UuidFormat;
  /** The node ID issued under now. */
  protected nodeNow: number;
  /** Set by the subclass's constructor; it calls {@link setTick} at each new millisecond. */
  declare protected ticks: TickRuns;

  // The words of the last UUID, and what is cached per millisecond.
  private w0 = 0;
  private w1 = 0;
  private w2 = 0;
  private w3 = 0;
  private w1Base = 0;
  private wordsTick = -1;
  private prefixTick = -1;
  private prefix = '';
  private hiKey0 = -1;
  private hiKey1 = -1;
  private hiBig = 0n;

  /** `2^-extBits`: multiplying by it is exact, and faster than dividing by `extSize`. */
  private readonly extInv: number;
  private readonly extSize: number;
  private readonly extMul: number;
  private nodeHi: number;
  private nodeLo: number;
  private readonly randHiMask: number;
  private readonly randLoMask: number;
  private readonly scratch = new BigUint64Array(1);
  private readonly scratch32 = new Uint32Array(this.scratch.buffer);

  /** Validates `node` for `format` (`FLURRY_E_NODE_OUT_OF_RANGE`). */
  protected constructor(format: UuidFormat, node: number) {
    [this.nodeHi, this.nodeLo] = format.nodeWords(node);
    this.format = format;
    this.nodeNow = node;
    this.extInv = 2 ** -format.extBits;
    this.extSize = format.extSize;
    this.extMul = format.extMul;
    const r = format.randomBits;
    this.randLoMask = r >= 32 ? 0xffffffff : 2 ** r - 1;
    this.randHiMask = r > 32 ? 2 ** (r - 32) - 1 : 0;
  }

  /** The node ID. */
  get node(): number {
    return this.nodeNow;
  }

  /** Issues under `node` from the next UUID on (a lease followed to a new claim). */
  protected setNode(node: number): void {
    [this.nodeHi, this.nodeLo] = this.format.nodeWords(node);
    this.nodeNow = node;
  }

  /** Unix ms of the highest millisecond issued (any thread's, borrowed too); before the first: `notBeforeMs` or 0. */
  get lastIssuedUnixMs(): number {
    return this.ticks.lastIssuedUnixMs;
  }

  /** Counters (of this handle, for a shared generator): UUIDs issued, waits, clock steps back seen, borrowed ms. */
  get stats(): GeneratorStats {
    return this.ticks.stats;
  }

  /**
   * Stops issuing and frees the node ID (idempotent; later calls throw `FLURRY_E_GENERATOR_CLOSED`). A shared
   * generator's creating handle stops every handle (up to 2 s for calls in flight); a `fromState` handle detaches.
   */
  close(): void {
    this.ticks.close();
  }

  /** Composes `count` UUIDs, calling `emit(k)` after the k-th; one clock read per run of sequence values. */
  private produce(count: number, emit: (k: number) => void): void {
    const t = this.ticks;
    let k = 0;
    while (k < count) {
      const first = t.advance(count - k);
      const end = t.take(count - k - 1);
      for (let s = first; s <= end; s++) {
        this.compose(s);
        emit(k++);
      }
    }
  }

  /** Makes millisecond `tick` the one {@link compose} writes. */
  protected setTick(tick: number): void {
    const [w0, w1] = tickWords(tick);
    this.w0 = w0;
    this.w1Base = w1;
    this.wordsTick = tick;
  }

  /** The next UUID as its canonical lowercase string. */
  next(): string {
    this.compose(this.ticks.advance(1));
    return this.canonical();
  }

  /** The next UUID as its canonical string (the same as {@link next}). */
  nextString(): string {
    return this.next();
  }

  /** The next UUID as 16 bytes (network order), written into `out` at byte `at` when given. */
  nextBytes(out?: Uint8Array, at = 0): Uint8Array {
    this.compose(this.ticks.advance(1));
    return this.bytes(out ?? new Uint8Array(16), at);
  }

  /** The next UUID as a 128-bit `bigint`. */
  nextBigInt(): bigint {
    this.compose(this.ticks.advance(1));
    return this.bigint();
  }

  /** The next UUID in `form` (see {@link UuidForm}). */
  nextAs(form: 'bytes'): Uint8Array;
  nextAs(form: 'bigint'): bigint;
  nextAs(form: UuidTextForm): string;
  nextAs(form: UuidForm): string | Uint8Array | bigint;
  nextAs(form: UuidForm): string | Uint8Array | bigint {
    if (form === 'canonical') return this.next();
    if (form === 'bytes') return this.nextBytes();
    if (form === 'bigint') return this.nextBigInt();
    if (!(UUID_FORMS as readonly string[]).includes(form)) formOf([], form); // throws FLURRY_E_CODEC_UNKNOWN before issuing
    this.compose(this.ticks.advance(1));
    if (form === 'base32') return base32Of([this.w0, this.w1, this.w2, this.w3]);
    return formOf([this.w0, this.w1, this.w2, this.w3], form);
  }

  /** `count` UUIDs in increasing order, in `form` (default: canonical strings). */
  batch(count: number, form?: UuidTextForm): string[];
  batch(count: number, form: 'bytes'): Uint8Array[];
  batch(count: number, form: 'bigint'): bigint[];
  batch(count: number, form: UuidForm = 'canonical'): (string | Uint8Array | bigint)[] {
    checkCount(count);
    if (!(UUID_FORMS as readonly string[]).includes(form)) formOf([], form); // throws FLURRY_E_CODEC_UNKNOWN
    const out = new Array<string | Uint8Array | bigint>(count);
    if (form === 'canonical') this.canonicalBatch(out, count);
    else if (form === 'bigint') this.produce(count, (k) => (out[k] = this.bigint()));
    else if (form === 'bytes') this.produce(count, (k) => (out[k] = this.bytes(new Uint8Array(16), 0)));
    else this.produce(count, (k) => (out[k] = formOf([this.w0, this.w1, this.w2, this.w3], form)));
    return out;
  }

  /** Writes `count` increasing UUIDs (16 bytes each) into `target` from UUID `offset` (default: to the end). */
  fill(target: Uint8Array, offset = 0, count: number = Math.floor(target.length / 16) - offset): number {
    const room = Math.floor(target.length / 16);
    checkFill(target instanceof Uint8Array, target, 'a Uint8Array', room, offset, count, ' (UUIDs, 16 bytes each)');
    if (count === 0) return 0;
    this.produce(count, (k) => this.bytes(target, (offset + k) * 16));
    return count;
  }

  /** The words of the UUID of sequence `seq` in the millisecond of the last {@link setTick}, with fresh random fill. */
  private compose(seq: number): void {
    const hi = Math.floor(seq * this.extInv);
    const ext = seq - hi * this.extSize;
    if (cursor.at > POOL_WORDS - 2) refill();
    const r0 = pool[cursor.at++];
    const r1 = pool[cursor.at++];
    this.w1 = this.w1Base + hi;
    this.w2 = 0x80000000 + ext * this.extMul + this.nodeHi + (r1 & this.randHiMask);
    this.w3 = (this.nodeLo | (r0 & this.randLoMask)) >>> 0;
  }

  private canonical(): string {
    const h = HEX2;
    if (this.prefixTick !== this.wordsTick) {
      const w0 = this.w0;
      const w1 = this.w1;
      this.prefix =
        h[w0 >>> 24] +
        h[(w0 >>> 16) & 255] +
        h[(w0 >>> 8) & 255] +
        h[w0 & 255] +
        '-' +
        h[w1 >>> 24] +
        h[(w1 >>> 16) & 255] +
        '-';
      this.prefixTick = this.wordsTick;
    }
    const w1 = this.w1;
    const w2 = this.w2;
    const w3 = this.w3;
    return (
      this.prefix +
      h[(w1 >>> 8) & 255] +
      h[w1 & 255] +
      '-' +
      h[w2 >>> 24] +
      h[(w2 >>> 16) & 255] +
      '-' +
      h[(w2 >>> 8) & 255] +
      h[w2 & 255] +
      h[w3 >>> 24] +
      h[(w3 >>> 16) & 255] +
      h[(w3 >>> 8) & 255] +
      h[w3 & 255]
    );
  }

  /** Canonical strings as slices of one flat string per TEXT_CHUNK UUIDs (not a string tree per UUID). */
  private canonicalBatch(out: unknown[], count: number): void {
    const chars = asciiBuffer(36 * Math.min(count, TEXT_CHUNK));
    for (let at = 0; at < count; at += TEXT_CHUNK) {
      const n = Math.min(TEXT_CHUNK, count - at);
      this.produce(n, (k) => writeCanonical(chars, k * 36, this.w0, this.w1, this.w2, this.w3));
      const text = asciiText(chars, 0, 36 * n);
      for (let k = 0; k < n; k++) out[at + k] = text.slice(k * 36, k * 36 + 36);
    }
  }

  private bytes(out: Uint8Array, at: number): Uint8Array {
    return writeBytes(out, at, this.w0, this.w1, this.w2, this.w3);
  }

  private bigint(): bigint {
    if (this.hiKey1 !== this.w1 || this.hiKey0 !== this.w0) {
      this.hiKey0 = this.w0;
      this.hiKey1 = this.w1;
      this.hiBig = (BigInt(this.w0) << 96n) | (BigInt(this.w1) << 64n);
    }
    const s = this.scratch32;
    s[LITTLE_ENDIAN ? 0 : 1] = this.w3;
    s[LITTLE_ENDIAN ? 1 : 0] = this.w2;
    return this.hiBig | this.scratch[0];
  }
}

/** The node number of a `node` option: a number, or `{ node: n }` as a UUID lease grants it. */
export function nodeOf(node: number | Readonly<Record<string, number>> | undefined): number | undefined {
  if (node === undefined || typeof node === 'number') return node;
  if (node !== null && typeof node === 'object' && Object.keys(node).join() === 'node') return node.node;
  throw badOption('node', JSON.stringify(node), 'a whole number, or { node: n } as a UUID lease grants it');
}
