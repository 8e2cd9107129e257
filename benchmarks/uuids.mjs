#!/usr/bin/env node
// UUIDv7 throughput (issue 26): Flurry's UuidGenerator as bytes, bigint and canonical strings, one call at a
// time and in batches, against npm `uuid` v7, `ulid`'s monotonic factory and crypto.randomUUID (v4), each
// subject in its own process, all in one run; then a fleet: --processes concurrent `flurry uuid -n --ids`
// runs leasing from one file registry (fleet()). Rewrites the "UUIDv7" section of docs/benchmarks.md.
// `node benchmarks/uuids.mjs` (after `npm run build`); `npm run bench` runs it too.
// `node benchmarks/uuids.mjs --processes 16 --ids 1000000`: the fleet alone, one JSON line, no rewrite.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

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

/** Runs `flurry uuid -n ids --format bytes` in each of `processes` concurrent processes on `registry`; resolves to their outputs. */
function flurryUuids(processes, ids, registry) {
  const bin = path.join(root, 'packages', 'server', 'dist', 'bin.cjs');
  const argv = [bin, 'uuid', '-n', String(ids), '--format', 'bytes', '--registry', registry, '--cluster', 'bench'];
  return Promise.all(
    Array.from(
      { length: processes },
      () =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
          const out = [];
          let err = '';
          child.stdout.on('data', (b) => out.push(b));
          child.stderr.on('data', (b) => (err += b));
          child.on('error', reject);
          child.on('close', (code) =>
            code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`flurry uuid exited ${code}: ${err.trim()}`)),
          );
        }),
    ),
  );
}

/**
 * `processes` concurrent `flurry uuid` runs, each leasing its node from one file registry in a temp
 * directory and printing `ids` UUIDs as bytes; then every UUID is checked: version 7 and variant 10,
 * each stream strictly increasing, no two equal anywhere (as (ms, node, sequence) keys of the default
 * format, sorted: equal UUIDs have equal keys). Reference in the same run: one process alone, same registry.
 */
