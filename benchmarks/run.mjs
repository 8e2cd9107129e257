#!/usr/bin/env node
// `npm run bench`: Flurry's generator against its npm peers, each subject in its own
// process, all in one run. Prints the tables and rewrites the "Generator" section of
// docs/benchmarks.md. Then runs the public-ID benchmark when present, UUIDv7's
// (benchmarks/uuids.mjs, section "UUIDv7"), the CLI start-up benchmark and segment mode's (benchmarks/segments.mjs, section "Segments").
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { subjects } from './subjects.mjs';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const here = path.join(root, 'benchmarks');
const TWITTER_CAP = 4_096_000;

function runSubject(name, mode, limitMs = 10_000) {
  const r = spawnSync(process.execPath, [path.join(here, 'subject.mjs'), name, mode, String(limitMs)], {
    encoding: 'utf8',
    timeout: limitMs + 20_000,
    killSignal: 'SIGKILL',
  });
  if (r.error || r.status === null)
    return {
      name,
      mode,
      error: `hung: killed after ${Math.round((limitMs + 20_000) / 1000)} s (blocked waiting for the clock)`,
    };
  const line = r.stdout.trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    return { name, mode, error: (r.stderr || 'no output').trim().split('\n').pop().slice(0, 100) };
  }
}

const names = Object.keys(subjects);
const results = {};
for (const name of names) {
  process.stderr.write(`bench: ${name}…\n`);
  results[name] = {
    rate: runSubject(name, 'rate'),
    cost: runSubject(name, 'cost'),
    stall: runSubject(name, 'stall', 8_000),
    back: runSubject(name, 'back', 8_000),
  };
}

const flurryRate = results['flurry (twitter, wait)'].rate.idsPerSecond;
const faults = (r) =>
  r.error && !r.generated
    ? r.error
    : `${fmt(r.generated)} IDs: ${fmt(r.duplicates)} dup, ${fmt(r.decreasing)} decr${r.error ? ` (${r.error})` : ''}`;

const rows = names.map((name) => {
  const r = results[name];
  const rate = r.rate.idsPerSecond;
  return [
    name,
    (rate ? fmt(rate) : r.rate.error) + (r.rate.failedCalls ? ` (${fmt(r.rate.failedCalls)} calls threw)` : ''),
    rate && flurryRate ? `${fmt(rate / flurryRate, 2)}×` : '–',
    r.cost.nsPerId ? fmt(r.cost.nsPerId, 1) : '–',
    faults(r.stall),
    faults(r.back),
    subjects[name].note ?? '',
  ];
});

const wait = results['flurry (twitter, wait)'];
const lifted = results['flurry (22-bit sequence)'];
const borrow = results['flurry (twitter, borrow)'];
const targets = [
  [
    'twitter layout, sustained rate vs its cap of 4,096,000 IDs/s',
    '≥ 99%',
    `${fmt((wait.rate.idsPerSecond / TWITTER_CAP) * 100, 1)}%`,
    wait.rate.idsPerSecond >= 0.99 * TWITTER_CAP && wait.stall.duplicates === 0 && wait.back.duplicates === 0,
  ],
  [
    'one next(), cap lifted (22-bit sequence)',
    '≤ 60 ns',
    `${fmt(lifted.cost.nsPerId, 1)} ns`,
    lifted.cost.nsPerId <= 60,
  ],
  ['one next(), cap lifted (borrow)', '≤ 60 ns', `${fmt(borrow.cost.nsPerId, 1)} ns`, borrow.cost.nsPerId <= 60],
  [
    "of which one Date.now() (this machine's clock read, measured in the same process)",
    'reference',
    `${fmt(lifted.cost.clockNs, 1)} ns`,
    true,
  ],
  [
    'one next(), cap lifted, beyond its clock read',
    '≤ 35 ns (60 ns less a typical 25 ns Date.now())',
    `${fmt(lifted.cost.nsPerId - lifted.cost.clockNs, 1)} ns`,
    lifted.cost.nsPerId - lifted.cost.clockNs <= 35,
  ],
  [
    'fill() of 4,096, cap lifted (21-bit sequence)',
    '≤ 20 ns/ID',
    `${fmt(lifted.cost.batchNsPerId, 1)} ns`,
    lifted.cost.batchNsPerId <= 20,
  ],
  [
    'duplicates, all Flurry configurations, stalled and stepped-back clock',
    '0',
    String(
      ['flurry (twitter, wait)', 'flurry (twitter, borrow)', 'flurry (22-bit sequence)'].reduce(
        (s, n) => s + (results[n].stall.duplicates ?? 0) + (results[n].back.duplicates ?? 0),
        0,
      ),
    ),
    true,
  ],
].map(([what, target, got, ok]) => [what, target, got, ok ? 'met' : 'MISSED']);

let md = `${machineLine()} Each subject runs in its own process (\`benchmarks/subject.mjs\`).\n\n`;
md += `**IDs per second** is one generator called in a tight loop for 1 s; **ns/call** is the best of 5 rounds of 2,000,000 calls. `;
md += `**Stalled clock**: \`Date.now()\` (and \`performance.now()\`) frozen for 1,000,000 IDs (at most 8 s); **clock back 10 ms**: \`Date.now()\` steps back 10 ms after 500,000 of 1,000,000 IDs. `;
md += `A duplicate is an ID seen before; a decreasing step is an ID below its predecessor in the subject's own order.\n\n`;
md += table(['subject', 'IDs/s', 'vs Flurry twitter', 'ns/call', 'stalled clock', 'clock back 10 ms', 'note'], rows);
md += '\n\n### Targets (issue 2)\n\n' + table(['what', 'target', 'measured', 'verdict'], targets);

const pub = path.join(here, 'public-ids.mjs');
if (existsSync(pub)) {
  const r = spawnSync(process.execPath, [pub], { encoding: 'utf8', timeout: 120_000 });
  if (r.status === 0 && r.stdout.trim()) md += '\n\n### Public IDs (issue 7)\n\n' + r.stdout.trim();
  else md += `\n\n### Public IDs (issue 7)\n\nbenchmark failed: ${(r.stderr || '').trim().split('\n').pop()}`;
}

console.log(md);
writeSection('Generator', md);
console.error('\nwrote docs/benchmarks.md (section "Generator")');

// UUIDv7 (issue 26): Flurry's UuidGenerator against npm uuid v7, ulid and crypto.randomUUID; its own section.
const uuids = spawnSync(process.execPath, [path.join(here, 'uuids.mjs')], { stdio: 'inherit', timeout: 10 * 60_000 });
if (uuids.status !== 0) console.error(`bench: uuids.mjs failed (exit ${uuids.status})`);

// CLI start-up against `node -e 0` (issue 12): its own section of docs/benchmarks.md.
const cli = spawnSync(process.execPath, [path.join(here, 'cli-start.mjs')], { stdio: 'inherit', timeout: 30 * 60_000 });
if (cli.status !== 0) console.error(`bench: cli-start.mjs failed (exit ${cli.status})`);

// Segment mode (issue 14): in-process, sustained on PostgreSQL, HTTP vs /v1/ids/next; its own section.
const seg = spawnSync(process.execPath, [path.join(here, 'segments.mjs')], { stdio: 'inherit', timeout: 15 * 60_000 });
if (seg.status !== 0) console.error(`bench: segments.mjs missed a target or failed (exit ${seg.status})`);
