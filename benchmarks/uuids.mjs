#!/usr/bin/env node
// UUIDv7 throughput (issue 26): Flurry's UuidGenerator as bytes, bigint and canonical strings, one call at a
// time and in batches, against npm `uuid` v7, `ulid`'s monotonic factory and crypto.randomUUID (v4), each
// subject in its own process, all in one run. Rewrites the "UUIDv7" section of docs/benchmarks.md.
// `node benchmarks/uuids.mjs` (after `npm run build`); `npm run bench` runs it too.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { fmt, machineLine, table, writeSection } from './report.mjs';

const BATCH = 4096;

/** Each subject: `make()` returns a function issuing `per` UUIDs per call. */
const subjects = {
  'flurry nextBigInt()': { kind: 'bigint', per: 1, make: (g) => () => g.nextBigInt() },
  'flurry nextBytes()': { kind: 'bytes', per: 1, make: (g) => () => g.nextBytes() },
  'flurry next() (canonical)': { kind: 'string', per: 1, make: (g) => () => g.next() },
  'flurry batch(4096, "bigint")': { kind: 'bigint', per: BATCH, make: (g) => () => g.batch(BATCH, 'bigint') },
  'flurry fill(4096 × 16 bytes)': {
    kind: 'bytes',
    per: BATCH,
    make: (g) => {
      const buf = new Uint8Array(16 * BATCH);
      return () => g.fill(buf);
    },
  },
  'flurry batch(4096) (canonical)': { kind: 'string', per: BATCH, make: (g) => () => g.batch(BATCH) },
  'uuid v7() (npm uuid 14)': { kind: 'string', per: 1, peer: 'uuid', make: (m) => () => m.v7() },
  'uuid v7(undefined, bytes)': {
    kind: 'bytes',
    per: 1,
    peer: 'uuid',
    make: (m) => {
      const buf = new Uint8Array(16);
      return () => m.v7(undefined, buf);
    },
  },
  'ulid monotonicFactory()': { kind: 'string', per: 1, peer: 'ulid', make: (m) => m.monotonicFactory() },
  'crypto.randomUUID() (v4, unordered)': { kind: 'string', per: 1, peer: 'crypto', make: (m) => () => m.randomUUID() },
};

async function measure(name) {
  const s = subjects[name];
  let fn;
  let gen;
  if (s.peer === undefined) {
    const { UuidGenerator } = await import('../packages/core/dist/index.js');
    gen = new UuidGenerator({ node: 1 });
    fn = s.make(gen);
  } else {
    fn = s.make(await import(s.peer === 'crypto' ? 'node:crypto' : s.peer));
  }
  let sink;
  // Warm-up, then the best of 5 rounds of ~300 ms each.
  for (let i = 0; i < 200_000 / s.per; i++) sink = fn();
  let best = 0;
  for (let round = 0; round < 5; round++) {
    let calls = 0;
    const t0 = process.hrtime.bigint();
    let t = t0;
    while (t - t0 < 300_000_000n) {
      for (let i = 0; i < 1000 / Math.min(s.per, 1000); i++) sink = fn();
      calls += Math.ceil(1000 / Math.min(s.per, 1000));
      t = process.hrtime.bigint();
    }
    best = Math.max(best, (calls * s.per) / (Number(t - t0) / 1e9));
  }
  const out = { name, perSecond: best, sink: typeof sink };
  if (gen !== undefined) {
    // 1,000,000 more, checked: strictly increasing (so no duplicate) as 128-bit numbers.
    let prev = -1n;
    let bad = 0;
    for (const u of gen.batch(1_000_000, 'bigint')) {
      if (u <= prev) bad++;
      prev = u;
    }
    out.notIncreasing = bad;
    gen.close();
  }
  return out;
}

