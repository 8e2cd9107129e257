/**
 * Proof that a SharedGenerator whose threads reserve runs of sequence values keeps its
 * promises at scale: 2, 4 and 16 real worker threads × 1,000,000 IDs each on the twitter
 * layout and on an uncapped one (41-bit time + 22-bit sequence), threads calling next(),
 * batch() and a mix of next(), batch() and fill() in one run; and 4 threads on a wall clock
 * shared by every thread (a Float64Array in a SharedArrayBuffer) that is frozen or steps
 * back, under each exhaustion and backwards policy. Every check reads typed arrays: each
 * thread's IDs strictly increase, and the union, sorted, has no two equal neighbours.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../clock.js';
import { SharedGenerator } from './shared-generator.js';
import type { BackwardsPolicy, ExhaustedPolicy } from './options.js';

const INDEX_URL = new URL('../index.js', import.meta.url).href;
const START = Date.UTC(2025, 0, 1);
const MODES = ['next', 'batch', 'mixed'] as const;
const UNCAPPED = {
  name: 'uncapped-41-22',
  fields: [
    { name: 'timestamp', bits: 41 },
    { name: 'sequence', bits: 22 },
  ],
  epoch: 1288834974657,
};

/**
 * Worker body (CommonJS eval). Jobs:
 * - 'issue': attach to `state` (with the shared wall clock `wall` when given), wait for the
 *   start signal, then issue into ids[from .. from + count) with `mode` until `count` IDs or
 *   `untilMs` of real time; refusals are counted by code. Posts how many IDs it wrote.
 * - 'drive': moves the shared wall clock: +1 ms every 100 µs of real time and, every
 *   `backEvery` steps, back by `backMs`, until the stop cell is set.
 */
const WORKER = `
const { parentPort, workerData: d } = require('node:worker_threads');
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const wallClock = (sab) => {
  const cell = new Float64Array(sab);
  return { now: () => cell[0], monotonic: () => performance.now(), sleep: (ms) => { if (ms > 0) sleep(ms); } };
};
if (d.job === 'drive') {
  const cell = new Float64Array(d.wall);
  const stop = new Int32Array(d.stop);
  for (let step = 1; Atomics.load(stop, 0) === 0; step++) {
    const t = performance.now();
    while (performance.now() - t < 0.1) {}
    cell[0] += step % d.backEvery === 0 ? -d.backMs : 1;
  }
  parentPort.postMessage({ done: true });
} else {
  import(d.url).then((core) => {
    const gen = core.SharedGenerator.fromState(d.state, d.wall ? { clock: wallClock(d.wall) } : {});
    const ids = new BigUint64Array(d.ids, d.from * 8, d.count);
    const refusals = {};
    const until = d.untilMs ? performance.now() + d.untilMs : Infinity;
    parentPort.postMessage({ ready: true });
    Atomics.wait(new Int32Array(d.go), 0, 0);
    let at = 0;
    for (let round = d.index; at < ids.length && performance.now() < until; round++) {
      const room = ids.length - at;
      try {
        const m = d.mode === 'mixed' ? ['next', 'batch', 'fill'][round % 3] : d.mode;
        if (m === 'next') {
          const n = Math.min(room, 64);
          for (let k = 0; k < n; k++) {
            const id = gen.next(); // before at++: a throwing call must not count a slot
            ids[at++] = id;
          }
        } else if (m === 'batch') {
          const a = gen.batch(Math.min(room, 1 + (round * 37) % 100));
          ids.set(a, at);
          at += a.length;
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
  shared: SharedGenerator;
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
          state: opts.shared.state,
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
    await Promise.all(ready);
    let driver: Worker | undefined;
    if (opts.drive) {
      driver = new Worker(WORKER, { eval: true, workerData: { job: 'drive', wall: opts.wall, stop, ...opts.drive } });
      workers.push(driver);
    }
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
 * Checks the IDs: each thread's `written` IDs (from its slot of `perThread`) strictly
 * increase, and the union has no duplicate. Compares 32-bit halves, so no BigInt is made
 * per ID. Returns [decreases, duplicates, total].
 */
function check(ids: SharedArrayBuffer, perThread: number, written: number[]): [number, number, number] {
  const words = new Uint32Array(ids);
  const le = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const [LO, HI] = le ? [0, 1] : [1, 0];
  const greater = (w: Uint32Array, a: number, b: number) =>
    w[2 * a + HI] > w[2 * b + HI] || (w[2 * a + HI] === w[2 * b + HI] && w[2 * a + LO] > w[2 * b + LO]);
  let decreases = 0;
  let total = 0;
  for (let t = 0; t < written.length; t++) {
    const from = t * perThread;
    for (let i = from + 1; i < from + written[t]; i++) if (!greater(words, i, i - 1)) decreases++;
    total += written[t];
  }
  // Gather every written ID, sort natively, and compare neighbours.
  const all = new BigUint64Array(total);
  const view = new BigUint64Array(ids);
  let at = 0;
  for (let t = 0; t < written.length; t++) {
    all.set(view.subarray(t * perThread, t * perThread + written[t]), at);
    at += written[t];
  }
  all.sort();
  const aw = new Uint32Array(all.buffer);
  let duplicates = 0;
  for (let i = 1; i < total; i++)
    if (aw[2 * i + LO] === aw[2 * i - 2 + LO] && aw[2 * i + HI] === aw[2 * i - 2 + HI]) duplicates++;
  return [decreases, duplicates, total];
}

const PER_THREAD = 1_000_000;
let nodeSeq = 0;

for (const [layoutName, layout] of [
  ['twitter', 'twitter'],
  ['uncapped (41-bit time + 22-bit sequence)', UNCAPPED],
] as const) {
  test(`GIVEN 2, 4 and 16 worker threads × 1,000,000 IDs on the ${layoutName} layout, threads calling next(), batch() and a mix THEN 0 duplicates and every thread's IDs increase`, async () => {
    for (const threads of [2, 4, 16]) {
      const node: Record<string, number> = layout === 'twitter' ? { datacenter: 20, worker: nodeSeq++ } : {};
      const shared = new SharedGenerator({ layout, node });
      try {
        const ids = new SharedArrayBuffer(threads * PER_THREAD * 8);
        const results = await runThreads({ shared, threads, perThread: PER_THREAD, ids, mode: (i) => MODES[i % 3] });
        for (const r of results) assert.deepEqual(r.refusals, {}, `${threads} threads: refusals`);
        const [decreases, duplicates, total] = check(
          ids,
          PER_THREAD,
          results.map((r) => r.written),
        );
        assert.equal(total, threads * PER_THREAD);
        assert.equal(decreases, 0, `${threads} threads: a thread's IDs did not increase`);
        assert.equal(duplicates, 0, `${threads} threads: duplicate IDs`);
        // Every thread's run never crossed a tick: the decoded IDs are valid for the layout.
        const last = new BigUint64Array(ids)[PER_THREAD - 1];
        assert.deepEqual(shared.layout.decode(last).fields, node);
      } finally {
        shared.close();
      }
    }
  });
}

