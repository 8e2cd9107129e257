#!/usr/bin/env node
// `npm run bench:cli` (also run by `npm run bench`): how long the `flurry` CLI takes to start
// and finish, against `node -e 0` in the same run (issue 12). With hyperfine on the PATH each
// command runs under `hyperfine -N` (3 warm-up runs, then RUNS timed runs); without it, a
// loop of RUNS timed runs each. Prints a table with ratios and rewrites the "CLI start"
// section of docs/benchmarks.md.
//
// Targets: the offline commands (decode, layout, key, public) at most 1.5 × `node -e 0`;
// `flurry next -n 1` with the file registry (a lease taken and released in a temporary state
// directory), with or without --node pins, at most 2 ×.
//
//   node benchmarks/cli-start.mjs            # RUNS = 20
//   RUNS=50 node benchmarks/cli-start.mjs
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const RUNS = Math.max(5, Math.min(200, Number(process.env.RUNS) || 20));
const bin = path.join(root, 'packages', 'server', 'dist', 'bin.cjs');
const node = process.execPath;
const KEY = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const state = mkdtempSync(path.join(os.tmpdir(), 'flurry-cli-start-'));
const env = { ...process.env, FLURRY_REGISTRY: `file:${state}`, XDG_STATE_HOME: state };
for (const k of Object.keys(env)) if (k.startsWith('FLURRY_') && k !== 'FLURRY_REGISTRY') delete env[k];
// NODE_EXTRA_CA_CERTS makes every Node process read and parse a certificate bundle at start
// (about 40 ms of CPU here, whether it uses TLS or not): it pads the reference and every
// command alike and flatters the ratios. The verdicts are measured without it (every command,
// the reference too); when it is set, a second table shows the machine as it is set up.
const extraCa = env.NODE_EXTRA_CA_CERTS;
delete env.NODE_EXTRA_CA_CERTS;
const envAsSet = extraCa === undefined ? undefined : { ...env, NODE_EXTRA_CA_CERTS: extraCa };

/** [label, argv after node, target ratio or null for the reference] */
const cases = [
  ['node -e 0', ['-e', '0'], null],
  ['flurry layout', [bin, 'layout'], 1.5],
  ['flurry decode 1859214170478923776', [bin, 'decode', '1859214170478923776'], 1.5],
  ['flurry key new', [bin, 'key', 'new'], 1.5],
  ['flurry public encode 1859214170478923776', [bin, 'public', 'encode', '1859214170478923776', '--key', KEY], 1.5],
  ['flurry public decode …', [bin, 'public', 'decode', 'KCmUJF4zBACyLOHw', '--layout', 'discord', '--key', KEY], 1.5],
  [
    'flurry next -n 1 --node datacenter=0 --node worker=3 (file registry)',
    [bin, 'next', '-n', '1', '--node', 'datacenter=0', '--node', 'worker=3'],
    2,
  ],
  ['flurry next -n 1 (file registry)', [bin, 'next', '-n', '1'], 2],
];

