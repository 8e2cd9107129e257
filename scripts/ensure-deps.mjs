#!/usr/bin/env node
// First-run set-up for `npm start` and `npm test` on a fresh clone: installs the npm
// dependencies from the lockfile when node_modules is missing or older than the lockfile.
// (The Debian packages that `npm test`, torture and the benchmarks need are installed by
// scripts/provision.mjs, their npm `pre*` script.)
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const marker = path.join(root, 'node_modules', '.package-lock.json');
const lock = path.join(root, 'package-lock.json');
if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  console.error('flurry: installing npm dependencies (npm ci)…');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
