#!/usr/bin/env node
// `npm run bench:threads`: worker threads sharing one node ID through the core's
// SharedGenerator. For each layout (twitter, capped at 4,096,000 IDs/s; an uncapped
// 41-bit time + 22-bit sequence layout; and `uuid`: SharedUuidGenerator writing 16-byte
// UUIDs with nextBytes() and fill(64), against UuidGenerator), each mode (next(), batch(64)) and each thread
// count, every thread issues its share of --ids IDs into one SharedArrayBuffer after a
// common start signal; the run then checks every thread's IDs increase and the union has
// no duplicate, and prints one JSON line. The reference, measured in the same run: a plain
// Generator on one worker thread (same harness) and the ns per next() of Generator and
// SharedGenerator on this thread.
//
// Usage: node benchmarks/threads.mjs [--threads 1,2,4,8,16] [--ids 4000000] (give 16 threads a few million each)
//          [--layouts twitter,uncapped,uuid] [--modes next,batch] [--rounds 3] [--no-write]
// Needs only Node and the repository's build (`npm run build`). Rewrites the "Threads"
// section of docs/benchmarks.md unless --no-write.
import os from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fmt, machineLine, table, writeSection } from './report.mjs';

const core = await import(new URL('../packages/core/dist/index.js', import.meta.url).href);
const { check } = await import(new URL('../packages/core/dist/testing/thread-kit.js', import.meta.url).href);
const TWITTER_EPOCH = 1288834974657;
const LAYOUTS = {
  twitter: 'twitter',
  uncapped: {
    name: 'uncapped-41-22',
    fields: [
      { name: 'timestamp', bits: 41 },
      { name: 'sequence', bits: 22 },
    ],
    epoch: TWITTER_EPOCH,
  },
  uuid: 'uuid',
};
const NODES = { twitter: { datacenter: 30, worker: 30 }, uncapped: {}, uuid: 30 };
/** The uncapped layout with a 4-bit worker field: one plain Generator per thread, each its own node. */
const OWN = {
  name: 'uncapped-41-4-18',
  fields: [
    { name: 'timestamp', bits: 41 },
    { name: 'worker', bits: 4 },
    { name: 'sequence', bits: 18 },
  ],
  epoch: TWITTER_EPOCH,
};
/** UUIDs: the classes, the bytes per ID, and what the duplicate check needs to know of the format. */
const UUID = { shared: 'SharedUuidGenerator', single: 'UuidGenerator', width: 16, check: { uuidSequenceBits: 22 } };
const ID = { shared: 'SharedGenerator', single: 'Generator', width: 8, check: {} };
const kindOf = (layoutName) => (layoutName === 'uuid' ? UUID : ID);
const BATCH = 64;
/** IDs each thread issues (and discards) before the start signal. */
const WARM_UP = 32 * 1024;

