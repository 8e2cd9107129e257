#!/usr/bin/env node
// The torture suite: tries to make Flurry issue a duplicate ID with real processes, real
// engines (ZooKeeper, etcd, Redis), real clocks stepped by libfaketime, SIGKILL/SIGSTOP
// and a fuzzed service, then prints one table and writes torture-report-<profile>.json.
// Exits 1 when any scenario fails (a duplicate fails CI).
//
//   node scripts/torture.mjs --profile short|full [--only fleet,clock,…] [--backends file,redis,…]
//
// Scenarios live in torture/scenarios/*.mjs; see docs/reliability.md.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { profiles } from '../torture/profiles.mjs';
import { Row, textTable, writeJson, writeDocsSection } from '../torture/lib/report.mjs';
import { Engines, ALL_BACKENDS } from '../torture/lib/backends.mjs';
import { killAll, liveCount } from '../torture/lib/procs.mjs';
import { retryLiveness } from '../torture/lib/retry.mjs';
import { runScenarioModule } from '../torture/lib/run-scenario.mjs';
import { root, dist, removeTempDirs } from '../torture/lib/util.mjs';

const SCENARIOS = [
  'selfcheck',
  'fleet',
  'threads',
  'clock',
  'restart',
  'crash',
  'partition',
  'service',
  'engine',
  'segments',
  'workers',
];

function parseArgs(argv) {
  const out = { profile: 'short', only: null, backends: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v;
    };
    if (a.startsWith('--profile')) out.profile = val();
    else if (a.startsWith('--only')) out.only = val().split(',').filter(Boolean);
    else if (a.startsWith('--backends')) out.backends = val().split(',').filter(Boolean);
    else if (a === '--help' || a === '-h') usage();
    else usage(`unknown argument "${a}"`);
  }
  if (!profiles[out.profile]) usage(`unknown profile "${out.profile}"`);
  for (const s of out.only ?? []) if (!SCENARIOS.includes(s)) usage(`unknown scenario "${s}"`);
  for (const b of out.backends ?? []) if (!ALL_BACKENDS.includes(b)) usage(`unknown backend "${b}"`);
  return out;
}

function usage(err) {
  const text = `usage: node scripts/torture.mjs --profile short|full [--only ${SCENARIOS.join(',')}] [--backends ${ALL_BACKENDS.join(',')}]`;
  if (err) {
    process.stderr.write(`torture: ${err}\n${text}\n`);
    process.exit(2);
  }
  process.stdout.write(text + '\n');
  process.exit(0);
}

const args = parseArgs(process.argv.slice(2));
const P = profiles[args.profile];
const t0 = performance.now();
const startedAt = new Date().toISOString();
const log = (msg) =>
  process.stderr.write(`[torture ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);

for (const [what, file] of [
  ['core', dist.core],
  ['coordination', dist.coordination],
]) {
  if (!existsSync(file)) {
    log(`the ${what} package is not built (${path.relative(root, file)} missing): run npm run build first`);
    process.exit(2);
  }
}

const engines = new Engines(log);
const backends = args.backends ?? ALL_BACKENDS;
// `wants(backend)` narrows a scenario to some of its rows (a re-run); scenarios skip the rest.
const ctx = { profile: args.profile, P, backends, engines, log, Row, wants: () => true };
const rows = [];

process.on('uncaughtException', (e) => {
  log(`uncaught error: ${e?.stack ?? e}`);
  killAll();
  process.exit(1);
});

// Engines take seconds to start (ZooKeeper is a JVM): start the ones needed in the background.
for (const b of backends)
  if (b !== 'file') engines.engine(b.startsWith('zookeeper') ? 'zookeeper' : b).catch(() => undefined);

/** Runs one scenario (narrowed to the rows `wants` accepts) and returns its rows. */
async function runScenario(name, wants) {
  let mod;
  try {
    mod = await import(`../torture/scenarios/${name}.mjs`);
  } catch (e) {
    const r = new Row(name, 'all');
    r.fail(`scenario did not load: ${e?.stack ?? e}`);
    return [r];
  }
  log(`scenario ${name}: ${mod.title}`);
  return runScenarioModule(name, mod, { ...ctx, wants }, { timeoutMs: P.scenarioTimeoutMs, cleanup: killAll });
}

function logRow(r, prefix = '') {
  const all = [...(r.cutShort ? [r.cutShort] : []), ...r.failures, ...r.livenessMisses.map((m) => `liveness: ${m}`)];
  const shown = all.slice(0, 6).map((f) => f.slice(0, 600));
  if (all.length > shown.length) shown.push(`… and ${all.length - shown.length} more (see the JSON report)`);
  log(
    `${prefix}${r.scenario}/${r.backend}: ${r.cutShort ? 'NOT RUN' : r.pass ? 'pass' : r.safe ? 'FAIL (liveness)' : 'FAIL'} (${r.idsChecked.toLocaleString('en-US')} IDs)${shown.length ? '\n    - ' + shown.join('\n    - ') : ''}${r.notes.length ? '\n    · ' + r.notes.slice(0, 10).join('\n    · ') : ''}`,
  );
}

for (const name of args.only ?? SCENARIOS) {
  const produced = await runScenario(name, () => true);
  for (const r of produced) logRow(r);
  // Safety failures are final; a row that missed only a liveness bound runs once more.
  const { rows: final, retried } = await retryLiveness(produced, (want) => {
    log(`scenario ${name}: liveness missed on ${[...want].join(', ')}: running those rows once more`);
    return runScenario(name, (backend) => want.has(backend));
  });
  for (const r of final) if (r.attempts.length) logRow(r, 're-run ');
  if (retried.length) log(`scenario ${name}: re-ran ${retried.join(', ')}`);
  rows.push(...final);
}

await engines.stopAll();
killAll();
removeTempDirs();
const durationMs = performance.now() - t0;
const { file, doc } = writeJson(args.profile, rows, { startedAt, durationMs });
// A complete full run is what docs/reliability.md shows.
if (args.profile === 'full' && !args.only && !args.backends && writeDocsSection(doc))
  log('docs/reliability.md: latest full run updated');
process.stdout.write(
  `\nFlurry torture, profile ${args.profile}: ${(durationMs / 1000).toFixed(1)} s\n\n${textTable(rows)}\n\n`,
);
const failed = rows.filter((r) => !r.pass);
process.stdout.write(
  failed.length
    ? `${failed.length} scenario row(s) FAILED (see ${path.relative(root, file)})\n`
    : `all ${rows.length} rows passed; report: ${path.relative(root, file)}\n`,
);
if (liveCount()) log(`warning: ${liveCount()} child process(es) still alive at the end (killed)`);
process.exit(failed.length ? 1 : 0);
