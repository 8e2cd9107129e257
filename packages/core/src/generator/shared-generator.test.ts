import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { ManualClock } from '../clock.js';
import { FlurryError, ErrorCode } from '../errors.js';
import { Generator } from './generator.js';
import { SharedGenerator } from './shared-generator.js';
import { Layout } from '../layout/layout.js';

const START = Date.UTC(2025, 0, 1);
const INDEX_URL = new URL('../index.js', import.meta.url).href;
const code = (c: string) => (e: unknown) => e instanceof FlurryError && e.code === c;

/**
 * Worker body (CommonJS eval): loads the built core and runs one job from workerData.
 * - 'shared': attaches to a SharedGenerator state, issues `count` IDs with next() and
 *   `count` with fill(), posts them back.
 * - 'claim': creates a Generator for `node`; reports success or the error code; holds it
 *   until told 'close' (then closes) or 'exit' (then exits without closing).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.url).then((core) => {
  const fail = (e) => parentPort.postMessage({ ok: false, code: e && e.code, message: String(e && e.message) });
  try {
    if (workerData.job === 'shared') {
      const gen = core.SharedGenerator.fromState(workerData.state);
      const ids = new BigUint64Array(workerData.count * 2);
      for (let i = 0; i < workerData.count; i++) ids[i] = gen.next();
      for (let done = workerData.count; done < ids.length; done += 500) gen.fill(ids, done, Math.min(500, ids.length - done));
      let afterClose = null;
      parentPort.postMessage({ ok: true, ids });
      parentPort.once('message', () => {
        try { gen.next(); } catch (e) { afterClose = e.code; }
        parentPort.postMessage({ afterClose });
      });
    } else {
      const gen = new core.Generator({ layout: workerData.layout, node: workerData.node });
      gen.next();
      parentPort.postMessage({ ok: true });
      parentPort.on('message', (m) => {
        if (m === 'close') { gen.close(); parentPort.postMessage({ closed: true }); }
        if (m === 'exit') process.exit(0);
      });
    }
  } catch (e) { fail(e); }
}, (e) => parentPort.postMessage({ ok: false, message: String(e) }));
`;

/** A worker whose messages are queued from the start, so none is lost between awaits. */
interface TestWorker extends Worker {
  inbox: unknown[];
  waiting: Array<(m: unknown) => void>;
}

function startWorker(data: Record<string, unknown>): TestWorker {
  const w = new Worker(WORKER, { eval: true, workerData: { url: INDEX_URL, ...data } }) as TestWorker;
  w.inbox = [];
  w.waiting = [];
  w.on('message', (m) => {
    const waiter = w.waiting.shift();
    if (waiter) waiter(m);
    else w.inbox.push(m);
  });
  return w;
}