async function fleet(processes, ids) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flurry-uuid-fleet-'));
  try {
    const registry = `file:${dir}`;
    const timed = async (n) => {
      const t0 = performance.now();
      const outs = await flurryUuids(n, ids, registry);
      return { outs, ms: performance.now() - t0 };
    };
    const reference = await timed(1);
    const run = await timed(processes);
    const total = processes * ids;
    const keys = new BigUint64Array(total);
    const kv = new DataView(keys.buffer);
    const nodes = new Set();
    let [malformed, decreasing, at] = [0, 0, 0];
    const first = Math.min(...run.outs.map((b) => b.readUInt32BE(0) * 65536 + b.readUInt16BE(4)));
    for (const b of run.outs) {
      if (b.length !== ids * 16) throw new Error(`a process printed ${b.length} bytes, not ${ids} UUIDs`);
      for (let o = 0; o < b.length; o += 16, at++) {
        const [h0, h1, l0] = [b.readUInt32BE(o), b.readUInt32BE(o + 4), b.readUInt32BE(o + 8)];
        if (((h1 >>> 12) & 0xf) !== 7 || l0 >>> 30 !== 2) malformed++;
        if (o > 0 && b.compare(b, o - 16, o, o, o + 16) <= 0) decreasing++; // not above the one before
        // Default format: rand_b = 10 sequence bits, 16 node bits, 36 random bits.
        const node = (l0 >>> 4) & 0xffff;
        const seq = (h1 & 0xfff) * 1024 + ((l0 >>> 20) & 0x3ff);
        nodes.add(node);
        const rel = h0 * 65536 + (h1 >>> 16) - first;
        kv.setUint32(8 * at, rel * 64 + (node >>> 10));
        kv.setUint32(8 * at + 4, (node & 0x3ff) * 2 ** 22 + seq);
      }
    }
    keys.sort();
    let duplicates = 0;
    for (let i = 1; i < total; i++) if (keys[i] === keys[i - 1]) duplicates++;
    return {
      bench: 'uuid-fleet',
      registry: 'file (temp directory)',
      processes,
      uuidsPerProcess: ids,
      uuids: total,
      duplicates,
      malformed,
      decreasing,
      everyStreamIncreasing: decreasing === 0,
      distinctNodes: nodes.size,
      wallMs: Math.round(run.ms),
      uuidsPerSecond: Math.round(total / (run.ms / 1000)),
      reference: `one process alone, ${ids} UUIDs, same registry`,
      referenceWallMs: Math.round(reference.ms),
      overReference: Number((run.ms / reference.ms).toFixed(2)),
      cores: os.availableParallelism(),
      loadAverage1m: Number(os.loadavg()[0].toFixed(1)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const self = fileURLToPath(import.meta.url);
const flag = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const fleetArgs = [flag('--processes', 16), flag('--ids', 1_000_000)];
if (!fleetArgs.every((n) => Number.isInteger(n) && n >= 1)) {
  console.error('usage: node benchmarks/uuids.mjs [--processes N] [--ids M] (whole numbers ≥ 1)');
  process.exit(2);
}
if (process.argv[2] && !process.argv[2].startsWith('--')) {
  console.log(JSON.stringify(await measure(process.argv[2])));
} else if (process.argv[2]) {
  console.log(JSON.stringify(await fleet(...fleetArgs)));
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
  process.stderr.write(`bench uuids: fleet, ${fleetArgs[0]} processes × ${fmt(fleetArgs[1])}…\n`);
  const f = await fleet(...fleetArgs);
  console.log(JSON.stringify(f));
  targets.push([
    `${f.processes} processes × ${fmt(f.uuidsPerProcess)} UUIDs on one registry`,
    '0 duplicates',
    `${f.duplicates} duplicates, ${f.distinctNodes} distinct nodes, ${f.decreasing} decreases`,
    f.duplicates === 0 && f.decreasing === 0 && f.malformed === 0 ? 'met' : 'MISSED',
  ]);
  const notIncreasing = Object.values(results).reduce((s, r) => s + (r.notIncreasing ?? 0), 0);
  let md = `${machineLine()} Load average (1 min) at the start: ${fmt(load, 1)} on ${os.cpus().length} cores. Each subject runs in its own process (\`benchmarks/uuids.mjs\`); **UUIDs/s** is the best of 5 rounds of 300 ms of calls in a tight loop after a warm-up. `;
  md += `One-call subjects read the clock (\`Date.now()\`) for every UUID; \`batch\`/\`fill\` read it once per run of sequence numbers, as \`Generator.fill\` does. `;
  md += `After its rounds each Flurry subject issues 1,000,000 more as bigints and counts any not above its predecessor. `;
  md += `On a shared, loaded machine the absolute rates move with the load; **vs crypto.randomUUID** (Node's own v4, measured in the same run) moves less.\n\n`;
  md += table(['subject', 'form', 'UUIDs/s', 'ns/UUID', 'vs crypto.randomUUID', 'not increasing (of 1,000,000)'], rows);
  md += `\n\nPeers: npm \`uuid\` v7 is ${fmt(rate('flurry next() (canonical)') / rate('uuid v7() (npm uuid 14)'), 1)}× slower than Flurry's canonical \`next()\`, \`ulid\` monotonic ${fmt(rate('flurry next() (canonical)') / rate('ulid monotonicFactory()'), 1)}×; \`crypto.randomUUID()\` (v4, no order, no node) runs at ${fmt(rate('crypto.randomUUID() (v4, unordered)'))}/s. Not increasing, all Flurry subjects: ${notIncreasing}.\n`;
  md += `\n### ${f.processes} processes on one registry\n\n`;
  md += `\`node benchmarks/uuids.mjs --processes ${f.processes} --ids ${f.uuidsPerProcess}\` (the same as part of this run): ${f.processes} concurrent \`flurry uuid -n ${f.uuidsPerProcess} --format bytes\` processes, each leasing its node ID from one file registry in a temp directory; every UUID is collected and checked (version 7 and variant 10, each process's UUIDs strictly increasing, no two equal: (ms, node, sequence) keys sorted). The reference is one such process alone on the same registry, in the same run.\n\n`;
  md += table(
    [
      'processes × UUIDs',
      'duplicates',
      'distinct nodes',
      'decreases',
      'malformed',
      'wall',
      'UUIDs/s (all)',
      'one process alone',
      'ratio',
    ],
    [
      [
        `${f.processes} × ${fmt(f.uuidsPerProcess)}`,
        f.duplicates,
        f.distinctNodes,
        f.decreasing,
        f.malformed,
        `${fmt(f.wallMs)} ms`,
        fmt(f.uuidsPerSecond),
        `${fmt(f.referenceWallMs)} ms`,
        `${fmt(f.overReference, 2)}×`,
      ],
    ],
  );
  md += '\n\n### Targets (issue 26)\n\n' + table(['what', 'target', 'measured', 'verdict'], targets);
  console.log(md);
  writeSection('UUIDv7', md);
  console.error('\nwrote docs/benchmarks.md (section "UUIDv7")');
}
