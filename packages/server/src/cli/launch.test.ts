import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../test-support.js';
import { BUNDLES, chooseEntry, codeCacheFile } from './launch.cjs';
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
    for (const { file } of Object.values(BUNDLES)) {
      const f = path.join(dist, file);
      mkdirSync(path.dirname(f), { recursive: true });
      writeFileSync(f, '');
      utimesSync(f, times.bundle, times.bundle);
    }
  }
  return dist;
}

test('GIVEN the bundles and the dispatcher THEN the bin sends exactly the pure commands to pure.cjs and the other offline ones to offline.cjs', () => {
  assert.deepEqual([...BUNDLES.pure.commands].sort(), Object.keys(PURE_COMMANDS).sort());
  assert.deepEqual(
    [...BUNDLES.pure.commands, ...BUNDLES.offline.commands].sort(),
    Object.keys(OFFLINE_COMMANDS).sort(),
  );
});

test('GIVEN a bundle at least as new as every package build THEN offline commands run from it; other commands never do', () => {
  const dir = tempDir('launch');
  try {
    const dist = tree(dir, { bundle: 2000, server: 1000, coordination: 2000, core: 1000 });
    for (const c of BUNDLES.pure.commands) assert.equal(chooseEntry(dist, c), 'pure', c);
    for (const c of BUNDLES.offline.commands) assert.equal(chooseEntry(dist, c), 'offline', c);
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
    assert.equal(chooseEntry(tree(dir2, { bundle: 1000 }), 'decode'), 'pure');
    assert.equal(chooseEntry(tree(dir2, { bundle: 1000 }), 'next'), 'offline');
  } finally {
    rmSync(dir2, { recursive: true, force: true });
  }
});

test('GIVEN a bundle THEN requireBundle runs it as require() would; on Node without a compile cache it writes a V8 code cache at exit that later starts use, and a changed bundle or a bad cache never runs old code', () => {
  const dir = tempDir('launch-cache');
  try {
    const file = path.join(dir, 'bundle.cjs');
    writeFileSync(path.join(dir, 'dep.cjs'), 'exports.v = 41;\n');
    writeFileSync(file, "exports.v = require('./dep.cjs').v + 1;\nexports.me = module.filename;\n");
    const launch = path.join(path.dirname(fileURLToPath(import.meta.url)), 'launch.cjs');
    const start = (): { v: number; me: string; cached: boolean } => {
      const r = spawnSync(
        process.execPath,
        [
          '-e',
          `const e = require(${JSON.stringify(launch)}).requireBundle(${JSON.stringify(file)});` +
            `console.log(JSON.stringify({ v: e.v, me: e.me, cached: require.cache[${JSON.stringify(file)}]?.exports === e }));`,
        ],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as { v: number; me: string; cached: boolean };
    };
    const caches = (): string[] => readdirSync(dir).filter((f) => f.endsWith('.v8cache'));
    assert.deepEqual(start(), { v: 42, me: file, cached: true });
    if (typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function') {
      assert.deepEqual(caches(), [], "Node's own compile cache serves require(); no cache file beside the bundle");
      return;
    }
    const first = codeCacheFile(file, statSync(file));
    assert.deepEqual(caches(), [path.basename(first)], 'the cache is written at exit, named by mtime and size');
    const written = readFileSync(first);
    utimesSync(first, 1000, 1000);
    assert.equal(start().v, 42);
    assert.equal(statSync(first).mtimeMs, 1_000_000, 'an accepted cache is not written again');
    // A cache V8 rejects (corrupt, or another Node): the bundle still runs, and the cache is made anew.
    const garbage = Buffer.alloc(written.length, 7);
    writeFileSync(first, garbage);
    assert.equal(start().v, 42);
    assert.notDeepEqual(readFileSync(first), garbage, 'a rejected cache is written again');
    utimesSync(first, 1000, 1000);
    assert.equal(start().v, 42);
    assert.equal(statSync(first).mtimeMs, 1_000_000, 'and then accepted');
    // A rebuilt bundle has a cache of its own: its new code runs, never the old cache's.
    writeFileSync(file, 'exports.v = 7;\n');
    assert.equal(start().v, 7);
    assert.ok(caches().includes(path.basename(codeCacheFile(file, statSync(file)))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