if (!isMainThread) {
  // One thread: attach (or create a plain Generator for the reference), wait for the start
  // signal, issue `count` IDs into ids[from .. from + count), report start and end times.
  const { state, layout, node, mode, from, count, ids: sab, go } = workerData;
  const kind = kindOf(layout);
  const gen = state
    ? core[kind.shared].fromState(state)
    : new core[kind.single](kind === UUID ? { node } : { layout, node });
  const signal = new Int32Array(go);
  // Each call writes its IDs at index i (UUIDs: 16 bytes each, nextBytes() / fill()).
  const [one, many] =
    kind === UUID
      ? [(a, i) => gen.nextBytes(a, i * 16), (a, i, n) => gen.fill(a, i, n)]
      : [
          (a, i) => (a[i] = gen.next()),
          (a, i, n) => {
            const b = gen.batch(n);
            for (let k = 0; k < n; k++) a[i + k] = b[k];
          },
        ];
  const view = (buffer, at, n) =>
    kind === UUID ? new Uint8Array(buffer, at * 16, n * 16) : new BigUint64Array(buffer, at * 8, n);
  const ids = view(sab, from, count);
  // Warm-up (the JIT compiles the loop before the clock starts); these IDs are discarded.
  const scratch = view(new ArrayBuffer(BATCH * kind.width), 0, BATCH);
  for (let i = 0; i < WARM_UP; i++) {
    if (mode === 'next') one(scratch, i % BATCH);
    else if (i % BATCH === 0) many(scratch, 0, BATCH);
  }
  parentPort.postMessage({ ready: true });
  Atomics.wait(signal, 0, 0);
  const t0 = performance.timeOrigin + performance.now();
  if (mode === 'next') for (let i = 0; i < count; i++) one(ids, i);
  else for (let i = 0; i < count; i += BATCH) many(ids, i, Math.min(BATCH, count - i));
  const t1 = performance.timeOrigin + performance.now();
  if (!state) gen.close();
  parentPort.postMessage({ t0, t1 });
} else {
  const args = parseArgs(process.argv.slice(2));
  const cores = os.availableParallelism();
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');

  const ref = nsPerNext(args.rounds);
  const lines = [];
  say({
    bench: 'threads',
    reference: 'next() on this thread, uncapped layout',
    cores,
    loadAverage1m: round(os.loadavg()[0], 1),
    node: process.version,
    generatorNextNs: round(ref.generator, 1),
    sharedNextNs: round(ref.shared, 1),
    sharedOverGenerator: round(ref.shared / ref.generator, 2),
  });

  for (const layoutName of args.layouts) {
    const layout = layoutName === 'uuid' ? undefined : core.Layout.from(LAYOUTS[layoutName]);
    const cap = layoutName === 'twitter' ? (layout.maxSequence + 1) * (1000 / layout.unitMs) : null;
    for (const mode of args.modes) {
      const reference = await best(args.rounds, () => runThreads(layoutName, mode, 1, args.ids, false));
      for (const threads of args.threads) {
        const r = await best(args.rounds, () => runThreads(layoutName, mode, threads, args.ids, true));
        // The machine's own scaling: one plain Generator per thread, each its own node of a
        // 41-4-18 layout, nothing shared (uncapped only).
        const own =
          layoutName === 'uncapped' && threads > 1
            ? await best(args.rounds, () => runThreads(layoutName, mode, threads, args.ids, false))
            : undefined;
        const line = {
          bench: 'threads',
          layout: layoutName,
          mode: callName(layoutName, mode),
          threads,
          cores,
          loadAverage1m: round(os.loadavg()[0], 1),
          ids: r.ids,
          idsPerSecond: Math.round(r.rate),
          ...(cap ? { capShare: round(r.rate / cap, 3) } : {}),
          duplicates: r.duplicates,
          decreasing: r.decreasing,
          everyThreadIncreasing: r.decreasing === 0,
          reference: `${kindOf(layoutName).single}, one worker thread`,
          referenceIdsPerSecond: Math.round(reference.rate),
          referenceDuplicates: reference.duplicates,
          overReference: round(r.rate / reference.rate, 2),
          ...(own
            ? {
                ownGeneratorsIdsPerSecond: Math.round(own.rate),
                overOwnGenerators: round(r.rate / own.rate, 2),
              }
            : {}),
        };
        lines.push(line);
        say(line);
      }
    }
  }
  if (args.write) report(ref, lines, cores, args);
}