const self = fileURLToPath(import.meta.url);
if (process.argv[2]) {
  console.log(JSON.stringify(await measure(process.argv[2])));
} else {
  const load = os.loadavg()[0];
  const results = {};
  for (const name of Object.keys(subjects)) {
    process.stderr.write(`bench uuids: ${name}…\n`);
    const r = spawnSync(process.execPath, [self, name], { encoding: 'utf8', timeout: 120_000 });
    try {
      results[name] = JSON.parse(r.stdout.trim().split('\n').pop());
    } catch {
      results[name] = { name, error: (r.stderr || 'no output').trim().split('\n').pop().slice(0, 100) };
    }
  }
  const rate = (n) => results[n].perSecond ?? 0;
  const V4 = 'crypto.randomUUID() (v4, unordered)';
  const rows = Object.keys(subjects).map((n) => [
    n,
    subjects[n].kind,
    results[n].perSecond ? fmt(results[n].perSecond) : results[n].error,
    results[n].perSecond ? `${fmt(1e9 / results[n].perSecond, 1)}` : '–',
    rate(V4) ? `${fmt(rate(n) / rate(V4), 2)}×` : '–',
    results[n].notIncreasing === undefined ? '–' : fmt(results[n].notIncreasing),
  ]);
  const best = (names) => names.reduce((a, n) => (rate(n) > rate(a) ? n : a));
  const binOne = best(['flurry nextBigInt()', 'flurry nextBytes()']);
  const binBatch = best(['flurry batch(4096, "bigint")', 'flurry fill(4096 × 16 bytes)']);
  const targets = [
    ['bytes or bigint, one call per UUID', '≥ 10,000,000/s', binOne, 10e6],
    ['bytes or bigint, batch / fill', '≥ 10,000,000/s', binBatch, 10e6],
    ['canonical strings, one call per UUID', '≥ 5,000,000/s', 'flurry next() (canonical)', 5e6],
    ['canonical strings, batch', '≥ 5,000,000/s', 'flurry batch(4096) (canonical)', 5e6],
  ].map(([what, target, n, min]) => [what, target, `${fmt(rate(n))} (${n})`, rate(n) >= min ? 'met' : 'MISSED']);
  const notIncreasing = Object.values(results).reduce((s, r) => s + (r.notIncreasing ?? 0), 0);
  let md = `${machineLine()} Load average (1 min) at the start: ${fmt(load, 1)} on ${os.cpus().length} cores. Each subject runs in its own process (\`benchmarks/uuids.mjs\`); **UUIDs/s** is the best of 5 rounds of 300 ms of calls in a tight loop after a warm-up. `;
  md += `One-call subjects read the clock (\`Date.now()\`) for every UUID; \`batch\`/\`fill\` read it once per run of sequence numbers, as \`Generator.fill\` does. `;
  md += `After its rounds each Flurry subject issues 1,000,000 more as bigints and counts any not above its predecessor. `;
  md += `On a shared, loaded machine the absolute rates move with the load; **vs crypto.randomUUID** (Node's own v4, measured in the same run) moves less.\n\n`;
  md += table(['subject', 'form', 'UUIDs/s', 'ns/UUID', 'vs crypto.randomUUID', 'not increasing (of 1,000,000)'], rows);
  md += `\n\nPeers: npm \`uuid\` v7 is ${fmt(rate('flurry next() (canonical)') / rate('uuid v7() (npm uuid 14)'), 1)}× slower than Flurry's canonical \`next()\`, \`ulid\` monotonic ${fmt(rate('flurry next() (canonical)') / rate('ulid monotonicFactory()'), 1)}×; \`crypto.randomUUID()\` (v4, no order, no node) runs at ${fmt(rate('crypto.randomUUID() (v4, unordered)'))}/s. Not increasing, all Flurry subjects: ${notIncreasing}.\n`;
  md += '\n### Targets (issue 26)\n\n' + table(['what', 'target', 'measured', 'verdict'], targets);
  console.log(md);
  writeSection('UUIDv7', md);
  console.error('\nwrote docs/benchmarks.md (section "UUIDv7")');
}
