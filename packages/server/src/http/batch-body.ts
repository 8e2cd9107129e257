// The body of `GET /v1/ids?count=N` written straight into a Buffer from `fill()`, without a BigInt or
// string per ID (`BigInt#toString` costs more than issuing). Each ID `H·2³² + L` splits exactly in
// doubles: `2³² = 4294·10⁶ + 967296`, so `id = (4294·H + c)·10⁶ + r` with `b = 967296·H + L < 2⁵³`,
// `c = ⌊b / 10⁶⌋`, `r = b mod 10⁶`; the leading digits are reused between neighbours.
import { endianness } from 'node:os';

const OPEN = Buffer.from('{"ids":["', 'latin1');
const SEP = Buffer.from('","', 'latin1');
const CLOSE = Buffer.from('"]}', 'latin1');
const LITTLE_ENDIAN = endianness() === 'LE';
/** ASCII of "00" … "99", two bytes each. */
const PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 48 + (i % 2 === 0 ? Math.floor(i / 2 / 10) : (i >> 1) % 10));

/** How many response buffers a writer keeps for reuse (less allocator fragmentation under batch load). */
const POOL_SIZE = 4;

/** Fills `target[offset … offset+count)` with new IDs (a generator's `fill`). */
export type FillIds = (target: BigUint64Array, offset: number, count: number) => number;

/** Reusable writer of batch bodies for up to `max` IDs. */
export class BatchBodyWriter {
  private readonly ids: BigUint64Array;
  private readonly words: Uint32Array;
  private readonly aDigits = new Uint8Array(20);
  private readonly pool: Buffer[] = [];
  private readonly capacity: number;

  // `chunk`: IDs per `fill` call (the layout's IDs per tick), so under the `wait` policy the digits
  // of one chunk are written in the time the generator would sleep for the next tick.
  constructor(
    readonly max: number,
    private readonly chunk: number = max,
  ) {
    this.ids = new BigUint64Array(max);
    this.words = new Uint32Array(this.ids.buffer);
    this.capacity = OPEN.length + max * 23 + CLOSE.length;
  }

  /** Hands a body of {@link write} back for reuse once nothing references it (after the response's `finish`). */
  recycle(body: Buffer): void {
    if (this.pool.length < POOL_SIZE && body.buffer.byteLength === this.capacity)
      this.pool.push(Buffer.from(body.buffer, 0, this.capacity));
  }

  /** Issues `count` IDs through `fill` and returns the JSON body. */
  write(count: number, fill: FillIds): Buffer {
    const ids = this.ids;
    const buf = this.pool.pop() ?? Buffer.allocUnsafeSlow(this.capacity);
    let p = OPEN.copy(buf, 0);
    if (!LITTLE_ENDIAN) {
      fill(ids, 0, count);
      for (let i = 0; i < count; i++) {
        if (i > 0) p += SEP.copy(buf, p);
        p += buf.write(ids[i].toString(), p, 'latin1');
      }
      p += CLOSE.copy(buf, p);
      return buf.subarray(0, p);
    }
    const w = this.words;
    const digits = this.aDigits;
    let lastA = -1;
    let aLen = 0;
    let filled = 0;
    for (let i = 0; i < count; i++) {
      if (i === filled) filled += fill(ids, filled, Math.min(this.chunk, count - filled));
      if (i > 0) {
        buf[p] = 0x22; // "
        buf[p + 1] = 0x2c; // ,
        buf[p + 2] = 0x22; // "
        p += 3;
      }
      const lo = w[2 * i];
      const hi = w[2 * i + 1];
      const b = hi * 967296 + lo;
      const c = Math.floor(b / 1e6);
      let r = (b - c * 1e6) | 0;
      const a = hi * 4294 + c;
      if (a === 0) {
        // At most 6 digits, no padding.
        let len = r >= 100000 ? 6 : r >= 10000 ? 5 : r >= 1000 ? 4 : r >= 100 ? 3 : r >= 10 ? 2 : 1;
        let q = p + len;
        p = q;
        while (len-- > 0) {
          const x = (r / 10) | 0;
          buf[--q] = 48 + r - x * 10;
          r = x;
        }
        continue;
      }
      if (a !== lastA) {
        // The leading digits (at most 14), kept for the neighbours that share them.
        let x = a;
        aLen = 0;
        do {
          const y = Math.floor(x / 10);
          digits[aLen++] = 48 + (x - y * 10);
          x = y;
        } while (x > 0);
        digits.subarray(0, aLen).reverse();
        lastA = a;
      }
      for (let k = 0; k < aLen; k++) buf[p + k] = digits[k];
      p += aLen;
      // Exactly six digits, zero-padded, two at a time.
      const r2 = (r / 100) | 0;
      const r4 = (r2 / 100) | 0;
      let t = (r - r2 * 100) << 1;
      buf[p + 4] = PAIRS[t];
      buf[p + 5] = PAIRS[t + 1];
      t = (r2 - r4 * 100) << 1;
      buf[p + 2] = PAIRS[t];
      buf[p + 3] = PAIRS[t + 1];
      t = r4 << 1;
      buf[p] = PAIRS[t];
      buf[p + 1] = PAIRS[t + 1];
      p += 6;
    }
    p += CLOSE.copy(buf, p);
    return buf.subarray(0, p);
  }
}