/** Rewrites the "Threads" section of docs/benchmarks.md from this run's lines. */
function report(ref, lines, cores, args) {
  const rows = lines.map((l) => [
    l.layout,
    l.mode,
    l.threads,
    fmt(l.idsPerSecond),
    l.capShare === undefined ? '–' : `${fmt(l.capShare * 100, 1)}%`,
    `${fmt(l.referenceIdsPerSecond)} (${fmt(l.overReference, 2)}×)`,
    l.duplicates,
    l.decreasing,
    fmt(l.loadAverage1m, 1),
  ]);
  const find = (layout, mode, threads) =>
    lines.find((l) => l.layout === layout && l.mode === mode && l.threads === threads);
  const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? 'met' : 'not met');
  const targets = [
    [
      'SharedGenerator.next() on one thread vs Generator.next(), same run',
      '≤ 2×',
      `${fmt(ref.shared, 1)} vs ${fmt(ref.generator, 1)} ns (${fmt(ref.shared / ref.generator, 2)}×)`,
      verdict(ref.shared <= 2 * ref.generator),
    ],
  ];
  for (const mode of ['next()', `batch(${BATCH})`]) {
    const ref1 = find('twitter', mode, 1);
    if (ref1) {
      const share = ref1.referenceIdsPerSecond / 4_096_000;
      targets.push([
        `reference: Generator, twitter, ${mode}, one worker thread, same harness: share of the cap (how much of a core this run got)`,
        'reference',
        `${fmt(share * 100, 1)}%`,
        '–',
      ]);
    }
    for (const t of cores >= 16 ? [1, 2, 4, 8, 16] : [1, 2]) {
      const l = find('twitter', mode, t);
      targets.push([
        `twitter, ${mode}, ${t} thread${t > 1 ? 's' : ''}: share of the 4,096,000/s cap`,
        '≥ 95%',
        l ? `${fmt(l.capShare * 100, 1)}%` : '–',
        verdict(l ? l.capShare >= 0.95 : undefined),
      ]);
    }
    const one = find('uncapped', mode, 1);
    for (const [t, x] of cores >= 16
      ? [
          [2, 1.6],
          [16, 8],
        ]
      : [[2, 1.6]]) {
      const l = find('uncapped', mode, t);
      targets.push([
        `uncapped, ${mode}, ${t} threads vs 1`,
        `≥ ${x}×`,
        one && l ? `${fmt(l.idsPerSecond / one.idsPerSecond, 2)}×` : '–',
        verdict(one && l ? l.idsPerSecond >= x * one.idsPerSecond : undefined),
      ]);
    }
  }
  const faults = lines.reduce((a, l) => a + l.duplicates + l.decreasing, 0);
  targets.push([
    'duplicates and per-thread decreases, every configuration and round',
    '0',
    String(faults),
    verdict(faults === 0),
  ]);
  writeSection(
    'Threads',
    [
      `${machineLine()} \`os.availableParallelism()\`: ${cores}; 1-minute load average ${fmt(os.loadavg()[0], 1)} at the end of the run (the machine is shared, so the load column says how busy it was during each row).`,
      '',
      `\`npm run bench:threads\` (\`node benchmarks/threads.mjs --threads ${args.threads.join(',')}\`): worker threads share one node ID through \`SharedGenerator\`; each issues its share of ${fmt(args.ids)} IDs into one \`SharedArrayBuffer\` after a common start signal (the rate counts from the first thread's start to the last one's end), best of ${args.rounds} rounds. Every ID of every round is checked: each thread's IDs increase, and the union has no duplicate. The references, measured in the same run: a plain \`Generator\` on one worker thread (same harness), and ns per \`next()\` of \`Generator\` and \`SharedGenerator\` on the main thread (uncapped layout, best of ${args.rounds} rounds of 2,000,000). **uncapped** is 41-bit time + 22-bit sequence (4,194,304 IDs per ms); **uuid** is \`SharedUuidGenerator\` (32,768 UUIDs per ms shared by the threads) writing 16-byte UUIDs with \`nextBytes()\` and \`fill(${BATCH})\`, its reference a \`UuidGenerator\` on one worker thread. The script prints one JSON line per configuration.`,
      '',
      table(
        [
          'layout',
          'call',
          'threads',
          'IDs/s',
          'of cap',
          'Generator, 1 thread (ratio)',
          'duplicates',
          'decreases',
          'load',
        ],
        rows,
      ),
      ...(Math.max(...lines.map((l) => l.loadAverage1m)) > cores
        ? [
            '',
            `The 1-minute load average exceeded the ${cores} cores during this run, so these rates measure how much CPU the run got as much as the code: read them against the \`Generator\` reference of the same run (the first rows of the targets), and take the targets on an idle machine.`,
          ]
        : []),
      '',
      '### Targets (issue 28)',
      '',
      table(['what', 'target', 'measured', 'verdict'], targets),
    ].join('\n'),
  );
}

/** Runs one configuration `rounds` times; keeps the fastest, summing every round's faults. */
async function best(rounds, once) {
  let top;
  let duplicates = 0;
  let decreasing = 0;
  for (let i = 0; i < rounds; i++) {
    const r = await once();
    duplicates += r.duplicates;
    decreasing += r.decreasing;
    if (!top || r.rate > top.rate) top = r;
  }
  return { ...top, duplicates, decreasing };
}