function nextMessage<T = Record<string, unknown>>(w: TestWorker, what: string, timeoutMs = 20_000): Promise<T> {
  if (w.inbox.length) return Promise.resolve(w.inbox.shift() as T);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not answer in time: ${what}`)), timeoutMs);
    const onError = (e: Error) => {
      clearTimeout(timer);
      reject(e);
    };
    w.once('error', onError);
    w.waiting.push((m) => {
      clearTimeout(timer);
      w.off('error', onError);
      resolve(m as T);
    });
  });
}

function exited(w: Worker, timeoutMs = 20_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not exit in time')), timeoutMs);
    w.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
}

test('GIVEN one SharedGenerator used by 4 real worker threads and the main thread at once THEN the union of 240,000 IDs has no duplicate and each thread sees increasing IDs', async () => {
  const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 7, worker: 7 } });
  const workers = Array.from({ length: 4 }, () => startWorker({ job: 'shared', state: shared.state, count: 25_000 }));
  try {
    const answers = workers.map((w) =>
      nextMessage<{ ok: boolean; ids: BigUint64Array; message?: string }>(w, 'step 1'),
    );
    const mine = new BigUint64Array(40_000);
    for (let i = 0; i < 20_000; i++) mine[i] = shared.next();
    shared.fill(mine, 20_000);
    const results = await Promise.all(answers);
    const all = new BigUint64Array(240_000);
    let at = 0;
    for (const r of [...results, { ok: true, ids: mine }]) {
      assert.ok(r.ok, (r as { message?: string }).message);
      for (let i = 1; i < r.ids.length; i++)
        if (!(r.ids[i] > r.ids[i - 1])) assert.fail(`thread-local order broken at ${i}`);
      all.set(r.ids, at);
      at += r.ids.length;
    }
    all.sort();
    for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) assert.fail(`duplicate ID ${all[i]}`);
    const d = shared.layout.decode(all[all.length - 1]);
    assert.deepEqual(d.fields, { datacenter: 7, worker: 7 });
    // Closing the creating handle stops the workers' handles too.
    shared.close();
    const after = await Promise.all(
      workers.map((w) => (w.postMessage('next'), nextMessage<{ afterClose: string }>(w, 'step 2'))),
    );
    for (const a of after) assert.equal(a.afterClose, ErrorCode.GENERATOR_CLOSED);
  } finally {
    shared.close();
    await Promise.all(workers.map((w) => w.terminate()));
  }
});

test('GIVEN a Generator for a node in the main thread THEN a worker thread cannot create a second one (FLURRY_E_NODE_IN_USE), and can after close()', async () => {
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 8, worker: 1 } });
  let closed = false;
  try {
    const w = startWorker({ job: 'claim', layout: 'leaf', node: { worker: 8 * 32 + 1 } });
    try {
      const r = await nextMessage<{ ok: boolean; code?: string }>(w, 'step 3');
      assert.equal(r.ok, false);
      assert.equal(r.code, ErrorCode.NODE_IN_USE);
      assert.match(String((r as { message?: string }).message), /in the main thread/);
    } finally {
      await w.terminate();
    }
    gen.close();
    closed = true;
    const w2 = startWorker({ job: 'claim', layout: 'twitter', node: { datacenter: 8, worker: 1 } });
    try {
      assert.deepEqual(await nextMessage(w2, 'step 4'), { ok: true });
    } finally {
      w2.postMessage('close');
      await nextMessage(w2, 'step 5');
      await w2.terminate();
    }
  } finally {
    if (!closed) gen.close();
  }
});

test('GIVEN a worker thread holding a node THEN the main thread gets FLURRY_E_NODE_IN_USE until the worker closes it or exits', async () => {
  const w = startWorker({ job: 'claim', layout: 'twitter', node: { datacenter: 8, worker: 2 } });
  const w2 = startWorker({ job: 'claim', layout: 'twitter', node: { datacenter: 8, worker: 3 } });
  try {
    assert.deepEqual(await nextMessage(w, 'step 6'), { ok: true });
    assert.throws(
      () => new Generator({ layout: 'twitter', node: { datacenter: 8, worker: 2 } }),
      (e: unknown) =>
        e instanceof FlurryError &&
        e.code === ErrorCode.NODE_IN_USE &&
        new RegExp(`in worker thread ${w.threadId}\\b`).test(e.message),
    );
    w.postMessage('close');
    assert.deepEqual(await nextMessage(w, 'step 7'), { closed: true });
    new Generator({ layout: 'twitter', node: { datacenter: 8, worker: 2 } }).close();

    assert.deepEqual(await nextMessage(w2, 'step 8'), { ok: true });
    assert.throws(
      () => new Generator({ layout: 'twitter', node: { datacenter: 8, worker: 3 } }),
      code(ErrorCode.NODE_IN_USE),
    );
    const gone = exited(w2);
    w2.postMessage('exit');
    await gone;
    new Generator({ layout: 'twitter', node: { datacenter: 8, worker: 3 } }).close();
  } finally {
    await Promise.all([w.terminate(), w2.terminate()]);
  }
});

test('GIVEN a SharedGenerator THEN it holds the node claim like a Generator, and rejects a lease or a 64-bit timestamp+sequence', () => {
  const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 1 } });
  try {
    assert.throws(
      () => new Generator({ layout: 'twitter', node: { datacenter: 9, worker: 1 } }),
      code(ErrorCode.NODE_IN_USE),
    );
    assert.throws(
      () => new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 1 } }),
      code(ErrorCode.NODE_IN_USE),
    );
  } finally {
    shared.close();
  }
  const g = new Generator({ layout: 'twitter', node: { datacenter: 9, worker: 1 } });
  g.close();
  assert.throws(
    () =>
      new SharedGenerator({
        layout: {
          fields: [
            { name: 'timestamp', bits: 42 },
            { name: 'sequence', bits: 22 },
          ],
          epoch: 0,
        },
        node: {},
      }),
    code(ErrorCode.INVALID_OPTION),
  );
  assert.throws(
    () => new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 2 }, lease: {} } as never),
    code(ErrorCode.INVALID_OPTION),
  );
  for (const state of [{}, null, undefined, 'flurry-shared-generator'])
    assert.throws(() => SharedGenerator.fromState(state as never), code(ErrorCode.INVALID_OPTION));
});

test('GIVEN a SharedGenerator THEN it takes no lease at all (so no fencing deadline, monotonic or wall, can be bypassed through it)', () => {
  const clock = new ManualClock(START, 0);
  const lease = {
    node: { datacenter: 9, worker: 3 },
    deadline: 800,
    wallDeadline: START + 800,
    notBeforeMs: 0,
    attach() {},
  };
  assert.throws(
    () => new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 3 }, clock, lease } as never),
    (e: unknown) => e instanceof FlurryError && e.code === ErrorCode.INVALID_OPTION && /lease/.test(e.message),
  );
  const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 3 }, clock });
  try {
    clock.stepWall(60_000); // a suspend: an unleased generator just follows the wall clock
    assert.equal(shared.layout.decode(shared.next()).unixMs, START + 60_000);
  } finally {
    shared.close();
  }
});

test('GIVEN a SharedGenerator on a ManualClock THEN it applies the same exhaustion and backwards policies as Generator', () => {
  const clock = new ManualClock(START);
  const shared = new SharedGenerator({ layout: 'leaf', node: { worker: 900 }, clock, onClockBackwards: 'throw' });
  try {
    const ids = shared.batch(4096 * 2 + 1);
    const l = shared.layout;
    for (let i = 0; i < ids.length; i++) {
      assert.equal(l.decode(ids[i]).sequence, i % 4096);
      assert.equal(l.decode(ids[i]).unixMs, START + Math.floor(i / 4096));
      if (i > 0) assert.ok(ids[i] > ids[i - 1]);
    }
    assert.equal(shared.stats.exhaustedWaits, 2);
    assert.equal(shared.lastIssuedUnixMs, START + 2);
    clock.stepWall(-5);
    assert.throws(() => shared.next(), code(ErrorCode.CLOCK_BACKWARDS));
    clock.stepWall(5);
    const attached = SharedGenerator.fromState(structuredClone(shared.state), { clock });
    const n = attached.next();
    assert.ok(n > ids[ids.length - 1]);
    assert.deepEqual(
      attached
        .batchStrings(2)
        .map(BigInt)
        .every((x) => x > n),
      true,
    );
    attached.close();
    assert.throws(() => attached.next(), code(ErrorCode.GENERATOR_CLOSED));
    assert.ok(shared.next() > n, 'detaching one handle leaves the others working');
  } finally {
    shared.close();
  }
});

test('GIVEN a thread holding a run of sequence values WHEN the wall clock reaches the next tick THEN next() drops the rest of the run and issues in the new tick; a second handle continues after the first', () => {
  const clock = new ManualClock(START);
  const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 4 }, clock });
  try {
    const l = shared.layout;
    const first = [shared.next(), shared.next(), shared.next()];
    assert.deepEqual(
      first.map((id) => l.decode(id).sequence),
      [0, 1, 2],
    );
    // The first call reserved a run beyond what it needed; another handle starts after it.
    const other = SharedGenerator.fromState(structuredClone(shared.state), { clock });
    const o = other.next();
    assert.equal(l.decode(o).unixMs, START);
    assert.ok(l.decode(o).sequence > 2, 'the second handle issues after the first handle’s run');
    assert.ok(shared.next() < o, 'the first handle keeps handing out its own run');
    clock.advance(1);
    const fresh = shared.next();
    assert.equal(l.decode(fresh).unixMs, START + 1);
    assert.equal(l.decode(fresh).sequence, 0);
    assert.equal(shared.lastIssuedUnixMs, START + 1);
    other.close();
  } finally {
    shared.close();
  }
});

test('GIVEN two handles sharing one tick of a standing clock THEN between them they issue all 4,096 sequence values of the tick, each exactly once, before either moves on', () => {
  const clock = new ManualClock(START);
  const shared = new SharedGenerator({ layout: 'twitter', node: { datacenter: 9, worker: 5 }, clock });
  const other = SharedGenerator.fromState(structuredClone(shared.state), { clock });
  try {
    const l = shared.layout;
    const seen = new Uint8Array(4096);
    for (let i = 0; i < 2048; i++) {
      for (const h of [shared, other]) {
        const d = l.decode(h.next());
        assert.equal(d.unixMs, START, `call ${i}: still in the first tick`);
        seen[d.sequence]++;
      }
    }
    assert.ok(
      seen.every((n) => n === 1),
      'every sequence value of the tick issued exactly once',
    );
    assert.equal(l.decode(other.next()).unixMs, START + 1, 'the tick is used up: the next ID waits for the next one');
  } finally {
    other.close();
    shared.close();
  }
});

test('GIVEN one handle starved for 3 s while another keeps borrowing every tick the clock frees THEN the starved call waits it out (others issuing is not a stalled clock) and issues above all of them', () => {
  const clock = new ManualClock(START);
  const layout = Layout.parse('timestamp:41,worker:2,sequence:2'); // 4 IDs a tick
  const a = new SharedGenerator({ layout, node: { worker: 1 }, clock, onExhausted: 'borrow', maxBorrowMs: 2 });
  const b = SharedGenerator.fromState(a.state, { clock });
  const fromB: bigint[] = [];
  const starveUntil = clock.monotonic() + 3_000;
  let inHook = false;
  // Each time `a` sleeps for a tick, `b` takes every ID the clock's advance made available.
  clock.sleep = (ms: number) => {
    clock.advance(ms);
    if (inHook || clock.monotonic() >= starveUntil) return;
    inHook = true;
    try {
      fromB.push(...b.batch(4 * ms));
    } finally {
      inHook = false;
    }
  };
  try {
    const first = a.batch(12); // the tick and the 2 ms borrow window: the next call must wait
    const t0 = clock.monotonic();
    const id = a.next(); // before the fix: FLURRY_E_SEQUENCE_EXHAUSTED ("the clock seems stalled") after 2 s
    assert.ok(clock.monotonic() - t0 >= 3_000, `waited ${clock.monotonic() - t0} ms`);
    assert.ok(fromB.length >= 4 * 2_900, `b issued ${fromB.length}`);
    const all = [...first, ...fromB, id];
    assert.equal(new Set(all).size, all.length, 'no duplicate');
    for (const x of fromB) assert.ok(id > x, 'the starved call issues above every ID issued meanwhile');
  } finally {
    b.close();
    a.close();
  }
});
