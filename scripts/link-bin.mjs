#!/usr/bin/env node
// Post-build step: links the server package's bin (`flurry`) into node_modules/.bin so that
// `npx flurry …` works in a clone right after `npm run build` (npm links workspace bins at
// install time, before dist/ exists, and skips them then). Idempotent; a relative symlink;
// the target is made executable.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = path.join(root, 'packages', 'server');
const { bin } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const binDir = path.join(root, 'node_modules', '.bin');
mkdirSync(binDir, { recursive: true });

for (const [name, rel] of Object.entries(typeof bin === 'string' ? { flurry: bin } : (bin ?? {}))) {
  const target = path.join(pkgDir, rel);
  if (!existsSync(target)) {
    console.error(`link-bin: ${path.relative(root, target)} is missing; run \`npm run build\` first`);
    process.exit(1);
  }
  chmodSync(target, 0o755);
  const link = path.join(binDir, name);
  const want = path.relative(binDir, target);
  let current;
  try {
    if (lstatSync(link).isSymbolicLink()) current = readlinkSync(link);
  } catch {
    /* no link yet */
  }
  if (current !== undefined && path.resolve(binDir, current) === path.resolve(binDir, want) && existsSync(link))
    continue;
  try {
    unlinkSync(link);
  } catch {
    /* nothing to replace */
  }
  symlinkSync(want, link);
}
