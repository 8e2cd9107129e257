#!/usr/bin/env node
// One benchmark subject in its own process: `node benchmarks/subject.mjs NAME MODE`.
// MODE is `rate` (IDs per second over a fixed time), `cost` (ns per call),
// `stall` (1,000,000 IDs while Date.now() is frozen) or `back` (1,000,000 IDs while
// Date.now() steps back 10 ms half way). Prints one JSON line on stdout.
// Every loop is bounded by count and by real (unpatched) time.
import { createRequire } from 'node:module';
import { subjects } from './subjects.mjs';

const require = createRequire(import.meta.url);
const [name, mode = 'rate', arg] = process.argv.slice(2);
const subject = subjects[name];
if (!subject) {
  console.error(`unknown subject ${name}; known: ${Object.keys(subjects).join(', ')}`);
  process.exit(2);
}

const realNow = Date.now.bind(Date);
const hr = () => Number(process.hrtime.bigint()) / 1e6; // real ms, never patched
const N = 1_000_000;
const LIMIT_MS = Number(arg ?? 10_000);

/** Counts duplicates and decreasing steps in a list of comparable keys. */
function check(keys) {
  let dup = 0;
  let dec = 0;
  const seen = new Set();
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (seen.has(k)) dup++;
    else seen.add(k);
    if (i > 0 && !(keys[i - 1] < k)) if (keys[i - 1] > k) dec++;
  }
  return { duplicates: dup, decreasing: dec };
}

async function main() {
  if (mode === 'rate') {
    const make = await subject.create();
    // warm up
    const w0 = hr();
    while (hr() - w0 < 200) for (let i = 0; i < 1000; i++) make();
    const durationMs = 1000;
    let count = 0;
    let failures = 0;
    let error = null;
    const t0 = hr();
    while (hr() - t0 < durationMs) {
      for (let i = 0; i < 256; i++) {
        try {
          make();
          count++;
        } catch (e) {
          failures++;
          error = String(e?.code ?? e?.message ?? e).slice(0, 80);
        }
      }
    }
    const ms = hr() - t0;
    out({ name, mode, idsPerSecond: Math.round((count / ms) * 1000), failedCalls: failures, error });
  } else if (mode === 'cost') {
    const make = await subject.create();
    const batch = subject.batch ? await subject.batch() : null;
    let sink = 0n;
    const iters = 2_000_000;
    for (let i = 0; i < 200_000; i++) sink ^= BigInt.asUintN(1, make());
    let best = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = hr();
      for (let i = 0; i < iters; i++) make();
      best = Math.min(best, ((hr() - t0) * 1e6) / iters);
    }
    let batchNs = null;
    if (batch) {
      const arr = new BigUint64Array(4096);
      for (let i = 0; i < 200; i++) batch(arr);
      let bb = Infinity;
      for (let r = 0; r < 5; r++) {
        const rounds = 500;
        const t0 = hr();
        for (let i = 0; i < rounds; i++) batch(arr);
        bb = Math.min(bb, ((hr() - t0) * 1e6) / (rounds * 4096));
      }
      batchNs = bb;
    }
    // The floor under any next() that stamps each ID with the current time: one Date.now().
    let clockNs = Infinity;
    let clockSink = 0;
    for (let r = 0; r < 5; r++) {
      const t0 = hr();
      for (let i = 0; i < iters; i++) clockSink += Date.now();
      clockNs = Math.min(clockNs, ((hr() - t0) * 1e6) / iters);
    }
    out({ name, mode, nsPerId: best, batchNsPerId: batchNs, clockNs, sink: String(sink ^ BigInt(clockSink & 1)) });
  } else if (mode === 'stall' || mode === 'back') {
    const frozen = realNow();
    let offset = 0;
    if (mode === 'stall') Date.now = () => frozen;
    else Date.now = () => realNow() - offset;
    if (mode === 'stall') {
      const perfNow = performance.now.bind(performance);
      const perfFrozen = perfNow();
      performance.now = () => perfFrozen;
    }
    const make = await subject.create();
    const keys = new Array(N);
    let made = 0;
    let error = null;
    const t0 = hr();
    try {
      for (; made < N; made++) {
        if (mode === 'back' && made === N / 2) offset = 10;
        keys[made] = subject.key(make());
        if ((made & 1023) === 0 && hr() - t0 > LIMIT_MS) {
          error = `stopped after ${LIMIT_MS} ms`;
          break;
        }
      }
    } catch (e) {
      error = String(e?.code ?? e?.message ?? e).slice(0, 80);
    }
    keys.length = made;
    out({ name, mode, generated: made, ...check(keys), error });
  } else {
    console.error(`unknown mode ${mode}`);
    process.exit(2);
  }
}

function out(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

main().catch((e) => {
  out({ name, mode, error: String(e?.code ?? e?.message ?? e).slice(0, 120) });
  process.exit(0);
});
void require;
