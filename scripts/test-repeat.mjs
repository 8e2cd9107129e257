#!/usr/bin/env node
// `npm run test:repeat -- N [--only <pkg>]… [--no-torture] [--out <file.md>]`: runs the whole
// suite N times, each from a clean state (build output, tsbuildinfo, .flurry-tmp and torture
// reports removed, then `npm run build`; each run gets its own empty TMPDIR outside the repository, removed after),
// and prints a table of every test file and every torture row against its pass count.
// Test files are read from the test runner's per-test results (scripts/test.mjs --results), torture
// rows from torture-report-short.json. `--only core` (repeatable, or `--only core,client`)
// narrows the packages; `--no-torture` skips torture; `--out` also writes the table as markdown.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const usage = 'usage: npm run test:repeat -- N [--only <pkg>]… [--no-torture] [--out <file.md>]';

const argv = process.argv.slice(2);
let n;
const only = [];
let torture = true;
let out;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--only') only.push(...(argv[++i] ?? '').split(',').filter(Boolean));
  else if (a.startsWith('--only=')) only.push(...a.slice(7).split(',').filter(Boolean));
  else if (a === '--no-torture') torture = false;
  else if (a === '--out') out = argv[++i];
  else if (a.startsWith('--out=')) out = a.slice(6);
  else if (/^[0-9]+$/.test(a) && n === undefined) n = Number(a);
  else {
    console.error(`test:repeat: unknown argument ${JSON.stringify(a)}; ${usage}`);
    process.exit(2);
  }
}
if (!Number.isInteger(n) || n < 1 || n > 1000) {
  console.error(`test:repeat: N must be an integer from 1 to 1000; ${usage}`);
  process.exit(2);
}
const pkgs = readdirSync(path.join(root, 'packages'));
for (const p of only) {
  if (!pkgs.includes(p)) {
    console.error(`test:repeat: --only ${p} is not a package; pick from ${pkgs.join(', ')}`);
    process.exit(2);
  }
}
if (out === '') {
  console.error(`test:repeat: --out needs a file path; ${usage}`);
  process.exit(2);
}

const work = path.join(root, '.flurry-tmp', 'test-repeat');

function cleanState() {
  for (const p of pkgs) {
    rmSync(path.join(root, 'packages', p, 'dist'), { recursive: true, force: true });
    for (const f of readdirSync(path.join(root, 'packages', p))) {
      if (f.endsWith('.tsbuildinfo')) rmSync(path.join(root, 'packages', p, f), { force: true });
    }
  }
  for (const f of readdirSync(root)) {
    if (/^torture-report.*\.json$/.test(f)) rmSync(path.join(root, f), { force: true });
  }
  for (const f of readdirSync(path.join(root, '.flurry-tmp'), { withFileTypes: true })) {
    if (f.name !== 'test-repeat') rmSync(path.join(root, '.flurry-tmp', f.name), { recursive: true, force: true });
  }
}

/** `name → { pass, runs }` in first-seen order. */
const rows = new Map();
const record = (name, ok) => {
  const r = rows.get(name) ?? { pass: 0, runs: 0 };
  r.runs++;
  if (ok) r.pass++;
  rows.set(name, r);
};

/** scripts/file-reporter.mjs lines → one result per test file (it passes when all its tests pass). */
function parseResults(text) {
  const byFile = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const r = JSON.parse(line);
    const name = path.relative(root, r.file);
    byFile.set(name, (byFile.get(name) ?? true) && r.pass);
  }
  return [...byFile].map(([name, ok]) => ({ name, ok }));
}

const sh = (cmd, args, env) =>
  spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;

mkdirSync(path.join(root, '.flurry-tmp'), { recursive: true });
const started = Date.now();

