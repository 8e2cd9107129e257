/** {@link UuidGenerator}: RFC 9562 UUIDv7 with Snowflake's guarantees, in one thread. */
import { asciiBuffer, asciiText } from '#platform';
import { systemClock, type Clock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions } from '../known-options.js';
import type { NodeLease } from '../lease.js';
import { claimNode, type NodeClaim } from '#claims';
import { badOption, resolvePolicy, type GeneratorStats } from '../generator/options.js';
import { STUCK_ROUNDS, TickPlanner, type PlannerLayout } from '../generator/tick-planner.js';
import { UuidFormat, tickWords } from './format.js';
import { HEX2, UUID_FORMS, base32Of, formOf, type UuidForm, type UuidTextForm } from './forms.js';
import { UUID_GENERATOR_OPTION_NAMES, type UuidGeneratorOptions } from './options.js';
import { POOL_WORDS, TEXT_CHUNK, cursor, pool, refill, writeBytes, writeCanonical } from './words.js';

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** The largest count one `batch`/`fill` call accepts. */
const MAX_BATCH = 10_000_000;
/** 48-bit `unix_ts_ms`: the last millisecond a UUIDv7 can hold (year 10889). */
const MAX_UNIX_MS = 2 ** 48 - 1;

/**
 * Issues strictly increasing UUIDv7 for one node ID, in one thread; unique across every
 * generator of the cluster by construction (see docs/uuids.md).
 *
 * Each UUID holds the Unix millisecond, the version 7, a sequence counting the UUIDs of
 * that millisecond (RFC 9562 §6.2 method 1: a fixed-length dedicated counter, 12 bits in
 * `rand_a` and `sequenceBits − 12` more at the top of `rand_b`), the variant `10`, the
 * node ID (§6.4) and random fill. `(millisecond, sequence)` never repeats and only grows
 * within a generator, and no two live generators share a node ID, so no two UUIDs are
 * equal. The clock and lease policies are {@link Generator}'s, run by the same planner:
 * a used-up sequence waits for the next millisecond (or borrows, `onExhausted: 'borrow'`),
 * a wall clock stepped back is tolerated, waited out or refused, a lease's fencing
 * deadlines are checked before each UUID (`FLURRY_E_LEASE_EXPIRED`), nothing at or below
 * its `notBeforeMs` is issued and a re-acquired lease is followed to its new node. One live
 * generator per node ID in a process (whatever its widths).
 *
 * @example
 * ```ts
 * const gen = new UuidGenerator({ node: 3, clock: new ManualClock(Date.UTC(2025, 0, 1)) });
 * const ids = gen.batch(1000);          // canonical strings, strictly increasing
 * const raw = gen.batch(10, 'bytes');   // Uint8Array(16) each
 * gen.close();
 * ```
 */
export class UuidGenerator {
  readonly format: UuidFormat;

  private lastTick: number;
  private seq: number;
  private highWall = Number.NEGATIVE_INFINITY;
  private highWallMs = Number.NEGATIVE_INFINITY;
  private issued = 0;
  private started = false;
  private closed = false;
  private finalTick = Number.NEGATIVE_INFINITY;

  // The words of the last UUID, and what is cached per millisecond.
  private w0 = 0;
  private w1 = 0;
  private w2 = 0;
  private w3 = 0;
  private w1Base = 0;
  private prefixTick = -1;
  private prefix = '';
  private hiKey0 = -1;
  private hiKey1 = -1;
  private hiBig = 0n;

  private readonly clock: Clock;
  private readonly lease: NodeLease | undefined;
  private readonly planner: TickPlanner;
  private readonly maxSeq: number;
  private readonly extBits: number;
  private readonly extSize: number;
  private readonly extMul: number;
  private nodeNow: number;
  private nodeHi: number;
  private nodeLo: number;
  private readonly randHiMask: number;
  private readonly randLoMask: number;
  private claim: NodeClaim;
  private readonly scratch = new BigUint64Array(1);
  private readonly scratch32 = new Uint32Array(this.scratch.buffer);