function hasHyperfine() {
  const r = spawnSync('hyperfine', ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

/** Each command must work before it is timed: a failing command would time its error path. */
function check([label, args]) {
  const r = spawnSync(node, args, { env, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`${label} failed (exit ${r.status}): ${(r.stderr || '').trim()}`);
}

function withHyperfine(env) {
  const out = path.join(state, 'hyperfine.json');
  const args = ['-N', '--warmup', '3', '--runs', String(RUNS), '--export-json', out, '--style', 'none'];
  for (const [, argv] of cases) args.push([node, ...argv].join(' '));
  const r = spawnSync('hyperfine', args, { env, encoding: 'utf8', timeout: 30 * 60_000 });
  if (r.status !== 0) throw new Error(`hyperfine failed: ${(r.stderr || '').trim()}`);
  const json = JSON.parse(readFileSync(out, 'utf8'));
  return json.results.map((x) => ({
    mean: x.mean * 1000,
    stddev: (x.stddev ?? 0) * 1000,
    median: x.median * 1000,
    min: x.min * 1000,
    cpu: (x.user + x.system) * 1000,
  }));
}

/** CPU ms (user + system) used so far by this process's waited-for children (Linux), or null. */
function childrenCpuMs() {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return ((Number(f[13]) + Number(f[14])) * 1000) / 100; // cutime + cstime, in USER_HZ (100)
  } catch {
    return null;
  }
}

/** Rounds of every command once (interleaved), so a load spike hits every command alike. */
function withLoop(env) {
  const times = cases.map(() => []);
  const cpu = cases.map(() => 0);
  let cpuKnown = childrenCpuMs() !== null;
  for (let i = 0; i < RUNS + 3; i++) {
    cases.forEach(([, argv], c) => {
      const c0 = childrenCpuMs();
      const t0 = process.hrtime.bigint();
      spawnSync(node, argv, { env, stdio: 'ignore', timeout: 30_000 });
      const t = Number(process.hrtime.bigint() - t0) / 1e6;
      const c1 = childrenCpuMs();
      if (i < 3) return;
      times[c].push(t);
      if (c0 === null || c1 === null) cpuKnown = false;
      else cpu[c] += c1 - c0;
    });
  }
  return times.map((ts, c) => {
    ts.sort((a, b) => a - b);
    const mean = ts.reduce((s, x) => s + x, 0) / ts.length;
    const stddev = Math.sqrt(ts.reduce((s, x) => s + (x - mean) ** 2, 0) / ts.length);
    return { mean, stddev, median: ts[Math.floor(ts.length / 2)], min: ts[0], cpu: cpuKnown ? cpu[c] / RUNS : null };
  });
}

/** The table rows of one measured set: each command against the reference (the first case). */
function rowsOf(results) {
  const base = results[0];
  return cases.map(([label, , target], i) => {
    const r = results[i];
    const ratio = r.median / base.median;
    const cpuRatio = r.cpu !== null && base.cpu ? r.cpu / base.cpu : null;
    return [
      `\`${label}\``,
      `${fmt(r.median, 1)}`,
      `${fmt(r.mean, 1)} ± ${fmt(r.stddev, 1)}`,
      `${fmt(r.min, 1)}`,
      r.cpu !== null ? fmt(r.cpu, 1) : '–',
      target === null ? '1' : `${fmt(ratio, 2)}×`,
      cpuRatio === null ? '–' : target === null ? '1' : `${fmt(cpuRatio, 2)}×`,
      target === null ? 'reference' : `≤ ${target}×`,
      target === null ? '' : ratio <= target ? 'met' : 'MISSED',
    ];
  });
}

const HEAD = ['command', 'median ms', 'mean ± σ ms', 'min ms', 'CPU ms', '× node -e 0', '× (CPU)', 'target', 'verdict'];

try {
  for (const c of cases) check(c);
  const tool = hasHyperfine() ? 'hyperfine' : 'loop';
  const measure = (e) => (tool === 'hyperfine' ? withHyperfine(e) : withLoop(e));
  process.stderr.write(`bench: CLI start, ${cases.length} commands × ${RUNS} runs (${tool})…\n`);
  const rows = rowsOf(measure(env));
  const rowsAsSet = envAsSet === undefined ? undefined : rowsOf(measure(envAsSet));
  const loadavg = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');
  let md = `${machineLine()} Load average at the end of the run: ${loadavg}.\n\n`;
  md += `Each command runs ${RUNS} times after 3 warm-up runs (${tool === 'hyperfine' ? '`hyperfine -N`' : 'rounds of `spawnSync`, every command once per round, CPU from the children times of /proc/self/stat'}), `;
  md += `all in one run with \`node -e 0\` as the reference; \`next\` takes and releases a lease of the file registry in a temporary state directory. `;
  md += `The verdict compares medians; **CPU** is user + system time, which a busy machine disturbs less than the wall clock. `;
  if (extraCa !== undefined)
    md += `This machine sets \`NODE_EXTRA_CA_CERTS\` (${extraCa}), which costs every Node start about 40 ms of CPU reading certificates, TLS or not: the first table, which carries the verdicts, runs every command and the reference without it; the second shows the machine as it is set up. `;
  md += `The bin (\`packages/server/src/bin.cts\`, CommonJS) runs \`decode\`, \`layout\`, \`key\` and \`public\` from one CommonJS bundle, \`dist/cli-bundle/pure.cjs\`, and \`next\` from another, \`offline.cjs\`, whose registry drivers require their npm clients only when that registry is opened (two files a start: the bin, which the build bundles with its launch and output modules, and one bundle; no ES module loader, which on Node 20 is most of a cold start). \`npm run build\` makes both with esbuild (\`scripts/bundle-cli.mjs\`); only Flurry's own packages are bundled, and the bin uses a bundle only while it is at least as new as the compiled packages (\`cli/launch.cts\`), compiled from V8's code cache (Node's compile cache on Node ≥ 22.1; before that a cache file beside the bundle, written by the first run). Output goes straight to the file descriptors (\`cli/fd-output.cts\`), so no command makes Node's stdout stream unless a pipe is full. \`cold-start.test.ts\` pins what each command loads, bundled and not. The codecs build their digit tables on first use, and the public-ID tables are built in plain loops. \`public\` pays for loading \`node:crypto\` (its HKDF-SHA-256), 3 to 5 ms; a plain-JavaScript HKDF was tried and was slower cold. \`next\` spends its time beyond the reference in the file registry's durable lease protocol (the directory check at open, the flushed writes of acquire and release), whose steps it runs as direct calls (\`fileIo: 'sync'\`, granted on a local disk only) instead of about a hundred thread-pool round trips; it loads none of \`node:crypto\`, \`node:worker_threads\`, \`node:fs/promises\` or \`perf_hooks\` (tokens from the kernel's random device, the monotonic clock from \`process.hrtime\`, \`worker_threads\` answered as the main thread in the bundle).\n\n`;
  if (rowsAsSet !== undefined) md += `Without \`NODE_EXTRA_CA_CERTS\` (the verdicts):\n\n`;
  md += table(HEAD, rows);
  if (rowsAsSet !== undefined)
    md +=
      `\n\nAs this machine is set up (\`NODE_EXTRA_CA_CERTS\` kept, for every command and the reference):\n\n` +
      table(HEAD, rowsAsSet);
  console.log(md);
  writeSection('CLI start', md);
  console.error('\nwrote docs/benchmarks.md (section "CLI start")');
} finally {
  rmSync(state, { recursive: true, force: true });
}
