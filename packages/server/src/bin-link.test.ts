import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('GIVEN npm run build THEN node_modules/.bin/flurry is a relative link to the server bin and `flurry --help` exits 0', () => {
  const link = path.join(root, 'node_modules', '.bin', 'flurry');
  assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a symlink (made by scripts/link-bin.mjs after the build)`);
  assert.ok(!path.isAbsolute(readlinkSync(link)), 'the link is relative, so the clone can move');
  const r = spawnSync(link, ['--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, `flurry --help: ${r.stderr}`);
  assert.match(r.stdout, /^Usage: flurry <command>/);
});
