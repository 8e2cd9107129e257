import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../test-support.js';
import { BUNDLE_ENTRY, BUNDLED_COMMANDS, chooseEntry } from './launch.js';
import { OFFLINE_COMMANDS } from './offline.js';

/** A packages/ tree with the server's bundle and the build info of three packages, at chosen times (s). */
function tree(dir: string, times: { bundle?: number; server?: number; coordination?: number; core?: number }): string {
  const dist = path.join(dir, 'packages', 'server', 'dist');
  for (const p of ['server', 'coordination', 'core'] as const) {
    mkdirSync(path.join(dir, 'packages', p, 'dist'), { recursive: true });
    const t = times[p];
    if (t !== undefined) {
      const f = path.join(dir, 'packages', p, 'dist', '.tsbuildinfo');
      writeFileSync(f, '{}');
      utimesSync(f, t, t);
    }
  }
  if (times.bundle !== undefined) {
    const f = path.join(dist, BUNDLE_ENTRY);
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, '');
    utimesSync(f, times.bundle, times.bundle);
  }
  return dist;
}

test('GIVEN the bundle and the dispatcher THEN the bin bundles exactly the offline commands', () => {
  assert.deepEqual([...BUNDLED_COMMANDS].sort(), Object.keys(OFFLINE_COMMANDS).sort());
});

test('GIVEN a bundle at least as new as every package build THEN offline commands run from it; other commands never do', () => {
  const dir = tempDir('launch');
  try {
    const dist = tree(dir, { bundle: 2000, server: 1000, coordination: 2000, core: 1000 });
    for (const c of BUNDLED_COMMANDS) assert.equal(chooseEntry(dist, c), 'bundle', c);
    for (const c of ['serve', 'status', 'sql', 'range', 'help', '--help', 'nope', undefined])
      assert.equal(chooseEntry(dist, c), 'main', String(c));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN a package compiled after the bundle (tsc -b without npm run build) THEN the bin runs the compiled modules, never old code', () => {
  for (const p of ['server', 'coordination', 'core'] as const) {
    const dir = tempDir('launch-stale');
    try {
      const dist = tree(dir, { bundle: 2000, server: 1000, coordination: 1000, core: 1000, [p]: 2001 });
      assert.equal(chooseEntry(dist, 'decode'), 'main', `${p} newer than the bundle`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('GIVEN no bundle (esbuild not installed) THEN main; GIVEN no build info (an installed package) THEN the bundle', () => {
  const dir = tempDir('launch-missing');
  try {
    assert.equal(chooseEntry(tree(dir, { server: 1000, coordination: 1000, core: 1000 }), 'decode'), 'main');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const dir2 = tempDir('launch-installed');
  try {
    assert.equal(chooseEntry(tree(dir2, { bundle: 1000 }), 'decode'), 'bundle');
  } finally {
    rmSync(dir2, { recursive: true, force: true });
  }
});