  constructor(opts: UuidGeneratorOptions) {
    if (opts === null || typeof opts !== 'object') throw badOption('options', opts, 'an object such as { node }');
    assertKnownOptions(opts, UUID_GENERATOR_OPTION_NAMES, 'UuidGenerator options');
    const format = UuidFormat.from(opts);
    const lease = opts.lease;
    this.clock = opts.clock ?? systemClock;
    const plan: PlannerLayout = {
      name: 'uuidv7',
      epochMs: 0,
      unitMs: 1,
      maxSequence: format.maxSequence,
      maxTick: MAX_UNIX_MS,
      sequenceBits: format.sequenceBits,
      timestampBits: 48,
      expiresAt: new Date(MAX_UNIX_MS + 1),
    };
    const policy = resolvePolicy({ ...opts, node: undefined });
    this.planner = new TickPlanner(plan, policy, this.clock, lease, opts.onEvent, (c) => this.follow(c));
    const given = nodeOf(opts.node);
    const leased = this.planner.lease ? nodeOf(this.planner.lease.node) : undefined;
    if (given !== undefined && leased !== undefined && given !== leased) {
      throw badOption('node', given, `the lease's node ${leased} or no node (a lease grants exactly one node ID)`);
    }
    const node = given ?? leased;
    if (node === undefined) {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `A UUID generator needs its node ID: pass node (0 to ${format.maxNode} with nodeBits = ${format.nodeBits}) or a registry lease.`,
        {},
      );
    }
    [this.nodeHi, this.nodeLo] = format.nodeWords(node);
    this.format = format;
    this.nodeNow = node;
    this.lease = lease;
    this.maxSeq = format.maxSequence;
    this.extBits = format.extBits;
    this.extSize = format.extSize;
    this.extMul = format.extMul;
    const r = format.randomBits;
    this.randLoMask = r >= 32 ? 0xffffffff : 2 ** r - 1;
    this.randHiMask = r > 32 ? 2 ** (r - 32) - 1 : 0;
    this.claim = this.claimFor(node);
    this.lastTick = Math.max(-1, this.planner.floorTick - 1, this.claim.previousTick);
    this.seq = this.maxSeq;
    if (lease) {
      try {
        lease.attach(() => this.lastIssuedUnixMs);
      } catch (e) {
        this.claim.release(this.claim.previousTick);
        throw e;
      }
    }
  }

  /** The node ID: with a registry lease, its current claim's (which the next UUID takes). */
  get node(): number {
    const claim = this.planner.claimNow();
    return claim === undefined || claim === this.planner.lease ? this.nodeNow : nodeOf(claim.node)!;
  }

  /**
   * Unix ms of the highest millisecond issued (borrowed ones included): the high-water mark
   * a registry records. Before the first UUID: the lease's `notBeforeMs` (or 0 without one).
   *
   * @example `registry.report(gen.lastIssuedUnixMs)`
   */
  get lastIssuedUnixMs(): number {
    const tick = this.closed ? this.finalTick : this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    if (!Number.isFinite(tick)) return this.planner.lease?.notBeforeMs ?? 0;
    return tick;
  }

  /**
   * Counters: UUIDs issued, waits for the next millisecond, clock steps back seen, borrowed milliseconds.
   *
   * @example `gen.stats.issued`
   */
  get stats(): GeneratorStats {
    const p = this.planner;
    return {
      issued: this.issued,
      exhaustedWaits: p.exhaustedWaits,
      clockBackwards: p.clockBackwards,
      borrowedTicks: p.borrowedTicks,
    };
  }

  /**
   * The next UUID as its canonical lowercase string.
   *
   * @example `await db.query('INSERT INTO t (id) VALUES ($1)', [gen.next()]);`
   */
  next(): string {
    this.advance();
    this.compose();
    return this.canonical();
  }

  /**
   * The next UUID as its canonical string (the same as {@link next}).
   *
   * @example `res.json({ id: gen.nextString() })`
   */
  nextString(): string {
    return this.next();
  }

  /**
   * The next UUID as 16 bytes (network order), written into `out` at byte `at` when given.
   *
   * @example `const bytes = gen.nextBytes();`
   */
  nextBytes(out?: Uint8Array, at = 0): Uint8Array {
    this.advance();
    this.compose();
    return this.bytes(out ?? new Uint8Array(16), at);
  }

  /**
   * The next UUID as a 128-bit `bigint`.
   *
   * @example `const n = gen.nextBigInt(); // 0x0193…n`
   */
  nextBigInt(): bigint {
    this.advance();
    this.compose();
    return this.bigint();
  }

  /**
   * The next UUID in `form` (see {@link UuidForm}).
   *
   * @example `gen.nextAs('base32') // '01JF…' (26 characters, a valid ULID)`
   */
  nextAs(form: 'bytes'): Uint8Array;
  nextAs(form: 'bigint'): bigint;
  nextAs(form: UuidTextForm): string;
  nextAs(form: UuidForm): string | Uint8Array | bigint;
  nextAs(form: UuidForm): string | Uint8Array | bigint {
    if (form === 'canonical') return this.next();
    if (form === 'bytes') return this.nextBytes();
    if (form === 'bigint') return this.nextBigInt();
    if (!(UUID_FORMS as readonly string[]).includes(form)) formOf([], form); // throws FLURRY_E_CODEC_UNKNOWN before issuing
    this.advance();
    this.compose();
    if (form === 'base32') return base32Of([this.w0, this.w1, this.w2, this.w3]);
    return formOf([this.w0, this.w1, this.w2, this.w3], form);
  }

  /**
   * `count` UUIDs in increasing order, in `form` (default: canonical strings).
   *
   * @example
   * ```ts
   * gen.batch(100);            // string[]
   * gen.batch(100, 'bigint');  // bigint[]
   * ```
   */
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

  /**
   * Writes `count` increasing UUIDs as 16 bytes each into `target`, from UUID index
   * `offset` (byte `16 × offset`; default: to the end), and returns `count`: the fastest
   * form for bulk loads (one buffer, no per-UUID object).
   *
   * @example
   * ```ts
   * const buf = new Uint8Array(16 * 4096);
   * gen.fill(buf); // 4096 UUIDs
   * ```
   */
  fill(target: Uint8Array, offset = 0, count: number = Math.floor(target.length / 16) - offset): number {
    if (!(target instanceof Uint8Array))
      throw badOption('target', Object.prototype.toString.call(target), 'a Uint8Array');
    const room = Math.floor(target.length / 16);
    if (!Number.isInteger(offset) || offset < 0 || offset > room)
      throw badOption('offset', offset, `a whole number from 0 to ${room} (UUIDs, 16 bytes each)`);
    if (!Number.isInteger(count) || count < 0 || offset + count > room)
      throw badOption('count', count, `a whole number from 0 to ${room - offset} (the room after offset ${offset})`);
    if (count === 0) return 0;
    if (this.lease !== undefined) this.planner.checkDeadline(this.clock.now());
    this.produce(count, (k) => this.bytes(target, (offset + k) * 16));
    return count;
  }

  /**
   * Stops issuing and frees the node ID for another generator in this process (which then
   * starts after this one's last millisecond). Idempotent; later calls throw
   * `FLURRY_E_GENERATOR_CLOSED`.
   *
   * @example `gen.close();`
   */
  close(): void {
    if (this.closed) return;
    this.finalTick = this.started ? this.lastTick : Number.NEGATIVE_INFINITY;
    this.closed = true;
    this.lastTick = Number.POSITIVE_INFINITY;
    this.seq = this.maxSeq;
    this.claim.release(this.finalTick);
  }

  /**
   * Issues `count` UUIDs, calling `emit(k)` with the words of the k-th composed. Reads the
   * clock once per run of sequence numbers (as `Generator.fill`): a batch takes the rest
   * of the current millisecond's sequence at once, so it costs one clock read, not one per
   * UUID. `issued` counts every UUID composed, so a throw partway leaves it exact.
   */
  private produce(count: number, emit: (k: number) => void): void {
    let k = 0;
    while (k < count) {
      this.advance();
      const s0 = this.seq;
      const end = Math.min(this.maxSeq, s0 + (count - k - 1));
      for (let s = s0; s <= end; s++) {
        this.seq = s;
        this.compose();
        emit(k++);
      }
      this.issued += end - s0;
    }
  }

  /** This process's claim on `node`, whatever the format (UUIDs of two formats would differ only by chance). */
  private claimFor(node: number): NodeClaim {
    const f = this.format;
    const what = `UUIDv7 node ${node} (nodeBits ${f.nodeBits}, sequenceBits ${f.sequenceBits})`;
    return claimNode(`uuidv7-node-${node}`, what, () => this.lastTick);
  }

  /** Takes a new claim of the lease, as `Generator` does: its node, and a new millisecond above the last. */
  private follow(claim: NodeLease): number | undefined {
    if (this.closed) return undefined;
    const floorMs = this.lastIssuedUnixMs;
    const node = nodeOf(claim.node)!;
    if (node !== this.nodeNow) {
      const [hi, lo] = this.format.nodeWords(node);
      const next = this.claimFor(node);
      this.claim.release(this.started ? this.lastTick : Number.NEGATIVE_INFINITY);
      this.claim = next;
      this.nodeNow = node;
      this.nodeHi = hi;
      this.nodeLo = lo;
      this.lastTick = Math.max(this.lastTick, next.previousTick);
    }
    this.seq = this.maxSeq;
    return floorMs;
  }

  /** Reserves the next (millisecond, sequence): the common case inline, the rest in {@link slow}. */
  private advance(): void {
    const now = this.clock.now();
    if (this.lease !== undefined) this.planner.checkDeadline(now);
    const w = Math.floor(now);
    if (w <= this.lastTick && this.seq < this.maxSeq && w >= this.highWall) this.seq++;
    else if (w > this.lastTick) this.fresh(w, now);
    else this.slow(now);
    this.issued++;
  }

  /** The wall clock moved to a new millisecond `w` beyond the last one. */
  private fresh(w: number, now: number): void {
    if (w < this.highWall || w > MAX_UNIX_MS || (this.lease !== undefined && w < this.planner.refreshFloor())) {
      this.slow(now);
      return;
    }
    this.highWall = w;
    this.highWallMs = now;
    this.setTick(w, this.planner.startSeq());
  }

  private setTick(tick: number, seq: number): void {
    this.lastTick = tick;
    this.seq = seq;
    this.started = true;
    const [w0, w1] = tickWords(tick);
    this.w0 = w0;
    this.w1Base = w1;
  }

  /** Everything but the common case: clock steps, exhaustion, floors, expiry, closed (as `Generator`). */
  private slow(now: number): void {
    if (this.closed) {
      throw new FlurryError(
        ErrorCode.GENERATOR_CLOSED,
        'This UUID generator was closed; create a new one (it will continue after the last UUID issued).',
        {},
      );
    }
    const planner = this.planner;
    const clock = this.clock;
    let waitStart = -1;
    let stuck = 0;
    for (;;) {
      if (this.lease !== undefined) {
        planner.checkDeadline(now);
        planner.refreshFloor();
      }
      const w = Math.floor(now);
      const elapsed = waitStart < 0 ? 0 : clock.monotonic() - waitStart;
      const d = planner.decide(now, w, this.lastTick, this.seq, this.highWall, this.highWallMs, elapsed);
      if (w >= this.highWall) {
        this.highWall = w;
        if (now > this.highWallMs) this.highWallMs = now;
      }
      if (!d.wait) {
        if (d.tick !== this.lastTick) this.setTick(d.tick, d.seq);
        else this.seq = d.seq;
        return;
      }
      if (waitStart < 0) waitStart = clock.monotonic();
      planner.wait(d, this.lastTick + 1);
      const before = now;
      now = clock.now();
      stuck = now === before ? stuck + 1 : 0;
      if (stuck >= STUCK_ROUNDS) throw planner.stuck(d, now, this.lastTick);
    }
  }

  /** The words of the UUID of (lastTick, seq) with fresh random fill. */
  private compose(): void {
    const seq = this.seq;
    const hi = this.extBits === 0 ? seq : Math.floor(seq / this.extSize);
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
    if (this.prefixTick !== this.lastTick) {
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
      this.prefixTick = this.lastTick;
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

  /**
   * `count` canonical strings into `out`: the characters of up to {@link TEXT_CHUNK} UUIDs
   * are written into one buffer and read as one string, each UUID a slice of it — one flat
   * string per chunk instead of a tree of concatenations per UUID, which a batch would keep.
   */
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

function nodeOf(node: number | Readonly<Record<string, number>> | undefined): number | undefined {
  if (node === undefined || typeof node === 'number') return node;
  if (node !== null && typeof node === 'object') {
    const keys = Object.keys(node);
    if (keys.length === 1 && keys[0] === 'node') return node.node;
  }
  throw badOption('node', JSON.stringify(node), 'a whole number, or { node: n } as a UUID lease grants it');
}

function checkCount(count: number): void {
  if (!Number.isInteger(count) || count < 0 || count > MAX_BATCH)
    throw badOption('count', count, `a whole number from 0 to ${MAX_BATCH}`);
}
