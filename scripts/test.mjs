#!/usr/bin/env node
// Runs every package's compiled tests (`packages/*/dist/**/*.test.js`) with Node's test
// runner, then the short torture profile when it exists. Before the tests, fail fast on
// lint (`eslint`) and formatting (`prettier --check`), and check that every public export
// has a TSDoc @example and that the sources import no module back (dependency-cruiser).
// `npm test` calls this after the build; pass package names to narrow the run (lint and
// format then cover those packages only; the TSDoc, docs and cycle checks and torture are
// skipped): `node scripts/test.mjs core client`. `--no-lint` skips lint and format,
// `--no-torture` skips torture.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const all = ['core', 'coordination', 'segments', 'server', 'client'];
const args = process.argv.slice(2);
// `--results <file>` also writes one JSON line per test with its file (scripts/file-reporter.mjs;
// scripts/test-repeat.mjs reads it).
const resultsAt = args.indexOf('--results');
const resultsFile = resultsAt >= 0 ? args[resultsAt + 1] : undefined;
const only = args.filter((a, i) => !a.startsWith('--') && !(resultsAt >= 0 && i === resultsAt + 1));
const pkgs = (only.length ? only : all).map((p) => path.join(root, 'packages', p, 'dist')).filter((d) => existsSync(d));

const run = (cmd, argv) => spawnSync(cmd, argv, { stdio: 'inherit', cwd: root, env: { ...process.env } }).status ?? 1;

// Lint and formatting first: cheap to fix, so fail before the long run.
if (!args.includes('--no-lint')) {
  const targets = only.length ? only.map((p) => path.join('packages', p)) : null;
  const bin = (pkg, file) => path.join(root, 'node_modules', pkg, 'bin', file);
  if (run(process.execPath, [bin('eslint', 'eslint.js'), ...(targets ?? ['packages'])]) !== 0) {
    console.error('flurry test: eslint reports errors (above); fix them, then `npm run lint` to check again');
    process.exit(1);
  }
  if (run(process.execPath, [bin('prettier', 'prettier.cjs'), '--check', ...(targets ?? ['.'])]) !== 0) {
    console.error('flurry test: files are not formatted (above); run `npm run format` to format them');
    process.exit(1);
  }
}

// Every public export documents itself with an example (fast: reads the sources).
if (!only.length && run(process.execPath, [path.join(root, 'scripts', 'check-tsdoc.mjs')]) !== 0) process.exit(1);
// The samples in README.md and docs/*.md marked runnable match the code (scripts/check-docs.mjs).
if (!only.length && run(process.execPath, [path.join(root, 'scripts', 'check-docs.mjs')]) !== 0) process.exit(1);
// No import cycle among packages/*/src, type-only imports included (dependency-cruiser's no-circular rule,
// .dependency-cruiser.cjs).
if (
  !only.length &&
  run(process.execPath, [
    path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'),
    '--config',
    path.join(root, '.dependency-cruiser.cjs'),
    'packages',
  ]) !== 0
) {
  console.error('flurry test: import cycles (above); move the shared piece to the module it belongs to');
  process.exit(1);
}
const reporters = resultsFile
  ? [
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/file-reporter.mjs',
      `--test-reporter-destination=${resultsFile}`,
    ]
  : [];
let status = run(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=300000', ...reporters, ...pkgs]);
if (
  status === 0 &&
  !only.length &&
  !args.includes('--no-torture') &&
  existsSync(path.join(root, 'scripts', 'torture.mjs'))
) {
  status = run(process.execPath, [path.join(root, 'scripts', 'torture.mjs'), '--profile', 'short']);
}
process.exit(status);
