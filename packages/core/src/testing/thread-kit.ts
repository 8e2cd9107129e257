/**
 * The thread proofs of {@link SharedGenerator} and `SharedUuidGenerator`: real worker
 * threads attached to one shared state issue with next(), batch() and fill() after a
 * common start signal, optionally on a wall clock shared by every thread (a Float64Array in
 * a SharedArrayBuffer) that is frozen or steps back; the checks read typed arrays: each
 * thread's IDs strictly increase, and the union has no duplicate. Test support only; not
 * exported by the package.
 */
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../clock.js';
import type { BackwardsPolicy, ExhaustedPolicy } from '../generator/options.js';

const INDEX_URL = new URL('../index.js', import.meta.url).href;
const START = Date.UTC(2025, 0, 1);
const MODES = ['next', 'batch', 'mixed'] as const;

/**
 * What the proofs run: a shared generator class of the core (`make` builds one), and for
 * UUIDs (16 bytes each) the format's `sequenceBits`, which the duplicate check reads.
 */
export interface Subject {
  cls: 'SharedGenerator' | 'SharedUuidGenerator';
  make(extra: {
    clock?: Clock;
    onExhausted?: ExhaustedPolicy;
    onClockBackwards?: BackwardsPolicy;
    maxBorrowMs?: number;
  }): {
    state: unknown;
    close(): void;
  };
  uuidSequenceBits?: number;
}

/**
 * Worker body (CommonJS eval). Jobs:
 * - 'issue': attach to `state` (with the shared wall clock `wall` when given), wait for the
 *   start signal, then issue into its slot of `ids` with `mode` until `count` IDs or
 *   `untilMs` of real time; refusals are counted by code. Posts how many IDs it wrote.
 *   UUIDs go in as 16 bytes: next() strings (parsed) and nextBytes() alternate by round.
 * - 'drive': says it is ready, then moves the shared wall clock: +1 ms every 100 µs of real
 *   time and, every `backEvery` steps, back by `backMs` until a thread has read it, until the
 *   stop cell is set.
 */
const WORKER = `
const { parentPort, workerData: d } = require('node:worker_threads');
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const wallClock = (sab) => {
  const cell = new Float64Array(sab, 0, 1);
  const reads = new Int32Array(sab, 8, 1);
  const now = () => (Atomics.add(reads, 0, 1), cell[0]);
  return { now, monotonic: () => performance.now(), sleep: (ms) => { if (ms > 0) sleep(ms); } };
};
if (d.job === 'drive') {
  const cell = new Float64Array(d.wall, 0, 1);
  const reads = new Int32Array(d.wall, 8, 1);
  const stop = new Int32Array(d.stop);
  parentPort.postMessage({ ready: true });
  for (let step = 1; Atomics.load(stop, 0) === 0; step++) {
    const back = step % d.backEvery === 0;
    cell[0] += back ? -d.backMs : 1;
    // A step back stays until an issuing thread has read the clock (up to 20 ms), so the
    // threads see it however the cores are shared; other steps last 100 µs.
    const t = performance.now();
    const seen = Atomics.load(reads, 0);
    while (performance.now() - t < 0.1 || (back && Atomics.load(reads, 0) === seen && performance.now() - t < 20)) {}
  }
  parentPort.postMessage({ done: true });
} else {
  import(d.url).then((core) => {
    const gen = core[d.cls].fromState(d.state, d.wall ? { clock: wallClock(d.wall) } : {});
    const uuid = d.cls === 'SharedUuidGenerator';
    const ids = uuid ? new Uint8Array(d.ids, d.from * 16, d.count * 16) : new BigUint64Array(d.ids, d.from * 8, d.count);
    const refusals = {};
    const until = d.untilMs ? performance.now() + d.untilMs : Infinity;
    parentPort.postMessage({ ready: true });
    Atomics.wait(new Int32Array(d.go), 0, 0);
    let at = 0;
    for (let round = d.index; at < d.count && performance.now() < until; round++) {
      const room = d.count - at;
      try {
        const m = d.mode === 'mixed' ? ['next', 'batch', 'fill'][round % 3] : d.mode;
        if (m === 'next') {
          const n = Math.min(room, 64);
          for (let k = 0; k < n; k++) {
            // Each ID is stored before at++: a throwing call must not count a slot.
            if (!uuid) ids[at] = gen.next();
            else if (round % 2) ids.set(Buffer.from(gen.next().replace(/-/g, ''), 'hex'), at * 16);
            else gen.nextBytes(ids, at * 16);
            at++;
          }
        } else if (m === 'batch') {
          const n = Math.min(room, 1 + (round * 37) % 100);
          if (uuid) for (const b of gen.batch(n, 'bytes')) ids.set(b, 16 * at++);
          else {
            const a = gen.batch(n);
            ids.set(a, at);
            at += a.length;
          }
        } else {
          at += gen.fill(ids, at, Math.min(room, 1 + (round * 53) % 500));
        }
      } catch (e) {
        const c = (e && e.code) || 'UNCODED: ' + String(e && e.message);
        refusals[c] = (refusals[c] || 0) + 1;
      }
    }
    const stats = gen.stats;
    gen.close();
    parentPort.postMessage({ written: at, refusals, stats });
  }, (e) => parentPort.postMessage({ error: String(e && e.stack) }));
}
`;

