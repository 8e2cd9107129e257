#!/usr/bin/env node
// Cost per ID of public IDs (issue 7) and of the plain string codecs (issue 2), measured
// against the built dist (`npm run build` first). Prints a markdown table on stdout;
// `benchmarks/run.mjs` appends it to docs/benchmarks.md. Run alone: `node benchmarks/public-ids.mjs`.
//
// Method: 4,096 Snowflake-shaped 64-bit IDs (twitter layout, one node, 5 per ms), cycled;
// each operation runs 5 rounds of 200,000 calls after a warm-up, and the best round counts
// (the least disturbed by other processes on a shared machine), in process CPU time and in wall time.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { cpus, loadavg } from 'node:os';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const core = await import(path.join(root, 'packages/core/dist/index.js'));
const { PublicIdCodec, encodeId, decodeId } = core;

// A fixed benchmark key (not a secret): key ID K, bytes 00..1f.
const KEY = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const ROUNDS = 5;
const CALLS = 200_000;

const ids = [];
for (let i = 0, ts = 533_000_000_000n; ids.length < 4096; i++) {
  if (i % 5 === 0) ts++;
  ids.push((ts << 22n) | (3n << 17n) | (7n << 12n) | BigInt(i % 5));
}
const MASK = ids.length - 1;

let sink = 0;
/** Best-of-ROUNDS nanoseconds per call: [CPU time of this process, wall time]. */
function measure(fn) {
  for (let i = 0; i < 50_000; i++) sink ^= fn(i & MASK) ? 1 : 0;
  let cpu = Infinity;
  let wall = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) sink ^= fn(i & MASK) ? 1 : 0;
    wall = Math.min(wall, Number(process.hrtime.bigint() - t0) / CALLS);
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, ((c.user + c.system) * 1000) / CALLS);
  }
  return [cpu, wall];
}

const codec = PublicIdCodec.create({ keys: KEY, bits: 63 });
const codec58 = PublicIdCodec.create({ keys: KEY, bits: 63, alphabet: 'base58' });
const encrypted = ids.map((id) => codec.encrypt(id));
const publicIds = ids.map((id) => codec.encode(id));
const publicIds58 = ids.map((id) => codec58.encode(id));
const base62 = ids.map((id) => encodeId(id, 'base62', { fixed: true }));
const decimal = ids.map((id) => id.toString());

const US = 1000;
const rows = [
  ['public ID: `encrypt(id)` (63-bit, 12 Feistel rounds)', measure((i) => codec.encrypt(ids[i])), US],
  ['public ID: `decrypt(x)`', measure((i) => codec.decrypt(encrypted[i])), US],
  [
    'public ID: `encode(id)` → base62 string with key ID, tag and check character',
    measure((i) => codec.encode(ids[i])),
    US,
  ],
  ['public ID: `decode(s)` ← base62 string (all checks, tag included)', measure((i) => codec.decode(publicIds[i])), US],
  ['public ID: `encode(id)` → base58 string', measure((i) => codec58.encode(ids[i])), null],
  ['public ID: `decode(s)` ← base58 string', measure((i) => codec58.decode(publicIds58[i])), null],
  ['codec: `encodeId(id, "base62", { fixed: true })`', measure((i) => encodeId(ids[i], 'base62', { fixed: true })), US],
  ['codec: `decodeId(s, "base62")`', measure((i) => decodeId(base62[i], 'base62')), null],
  ['codec: `encodeId(id, "decimal")`', measure((i) => encodeId(ids[i], 'decimal')), null],
  ['codec: `decodeId(s, "decimal")`', measure((i) => decodeId(decimal[i], 'decimal')), null],
];

const line = (cells) => `| ${cells.join(' | ')} |`;
const out = [
  `Best of ${ROUNDS} rounds of ${CALLS.toLocaleString('en-US')} calls on 4,096 Snowflake-shaped IDs, one thread (\`benchmarks/public-ids.mjs\`). ` +
    `CPU time is what the process itself spent (it excludes time waiting for a core on a shared machine); wall time includes it. Load average at start: ${loadavg()[0].toFixed(2)} on ${cpus().length} CPUs.`,
  '',
  line(['operation', 'CPU ns per ID', 'wall ns per ID', 'target', 'verdict (CPU)']),
  line(['---', '---', '---', '---', '---']),
  ...rows.map(([what, [cpu, wall], target]) =>
    line([
      what,
      cpu.toFixed(1),
      wall.toFixed(1),
      target ? `< ${target / 1000} µs` : '–',
      target ? (cpu < target ? 'met' : 'MISSED') : '–',
    ]),
  ),
];
console.log(out.join('\n'));
if (sink === 42) console.error(''); // keep the results observable
