/**
 * One segment of a sequence: the range `[start, start + len)` a store allocated, issued up to `pos` (internal to
 * `@flurry/segments`; {@link Sequence} holds two of them, Leaf's double buffer). Arithmetic stays on plain
 * `number`s while the whole range is below 2^53 (`safe`), which is what makes `tryNext()` cost one increment.
 */
/** @internal The largest number a JS `number` holds exactly (2^53 - 1), as a bigint. */
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** @internal The first end of a segment that is not `safe` any more (2^53). */
export const SAFE_END = MAX_SAFE + 1n;

/**
 * @internal A segment `[start, start + len)`, issued up to `pos`. Number arithmetic while `safe`; `trigger` is
 * the position whose issue starts the fetch of the next segment.
 */
export class Segment {
  readonly start: bigint;
  readonly end: bigint;
  readonly len: number;
  readonly startNum: number;
  readonly safe: boolean;
  readonly trigger: number;
  pos = 0;
  constructor(start: bigint, end: bigint, prefetchAt: number) {
    this.start = start;
    this.end = end;
    this.len = Number(end - start);
    this.safe = end <= SAFE_END;
    this.startNum = this.safe ? Number(start) : 0;
    this.trigger = Math.floor(this.len * prefetchAt);
  }
}

/** @internal The segment of a sequence that holds none (before the first fetch, after close). */
export const EMPTY = new Segment(0n, 0n, 0);

/**
 * @internal What is left unissued of a sequence's two segments at close: `unused` numbers in all, and the range
 * `[firstUnused, lastEnd)` that may be handed back to the store (the tail of the last allocation: when the next
 * segment does not follow the current one, only the next segment is handed back and the current's remainder
 * is wasted).
 */
export function unusedOf(cur: Segment, nxt: Segment | null): { unused: bigint; lastEnd: bigint; firstUnused: bigint } {
  const curFree = cur.start + BigInt(Math.min(cur.pos, cur.len));
  const unused = cur.end - curFree + (nxt ? nxt.end - nxt.start : 0n);
  const lastEnd = nxt ? nxt.end : cur.end;
  const firstUnused = nxt && nxt.start !== cur.end ? nxt.start : curFree;
  return { unused, lastEnd, firstUnused };
}