interface Done {
  written: number;
  refusals: Record<string, number>;
  stats: { exhaustedWaits: number; clockBackwards: number; borrowedTicks: number };
  error?: string;
}

/** Runs `threads` issuing workers (and the clock driver when `drive` is set); resolves with each thread's report. */
async function runThreads(opts: {
  cls: Subject['cls'];
  state: unknown;
  threads: number;
  perThread: number;
  ids: SharedArrayBuffer;
  mode: (i: number) => string;
  wall?: SharedArrayBuffer;
  untilMs?: number;
  drive?: { backEvery: number; backMs: number };
}): Promise<Done[]> {
  const go = new SharedArrayBuffer(4);
  const stop = new SharedArrayBuffer(4);
  const workers: Worker[] = [];
  try {
    const ready: Promise<unknown>[] = [];
    const done: Promise<Done>[] = [];
    for (let i = 0; i < opts.threads; i++) {
      const w = new Worker(WORKER, {
        eval: true,
        workerData: {
          job: 'issue',
          url: INDEX_URL,
          cls: opts.cls,
          state: opts.state,
          ids: opts.ids,
          from: i * opts.perThread,
          count: opts.perThread,
          mode: opts.mode(i),
          index: i,
          go,
          wall: opts.wall,
          untilMs: opts.untilMs,
        },
      });
      workers.push(w);
      let onReady!: () => void;
      ready.push(new Promise<void>((r) => (onReady = r)));
      done.push(
        new Promise<Done>((resolve, reject) => {
          w.on('message', (m: Done & { ready?: boolean }) => (m.ready ? onReady() : resolve(m)));
          w.once('error', reject);
          w.once('exit', (c) => reject(new Error(`worker ${i} exited with ${c} before reporting`)));
        }),
      );
    }
    if (opts.drive) {
      // The driver runs before the start signal: issuing threads refused on a still clock
      // would otherwise keep the cores from booting it, and could finish before its first step.
      const driver = new Worker(WORKER, {
        eval: true,
        workerData: { job: 'drive', wall: opts.wall, stop, ...opts.drive },
      });
      workers.push(driver);
      ready.push(new Promise((r) => driver.once('message', r)));
    }
    await Promise.all(ready);
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    const results = await Promise.all(done);
    Atomics.store(new Int32Array(stop), 0, 1);
    for (const r of results) assert.equal(r.error, undefined, r.error);
    return results;
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * Each ID as a 64-bit key that is equal for equal IDs: the ID itself, or for a UUID of a
 * `sequenceBits` format (its node is the same for all) `(ms − first ms) × 2^sequenceBits +
 * sequence`, the pair that makes it unique.
 */
function keys(ids: SharedArrayBuffer, perThread: number, written: number[], sequenceBits?: number): BigUint64Array {
  const total = written.reduce((a, b) => a + b, 0);
  const all = new BigUint64Array(total);
  let at = 0;
  const slots = written.flatMap((n, t) => [t * perThread, t * perThread + n]);
  if (sequenceBits === undefined) {
    const view = new BigUint64Array(ids);
    for (let t = 0; t < slots.length; t += 2) {
      all.set(view.subarray(slots[t], slots[t + 1]), at);
      at += slots[t + 1] - slots[t];
    }
    return all;
  }
  const dv = new DataView(ids);
  const ms = (i: number) => dv.getUint32(16 * i) * 65536 + (dv.getUint16(16 * i + 4) >>> 0);
  let first = Infinity;
  for (let t = 0; t < slots.length; t += 2)
    for (let i = slots[t]; i < slots[t + 1]; i++) first = Math.min(first, ms(i));
  const [extSize, extMul] = [2 ** (sequenceBits - 12), 2 ** (42 - sequenceBits)];
  const out = new DataView(all.buffer);
  for (let t = 0; t < slots.length; t += 2) {
    for (let i = slots[t]; i < slots[t + 1]; i++, at++) {
      const rel = ms(i) - first;
      const seq =
        (dv.getUint16(16 * i + 6) & 0xfff) * extSize + Math.floor((dv.getUint32(16 * i + 8) & 0x3fffffff) / extMul);
      // rel × 2^sequenceBits + seq as two 32-bit words.
      const [hi, lo] =
        sequenceBits <= 32
          ? [Math.floor(rel / 2 ** (32 - sequenceBits)), (rel % 2 ** (32 - sequenceBits)) * 2 ** sequenceBits + seq]
          : [rel * 2 ** (sequenceBits - 32) + Math.floor(seq / 2 ** 32), seq % 2 ** 32];
      assert.ok(hi < 2 ** 32, `UUID ${i}: ${rel} ms after the first is too far for a 64-bit key`);
      out.setUint32(8 * at, hi);
      out.setUint32(8 * at + 4, lo);
    }
  }
  return all;
}

/**
 * Checks the IDs (bigints, or 16-byte UUIDs of a `uuidSequenceBits` format): each thread's
 * `written` IDs (from its slot of `perThread`) strictly increase, and the union has no
 * duplicate. Returns [decreases, duplicates, total]. (benchmarks/threads.mjs checks with it too.)
 */
export function check(
  ids: SharedArrayBuffer,
  perThread: number,
  written: number[],
  s: { uuidSequenceBits?: number },
): [number, number, number] {
  const width = s.uuidSequenceBits === undefined ? 8 : 16;
  const bytes = new Uint8Array(ids);
  // Byte indexes from the most significant: UUIDs are big-endian, bigints in the host's order.
  const le = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const order = Array.from({ length: width }, (_, j) => (width === 8 && le ? 7 - j : j));
  const greater = (a: number, b: number) => {
    for (const k of order) {
      const x = bytes[a * width + k];
      const y = bytes[b * width + k];
      if (x !== y) return x > y;
    }
    return false;
  };
  let decreases = 0;
  for (let t = 0; t < written.length; t++) {
    const from = t * perThread;
    for (let i = from + 1; i < from + written[t]; i++) if (!greater(i, i - 1)) decreases++;
  }
  // Gather every written ID's key, sort natively, and compare neighbours.
  const all = keys(ids, perThread, written, s.uuidSequenceBits).sort();
  const w = new Uint32Array(all.buffer);
  let duplicates = 0;
  for (let i = 1; i < all.length; i++) if (w[2 * i] === w[2 * i - 2] && w[2 * i + 1] === w[2 * i - 1]) duplicates++;
  return [decreases, duplicates, all.length];
}

/**
 * 2, 4 and 16 threads × `perThread` IDs each, threads calling next(), batch() and a mix of
 * next(), batch() and fill(): no refusal, 0 duplicates, each thread's IDs increasing.
 * `last(ids)` checks the first thread's last ID (decodes to the node).
 */
export async function proveScale(s: Subject, perThread: number, last: (ids: SharedArrayBuffer) => void): Promise<void> {
  const width = s.uuidSequenceBits === undefined ? 8 : 16;
  for (const threads of [2, 4, 16]) {
    const shared = s.make({});
    try {
      const ids = new SharedArrayBuffer(threads * perThread * width);
      const results = await runThreads({
        cls: s.cls,
        state: shared.state,
        threads,
        perThread,
        ids,
        mode: (i) => MODES[i % 3],
      });
      for (const r of results) assert.deepEqual(r.refusals, {}, `${threads} threads: refusals`);
      const [decreases, duplicates, total] = check(
        ids,
        perThread,
        results.map((r) => r.written),
        s,
      );
      assert.equal(total, threads * perThread);
      assert.equal(decreases, 0, `${threads} threads: a thread's IDs did not increase`);
      assert.equal(duplicates, 0, `${threads} threads: duplicate IDs`);
      last(ids);
    } finally {
      shared.close();
    }
  }
}

const POLICIES: Array<[ExhaustedPolicy, BackwardsPolicy]> = [
  ['wait', 'tolerate'],
  ['borrow', 'tolerate'],
  ['wait', 'wait'],
  ['borrow', 'throw'],
  ['wait', 'throw'],
];

/**
 * 4 threads on a wall clock shared by all threads that is frozen or steps back, under each
 * exhaustion and backwards policy (`maxBorrowMs` 8): 0 duplicates, 0 decreases per thread,
 * only the refusals the policies promise, and on a frozen clock at most `perTick` IDs per
 * tick (plus the borrowed ones).
 */
export async function proveClock(s: Subject, clockKind: 'frozen' | 'stepped-back', perTick: number): Promise<void> {
  const width = s.uuidSequenceBits === undefined ? 8 : 16;
  for (const [onExhausted, onClockBackwards] of POLICIES) {
    const wall = new SharedArrayBuffer(16); // the Unix ms, and the count of clock reads in the threads
    const cell = new Float64Array(wall, 0, 1);
    cell[0] = START;
    const clock: Clock = { now: () => cell[0], monotonic: () => performance.now(), sleep: () => {} };
    const shared = s.make({ clock, onExhausted, onClockBackwards, maxBorrowMs: 8 });
    const perThread = 150_000;
    try {
      const ids = new SharedArrayBuffer(4 * perThread * width);
      const results = await runThreads({
        cls: s.cls,
        state: shared.state,
        threads: 4,
        perThread,
        ids,
        wall,
        untilMs: 600,
        mode: (i) => MODES[i % 3],
        drive: clockKind === 'stepped-back' ? { backEvery: 7, backMs: 3 } : undefined,
      });
      const what = `${clockKind}, onExhausted ${onExhausted}, onClockBackwards ${onClockBackwards}`;
      const [decreases, duplicates, total] = check(
        ids,
        perThread,
        results.map((r) => r.written),
        s,
      );
      assert.ok(total > 0, `${what}: no ID issued`);
      assert.equal(decreases, 0, `${what}: a thread's IDs did not increase`);
      assert.equal(duplicates, 0, `${what}: duplicate IDs`);
      // Refusals are the coded ones the policies promise, never anything else.
      for (const r of results)
        for (const c of Object.keys(r.refusals))
          assert.ok(/^FLURRY_E_(SEQUENCE_EXHAUSTED|CLOCK_BACKWARDS)$/.test(c), `${what}: unexpected refusal ${c}`);
      const sum = (k: keyof Done['stats']) => results.reduce((a, r) => a + r.stats[k], 0);
      const refused = (c: string) => results.reduce((a, r) => a + (r.refusals[c] ?? 0), 0);
      if (clockKind === 'stepped-back') {
        assert.ok(sum('clockBackwards') > 0, `${what}: no thread saw the clock step back`);
        if (onClockBackwards === 'throw') assert.ok(refused('FLURRY_E_CLOCK_BACKWARDS') > 0, `${what}: never refused`);
      } else {
        assert.ok(refused('FLURRY_E_SEQUENCE_EXHAUSTED') > 0, `${what}: a frozen clock never ran out`);
        if (onExhausted === 'borrow') assert.equal(sum('borrowedTicks') > 0, true, `${what}: never borrowed`);
        else assert.equal(sum('borrowedTicks'), 0, `${what}: borrowed under the wait policy`);
        // A frozen clock holds one tick (plus what borrowing allows): the cap still holds.
        const ticks = onExhausted === 'borrow' ? 1 + 8 : 1;
        assert.ok(total <= ticks * perTick, `${what}: ${total} IDs in ${ticks} tick(s)`);
      }
    } finally {
      shared.close();
    }
  }
}