/** Prints the table of the runs so far (and writes it to --out): after every run, so a run stopped early keeps its results. */
function report(done, final) {
  const header = ['test file or torture row', `passed of ${done}`];
  const lines = [...rows].map(([name, r]) => [name, `${r.pass}/${r.runs}${r.pass < r.runs ? '  FLAKY/FAILING' : ''}`]);
  const width = Math.max(header[0].length, ...lines.map((l) => l[0].length));
  const bad = [...rows.values()].filter((r) => r.pass < r.runs).length;
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  if (final) {
    console.log(`\n${header[0].padEnd(width)}  ${header[1]}`);
    console.log(`${'-'.repeat(width)}  ${'-'.repeat(header[1].length)}`);
    for (const [a, b] of lines) console.log(`${a.padEnd(width)}  ${b}`);
    console.log(`\n${rows.size} rows, ${bad} not passing every run; ${n} run(s) in ${minutes} min`);
  } else {
    console.error(
      `test:repeat: after run ${done} of ${n}: ${rows.size} rows, ${bad} not passing every run so far (${minutes} min)`,
    );
  }
  if (out) {
    const esc = (s) => s.replace(/\|/g, '\\|');
    const md = [
      `# npm run test:repeat -- ${argv.join(' ')}`,
      '',
      `${new Date().toISOString()}, ${done} of ${n} run(s) in ${minutes} min${final ? '' : ' (still running)'}, ${bad} row(s) not passing every run.`,
      '',
      `| ${header[0]} | ${header[1]} |`,
      '| --- | ---: |',
      ...[...rows].map(
        ([name, r]) => `| ${esc(name)} | ${r.pass}/${r.runs}${r.pass < r.runs ? ' **flaky/failing**' : ''} |`,
      ),
      '',
    ].join('\n');
    mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
    writeFileSync(out, md);
    if (final) console.log(`table written to ${out}`);
  }
  return bad;
}

for (let i = 1; i <= n; i++) {
  console.error(`\ntest:repeat: run ${i} of ${n}: clean state, build, test${torture ? ', torture' : ''}`);
  rmSync(work, { recursive: true, force: true });
  cleanState();
  mkdirSync(work, { recursive: true });
  // Outside the repository, as for a user: the packed-install test refuses a project inside it.
  // Open like /tmp (sticky, 1777): PostgreSQL and MariaDB run as their own users beneath it.
  const tmp = mkdtempSync(path.join(tmpdir(), `flurry-test-repeat-${i}-`));
  chmodSync(tmp, 0o1777);
  const env = { TMPDIR: tmp };
  record('(build)', sh('npm', ['run', '--silent', 'build'], env) === 0);
  const results = path.join(work, `run-${i}.jsonl`);
  const status = sh(
    process.execPath,
    [path.join(root, 'scripts', 'test.mjs'), ...only, '--no-torture', '--results', results],
    env,
  );
  const files = existsSync(results) ? parseResults(readFileSync(results, 'utf8')) : [];
  // No file results at all: lint, format or the TSDoc check stopped the run before the tests.
  if (files.length === 0) record('(lint, format, tsdoc)', false);
  else {
    record('(lint, format, tsdoc)', true);
    for (const f of files) record(f.name, f.ok);
    if (status !== 0 && files.every((f) => f.ok)) record('(test runner exit status)', false);
  }
  if (torture) {
    const t = sh(process.execPath, [path.join(root, 'scripts', 'torture.mjs'), '--profile', 'short'], env);
    const report = path.join(root, 'torture-report-short.json');
    if (!existsSync(report)) record('torture (no report written)', false);
    else {
      const doc = JSON.parse(readFileSync(report, 'utf8'));
      for (const r of doc.rows ?? []) record(`torture: ${r.scenario} / ${r.backend}`, r.pass === true);
      if (t !== 0 && (doc.rows ?? []).every((r) => r.pass === true)) record('torture (exit status)', false);
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  if (i < n) report(i, false);
}

const bad = report(n, true);
rmSync(work, { recursive: true, force: true });
process.exit(bad === 0 ? 0 : 1);
