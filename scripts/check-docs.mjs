#!/usr/bin/env node
// Docs as tests: runs the fenced blocks of README.md and docs/*.md that are marked runnable
// and compares their output with the sample in the doc, so a sample cannot drift from the code.
//
// Markers (an HTML comment on the line just before the opening fence):
// - `<!-- check: cli -->` before a ```sh block. Either every command line starts with `$ `
//   and the lines after it (up to the next `$ `) are its expected output, or the block holds
//   only commands and the expected output of all of them is the next ```text block.
//   Commands run in `sh` with `flurry` (and `npx flurry`) being this repo's built CLI, in a
//   fresh temp directory with a `file:` registry of its own, stdout and stderr together,
//   each bounded by 20 s. `export A=B` lines carry over to the next commands of the block.
//   Output is compared line by line after trimming trailing spaces; `…` in the expected text
//   matches any run of characters (IDs, times), and a trailing `  # comment` (two spaces or
//   more before `#`) in the expected text is ignored.
// - `<!-- check: ts -->` before a ```ts block: the block is transpiled with the repo's
//   TypeScript and run with node inside the repo (so `@flurry/*` imports resolve), bounded
//   by 20 s. A line `expr; // VALUE` whose VALUE is a literal (string, number, bigint,
//   boolean, null) also checks that `expr` equals VALUE.
//
// Usage: node scripts/check-docs.mjs [FILE.md…]   (default: README.md docs/*.md)
// Prints one line per checked block (file:line pass / FAIL with a diff); exits 1 on any failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const TIMEOUT_MS = 20_000;

const args = process.argv.slice(2);
const files = args.length
  ? args.map((f) => path.resolve(f))
  : [
      path.join(root, 'README.md'),
      ...readdirSync(path.join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => path.join(root, 'docs', f)),
    ];

/** Fenced blocks of a Markdown file: { lang, start (1-based line of the fence), body[], marker }. */
function blocks(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const marker = /^<!--\s*check:\s*(\w+)\s*-->\s*$/.exec(lines[start - 1] ?? '');
    out.push({ lang: open[1], start: start + 1, body, marker: marker?.[1] });
  }
  return out;
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Whether an actual line matches an expected line with `…` wildcards. */
const lineMatches = (expected, actual) =>
  expected.includes('…')
    ? new RegExp(`^${expected.split('…').map(escapeRe).join('.*?')}$`).test(actual)
    : expected === actual;