/** `threads` worker threads issue `total` IDs (shared: one SharedGenerator; else one plain Generator). */
async function runThreads(layoutName, mode, threads, total, shared) {
  const per = Math.floor(total / threads);
  const n = per * threads;
  const kind = kindOf(layoutName);
  const ids = new SharedArrayBuffer(n * kind.width);
  const go = new SharedArrayBuffer(4);
  const node = NODES[layoutName];
  const opts = kind === UUID ? { node } : { layout: LAYOUTS[layoutName], node };
  const gen = shared ? new core[kind.shared](opts) : undefined;
  const own = kind === ID && !shared && threads > 1; // one plain Generator per thread, each its own node
  try {
    const workers = Array.from(
      { length: threads },
      (_, i) =>
        new Worker(new URL(import.meta.url), {
          workerData: {
            state: gen?.state,
            layout: own ? OWN : LAYOUTS[layoutName],
            node: own ? { worker: i } : node,
            mode,
            from: i * per,
            count: per,
            ids,
            go,
          },
        }),
    );
    const done = workers.map(
      (w) =>
        new Promise((resolve, reject) => {
          let ready;
          const isReady = new Promise((r) => (ready = r));
          w.on('message', (m) => (m.ready ? ready() : resolve(m)));
          w.once('error', reject);
          w.readyPromise = isReady;
        }),
    );
    await Promise.all(workers.map((w) => w.readyPromise));
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    const times = await Promise.all(done);
    await Promise.all(workers.map((w) => w.terminate()));
    const start = Math.min(...times.map((t) => t.t0));
    const end = Math.max(...times.map((t) => t.t1));
    const [decreasing, duplicates] = check(ids, per, new Array(threads).fill(per), kind.check);
    return { ids: n, rate: n / ((end - start) / 1000), duplicates, decreasing };
  } finally {
    gen?.close();
  }
}

/** ns per next() of a plain Generator and of a SharedGenerator on this thread (uncapped layout), interleaved, best of `rounds`. */
function nsPerNext(rounds) {
  const N = 2_000_000;
  let generator = Infinity;
  let shared = Infinity;
  const time = (gen) => {
    let x = 0n;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) x ^= gen.next();
    const ns = Number(process.hrtime.bigint() - t0) / N;
    if (x === -1n) console.log(x);
    return ns;
  };
  for (let r = 0; r < rounds + 1; r++) {
    const g = new core.Generator({ layout: LAYOUTS.uncapped, node: {} });
    const a = time(g);
    g.close();
    const s = new core.SharedGenerator({ layout: LAYOUTS.uncapped, node: {} });
    const b = time(s);
    s.close();
    if (r === 0) continue; // warm-up
    generator = Math.min(generator, a);
    shared = Math.min(shared, b);
  }
  return { generator, shared };
}

/** How a row names its call: next()/batch(64) for IDs, nextBytes()/fill(64) for UUIDs. */
function callName(layoutName, mode) {
  if (layoutName === 'uuid') return mode === 'next' ? 'nextBytes()' : `fill(${BATCH})`;
  return mode === 'next' ? 'next()' : `batch(${BATCH})`;
}

function round(x, d) {
  return Math.round(x * 10 ** d) / 10 ** d;
}

function parseArgs(argv) {
  const out = {
    threads: [1, 2, 4, 8, 16],
    ids: 4_000_000,
    layouts: ['twitter', 'uncapped', 'uuid'],
    modes: ['next', 'batch'],
    rounds: 3,
    write: true,
  };
  const list = (v) => v.split(',').filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=');
    const val = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) fail(`${flag} needs a value`);
      return v;
    };
    if (flag === '--threads') out.threads = list(val()).map(Number);
    else if (flag === '--ids') out.ids = Number(val());
    else if (flag === '--layouts') out.layouts = list(val());
    else if (flag === '--modes') out.modes = list(val());
    else if (flag === '--rounds') out.rounds = Number(val());
    else if (flag === '--no-write') out.write = false;
    else fail(`unknown argument "${argv[i]}"`);
  }
  if (out.threads.some((t) => !Number.isInteger(t) || t < 1)) fail('--threads takes whole numbers ≥ 1, e.g. 1,2,4');
  if (!Number.isInteger(out.ids) || out.ids < 1) fail('--ids takes a whole number ≥ 1');
  if (!Number.isInteger(out.rounds) || out.rounds < 1) fail('--rounds takes a whole number ≥ 1');
  for (const l of out.layouts) if (!LAYOUTS[l]) fail(`unknown layout "${l}" (twitter, uncapped, uuid)`);
  for (const m of out.modes) if (m !== 'next' && m !== 'batch') fail(`unknown mode "${m}" (next, batch)`);
  return out;
}

function fail(msg) {
  process.stderr.write(
    `${msg}\nusage: node benchmarks/threads.mjs [--threads 1,2,4,8,16] [--ids 4000000] [--layouts twitter,uncapped,uuid] [--modes next,batch] [--rounds 3] [--no-write]\n`,
  );
  process.exit(2);
}