const POLICIES: Array<[ExhaustedPolicy, BackwardsPolicy]> = [
  ['wait', 'tolerate'],
  ['borrow', 'tolerate'],
  ['wait', 'wait'],
  ['borrow', 'throw'],
  ['wait', 'throw'],
];

for (const clockKind of ['frozen', 'stepped-back'] as const) {
  test(`GIVEN 4 worker threads on a ${clockKind} wall clock shared by all threads, under each exhaustion and backwards policy THEN 0 duplicates and 0 decreases per thread`, async () => {
    for (const [onExhausted, onClockBackwards] of POLICIES) {
      const wall = new SharedArrayBuffer(8);
      const cell = new Float64Array(wall);
      cell[0] = START;
      const clock: Clock = { now: () => cell[0], monotonic: () => performance.now(), sleep: () => {} };
      const shared = new SharedGenerator({
        layout: 'twitter',
        node: { datacenter: 21, worker: nodeSeq++ },
        clock,
        onExhausted,
        onClockBackwards,
        maxBorrowMs: 8,
      });
      const perThread = 150_000;
      try {
        const ids = new SharedArrayBuffer(4 * perThread * 8);
        const results = await runThreads({
          shared,
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
          if (onClockBackwards === 'throw')
            assert.ok(refused('FLURRY_E_CLOCK_BACKWARDS') > 0, `${what}: never refused`);
        } else {
          assert.ok(refused('FLURRY_E_SEQUENCE_EXHAUSTED') > 0, `${what}: a frozen clock never ran out`);
          if (onExhausted === 'borrow') assert.equal(sum('borrowedTicks') > 0, true, `${what}: never borrowed`);
          else assert.equal(sum('borrowedTicks'), 0, `${what}: borrowed under the wait policy`);
        }
        if (clockKind === 'frozen') {
          // A frozen clock holds one tick (plus what borrowing allows): the cap still holds.
          const ticks = onExhausted === 'borrow' ? 1 + 8 : 1;
          assert.ok(total <= ticks * 4096, `${what}: ${total} IDs in ${ticks} tick(s)`);
        }
      } finally {
        shared.close();
      }
    }
  });
}
