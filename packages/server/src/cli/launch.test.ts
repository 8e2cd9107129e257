import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../test-support.js';
import { BUNDLE_FILES, CJS_COMMANDS, ESM_COMMANDS, chooseEntry } from './launch.cjs';
import { OFFLINE_COMMANDS } from './offline.js';
import { PURE_COMMANDS } from './pure.js';

/** A packages/ tree with the server's bundles and the build info of three packages, at chosen times (s). */
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
    for (const rel of Object.values(BUNDLE_FILES)) {
      const f = path.join(dist, rel);
      mkdirSync(path.dirname(f), { recursive: true });
      writeFileSync(f, '');
      utimesSync(f, times.bundle, times.bundle);
    }
  }
  return dist;
}

test('GIVEN the bundles and the dispatcher THEN the bin sends exactly the pure commands to the CommonJS bundle and the other offline ones to the ES module bundle', () => {
  assert.deepEqual([...CJS_COMMANDS].sort(), Object.keys(PURE_COMMANDS).sort());
  assert.deepEqual([...CJS_COMMANDS, ...ESM_COMMANDS].sort(), Object.keys(OFFLINE_COMMANDS).sort());
});

test('GIVEN a bundle at least as new as every package build THEN offline commands run from it; other commands never do', () => {
  const dir = tempDir('launch');
  try {
    const dist = tree(dir, { bundle: 2000, server: 1000, coordination: 2000, core: 1000 });
    for (const c of CJS_COMMANDS) assert.equal(chooseEntry(dist, c), 'cjs', c);
    for (const c of ESM_COMMANDS) assert.equal(chooseEntry(dist, c), 'esm', c);
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
    assert.equal(chooseEntry(tree(dir2, { bundle: 1000 }), 'decode'), 'cjs');
    assert.equal(chooseEntry(tree(dir2, { bundle: 1000 }), 'next'), 'esm');
  } finally {
    rmSync(dir2, { recursive: true, force: true });
  }
});