function compare(expected, actual) {
  const exp = expected.map((l) => l.replace(/\s{2,}#.*$/, '').trimEnd());
  const act = actual.map((l) => l.trimEnd());
  while (exp.length && exp.at(-1) === '') exp.pop();
  while (act.length && act.at(-1) === '') act.pop();
  const diff = [];
  for (let i = 0; i < Math.max(exp.length, act.length); i++) {
    if (i < exp.length && i < act.length && lineMatches(exp[i], act[i])) continue;
    if (i < exp.length) diff.push(`    - ${exp[i]}`);
    if (i < act.length) diff.push(`    + ${act[i]}`);
  }
  return diff;
}

let binDir;
function shellEnv(dir) {
  if (!binDir) {
    binDir = mkdtempSync(path.join(os.tmpdir(), 'flurry-docs-bin-'));
    const shim = path.join(binDir, 'flurry');
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`, { mode: 0o755 });
    writeFileSync(path.join(binDir, 'npx'), `#!/bin/sh\n[ "$1" = flurry ] && shift\nexec "${shim}" "$@"\n`, {
      mode: 0o755,
    });
  }
  const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH}`, HOME: dir };
  for (const k of Object.keys(env)) if (k.startsWith('FLURRY_')) delete env[k];
  env.XDG_STATE_HOME = path.join(dir, 'state');
  env.FLURRY_REGISTRY = `file:${path.join(dir, 'registry')}`;
  env.NO_COLOR = '1';
  env.TZ = 'UTC';
  return env;
}

function runCli(block, nextBlock) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flurry-docs-'));
  try {
    const env = shellEnv(dir);
    const prompt = block.body.some((l) => l.startsWith('$ '));
    /** [command, expected lines][] */
    const steps = [];
    if (prompt) {
      for (const line of block.body) {
        if (line.startsWith('$ ')) steps.push([line.slice(2), []]);
        else if (steps.length) steps.at(-1)[1].push(line);
      }
    } else {
      if (!nextBlock || nextBlock.lang !== 'text') return ['no ```text block with the expected output follows'];
      const cmds = block.body.filter((l) => l.trim() && !l.trim().startsWith('#'));
      cmds.forEach((c, i) => steps.push([c, i === cmds.length - 1 ? nextBlock.body : null]));
    }
    const exports = [];
    const expected = [];
    const actual = [];
    for (const [cmd, exp] of steps) {
      if (/^export\s/.test(cmd)) {
        exports.push(cmd.replace(/\s{2,}#.*$/, ''));
        if (exp?.length) expected.push(...exp);
        continue;
      }
      const script = [...exports, `${cmd.replace(/\s{2,}#.*$/, '')} 2>&1`].join('\n');
      const r = spawnSync('sh', ['-c', script], { cwd: dir, env, encoding: 'utf8', timeout: TIMEOUT_MS });
      if (r.error) return [`\`${cmd}\`: ${r.error.code === 'ETIMEDOUT' ? 'timed out after 20 s' : r.error.message}`];
      const out = r.stdout.replace(/\n$/, '');
      if (exp === null) continue; // an earlier command of a block whose output is the text block
      expected.push(...exp);
      if (out !== '') actual.push(...out.split('\n'));
    }
    return compare(expected, actual);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const LITERAL = /^('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?\d[\d_]*n?|-?\d+\.\d+|true|false|null|undefined)$/;

function runTs(block, file) {
  const ts = createRequire(path.join(root, 'package.json'))('typescript');
  const lines = block.body.map((line, i) => {
    const m = /^(?!\s*(?:import|export|const|let|var|return)\b)(\s*)(.+?);?\s*\/\/\s*(?:→\s*)?(.+?)\s*$/.exec(line);
    if (!m || !LITERAL.test(m[3])) return line;
    return `${m[1]}__check(${block.start + i + 1}, (${m[2]}), (${m[3]}));`;
  });
  const source = [
    "import { isDeepStrictEqual as __eq, inspect as __inspect } from 'node:util';",
    'const __failures: string[] = [];',
    'function __check(line: number, actual: unknown, expected: unknown) {',
    '  if (!__eq(actual, expected)) __failures.push(`line ${line}: expected ${__inspect(expected)}, got ${__inspect(actual)}`);',
    '}',
    ...lines,
    'if (__failures.length) { console.error(__failures.join("\\n")); process.exit(1); }',
  ].join('\n');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: `${path.basename(file)}.ts`,
  }).outputText;
  const tmpRoot = path.join(root, 'node_modules', '.check-docs');
  mkdirSync(tmpRoot, { recursive: true });
  const dir = mkdtempSync(path.join(tmpRoot, 'ts-'));
  try {
    const script = path.join(dir, 'snippet.mjs');
    writeFileSync(script, js);
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('FLURRY_')) delete env[k];
    env.TZ = 'UTC';
    const r = spawnSync(process.execPath, [script], { cwd: dir, env, encoding: 'utf8', timeout: TIMEOUT_MS });
    if (r.error) return [r.error.code === 'ETIMEDOUT' ? 'timed out after 20 s' : r.error.message];
    if (r.status !== 0)
      return `${r.stderr}${r.stdout}`
        .trimEnd()
        .split('\n')
        .map((l) => `    ${l}`);
    return [];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let checked = 0;
let failed = 0;
for (const file of files) {
  const rel = path.relative(root, file) || file;
  const all = blocks(readFileSync(file, 'utf8'));
  all.forEach((block, i) => {
    if (!block.marker) return;
    let diff;
    if (block.marker === 'cli' && block.lang === 'sh') diff = runCli(block, all[i + 1]);
    else if (block.marker === 'ts' && block.lang === 'ts') diff = runTs(block, file);
    else diff = [`marker "check: ${block.marker}" does not fit a \`\`\`${block.lang} block (cli: sh, ts: ts)`];
    checked++;
    if (diff.length) {
      failed++;
      console.log(`${rel}:${block.start}: FAIL\n${diff.join('\n')}`);
    } else console.log(`${rel}:${block.start}: pass`);
  });
}
if (binDir) rmSync(binDir, { recursive: true, force: true });
console.log(`check-docs: ${checked} blocks checked, ${failed} failed`);
process.exit(failed ? 1 : 0);
