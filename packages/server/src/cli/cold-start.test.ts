import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '../test-support.js';
import { BUNDLES, chooseEntry } from './launch.cjs';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(dist, 'bin.cjs');
/** The dispatcher run directly: the compiled modules, as the bin runs them without a fresh bundle. */
const main = path.join(dist, 'cli', 'main.js');
const SERVE_ONLY =
  /\/node_modules\/(pino|prom-client|thrift)\/|\/server\/dist\/(service|metrics|openapi|container)\.js|\/server\/dist\/(http|thrift)\//;

/**
 * Everything an offline command (decode, layout, key, public) may load unbundled: the CLI
 * dispatcher, its own command module, argument and error handling (and `layout`, the end-of-life
 * warning), and the parts of the core
 * it uses by subpath (layout, codecs, public IDs, random bytes). Not the core's index (which brings the
 * generator and the SQL builders), not the settings table, not the coordination package.
 */
const OFFLINE_ALLOWED =
  /^node:|\/server\/dist\/(cli\/main|cli\/offline|cli\/pure|cli\/io|cli\/args|errors|layout-choice|end-of-life|cli\/commands\/(layout|decode|key|public))\.js$|\/core\/dist\/(errors|known-options|text|random|platform\/node|layout\/[a-z-]+|codecs\/[a-z-]+|public\/[a-z0-9-]+|uuid\/(forms|format))\.js$/;
/** What `next` must not load before (or besides) its registry: the clients of other registries. */
const NEXT_NEVER = /\/node_modules\/(pg|mysql2|etcd3|ioredis|node-zookeeper-client)\//;
/**
 * Everything an offline command may load through the bundles: the bin (which the build
 * bundles with its launch and output modules) and one bundle.
 */
const BUNDLE_ALLOWED = /^node:|\/server\/dist\/bin\.cjs$|\/server\/dist\/cli-bundle\/(pure|offline)\.cjs$/;

const KEY = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';

/** One run of each offline command (`next` with a file registry in `dir`). */
const offlineRuns = (dir: string): string[][] => [
  ['layout', 'leaf'],
  ['decode', '1859214170478923776'],
  ['key', 'new'],
  ['public', 'encode', '1859214170478923776', '--key', KEY],
  ['next', '-n', '1', '--node', 'datacenter=0', '--node', 'worker=3', '--registry', `file:${dir}`],
];

/**
 * Every module a `flurry` run loads, as URLs: what the ES module loader resolves (a resolve
 * hook), then, marked `cjs `, the CommonJS modules in `require.cache` at exit (a `--require`
 * recorder, itself left out).
 */
function modulesLoaded(dir: string, argv: string[], env: Record<string, string> = {}, script = bin): string[] {
  const log = path.join(dir, `modules-${argv[0]}.txt`);
  const hooks = path.join(dir, 'hooks.mjs');
  const register = path.join(dir, 'register.mjs');
  const recorder = path.join(dir, 'recorder.cjs');
  writeFileSync(
    recorder,
    `const { appendFileSync } = require('node:fs'); const { pathToFileURL } = require('node:url');\n` +
      `process.on('exit', () => { for (const f of Object.keys(require.cache)) if (f !== __filename) ` +
      `appendFileSync(${JSON.stringify(log)}, 'cjs ' + pathToFileURL(f).href + '\\n'); });\n`,
  );
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`,
  );
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  writeFileSync(log, '');
  const r = spawnSync(
    process.execPath,
    ['--require', recorder, '--import', pathToFileURL(register).href, script, ...argv],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...env },
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 0, `${argv.join(' ')}: ${r.stderr}`);
  return readFileSync(log, 'utf8').trim().split('\n');
}

/** The modules the ES module loader resolved (`modulesLoaded` minus the CommonJS ones). */
const esmOnly = (loaded: string[]): string[] => loaded.filter((u) => !u.startsWith('cjs '));
/** Every module loaded, either way, as plain URLs. */
const anyWay = (loaded: string[]): string[] => [...new Set(loaded.map((u) => u.replace(/^cjs /, '')))];

test('GIVEN the offline commands run unbundled THEN none loads the service, pino, prom-client or thrift; serve --help does', () => {
  const dir = tempDir('cold');
  try {
    const runs = offlineRuns(dir);
    for (const argv of runs) {
      const loaded = anyWay(modulesLoaded(dir, argv, {}, main));
      assert.ok(
        loaded.some((u) => u.includes(`/cli/commands/${argv[0]}.js`)),
        `${argv[0]} ran its command module`,
      );
      const extra = loaded.filter((u) => SERVE_ONLY.test(u));
      assert.deepEqual(extra, [], `flurry ${argv[0]} loads only what it uses`);
      if (argv[0] === 'next') {
        assert.deepEqual(
          loaded.filter((u) => NEXT_NEVER.test(u)),
          [],
          'flurry next with a file registry loads no other driver',
        );
      } else {
        const unexpected = [...new Set(loaded)].filter((u) => !OFFLINE_ALLOWED.test(u));
        assert.deepEqual(unexpected, [], `flurry ${argv[0]} loads only the bin, the CLI and the core parts it uses`);
        const files = new Set(loaded.filter((u) => u.startsWith('file:')));
        // 32: public's modules, core/platform/node.js (node:crypto at its first use, so no other command loads
        // it; new keys' bytes from the kernel's random device) and core/random.js.
        assert.ok(files.size <= 32, `flurry ${argv[0]} loads ${files.size} modules (at most 32)`);
      }
    }
    // The settings table (for the unknown-variable warning) is loaded only when a FLURRY_*
    // variable is set, and then the warning still comes.
    const warned = spawnSync(process.execPath, [bin, 'public', 'encode', '1859214170478923776', '--key', KEY], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', FLURRY_REGSITRY: 'file:' },
    });
    assert.equal(warned.status, 0);
    assert.match(warned.stderr, /FLURRY_REGSITRY is not a flurry setting/);
    // The check can fail: serve does load them.
    const serve = modulesLoaded(dir, ['serve', '--help']);
    assert.ok(
      serve.some((u) => SERVE_ONLY.test(u)),
      'serve loads the service',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN npm run build THEN the bin is bundled once (its launch and output modules inlined), however often the build ran', () => {
  const text = readFileSync(bin, 'utf8');
  assert.ok(text.startsWith('#!/usr/bin/env node\n'), 'the bin keeps its shebang');
  assert.equal(text.split('// flurry: bundled by scripts/bundle-cli.mjs').length - 1, 1, 'one bundling mark');
  assert.ok(!/require\("\.\/cli\/(launch|fd-output)\.cjs"\)/.test(text), 'launch and fd-output are inlined');
});

test('GIVEN fresh bundles THEN the bin runs decode, layout, key and public from pure.cjs and next from offline.cjs: no ES module besides the bin, 2 files (the bin and one bundle), no other registry client', () => {
  const dir = tempDir('cold-bundle');
  try {
    for (const argv of offlineRuns(dir)) {
      const entry = chooseEntry(dist, argv[0]);
      assert.notEqual(entry, 'main', `${argv[0]} has a fresh bundle (npm run build makes it; scripts/bundle-cli.mjs)`);
      if (entry === 'main') continue;
      const recorded = modulesLoaded(dir, argv);
      const loaded = anyWay(recorded);
      assert.ok(
        loaded.some((u) => u.endsWith(`/server/dist/${BUNDLES[entry].file}`)),
        `${argv[0]} ran from ${BUNDLES[entry].file}`,
      );
      assert.deepEqual(
        esmOnly(recorded).filter((u) => u.startsWith('file:') && !u.endsWith('/server/dist/bin.cjs')),
        [],
        `flurry ${argv[0]} loads no ES module (only the bin, as the entry)`,
      );
      assert.deepEqual(
        loaded.filter((u) => !BUNDLE_ALLOWED.test(u)),
        [],
        `flurry ${argv[0]} loads only the bin (launch and output modules inlined by scripts/bundle-cli.mjs) and one bundle`,
      );
      assert.deepEqual(
        loaded.filter((u) => NEXT_NEVER.test(u) || SERVE_ONLY.test(u)),
        [],
        `flurry ${argv[0]} loads no service module and no registry client`,
      );
      const files = loaded.filter((u) => u.startsWith('file:'));
      assert.ok(
        files.length <= 2,
        `flurry ${argv[0]} loads ${files.length} files (at most 2; unbundled, next loads about 73)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Node's own modules a bundled run loads after start-up (`process.moduleLoadList`, which lists Node's internal
 * modules too, diffed between a `--require` recorder's start and the exit).
 */
function builtinsLoaded(dir: string, argv: string[]): string[] {
  const log = path.join(dir, `builtins-${argv[0]}.txt`);
  const recorder = path.join(dir, 'builtins.cjs');
  writeFileSync(
    recorder,
    `const before = new Set(process.moduleLoadList);\n` +
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, ` +
      `process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith('NativeModule ')).map((m) => m.slice(13)).join('\\n')));\n`,
  );
  const r = spawnSync(process.execPath, ['--require', recorder, bin, ...argv], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', XDG_STATE_HOME: dir },
    timeout: 60_000,
  });
  assert.equal(r.status, 0, `${argv.join(' ')}: ${r.stderr}`);
  return readFileSync(log, 'utf8').split('\n');
}

/** Node modules that cost a start milliseconds and that a command must load only if it uses them. */
const HEAVY = /^(crypto|worker_threads|fs\/promises|perf_hooks|stream|internal\/crypto\/.*|internal\/worker)$/;

test('GIVEN fresh bundles THEN next (file registry), layout, decode and key new load none of node:crypto, worker_threads, fs/promises, perf_hooks or the streams; public does load node:crypto', () => {
  const dir = tempDir('cold-builtins');
  try {
    for (const argv of offlineRuns(dir)) {
      if (argv[0] === 'public') continue; // it derives its keys with node:crypto's HKDF
      const heavy = builtinsLoaded(dir, argv).filter((m) => HEAVY.test(m));
      assert.deepEqual(heavy, [], `flurry ${argv.slice(0, 3).join(' ')} loads only the Node modules it uses`);
    }
    // The check can fail: public encode derives its keys with node:crypto.
    assert.ok(builtinsLoaded(dir, offlineRuns(dir)[3]).includes('crypto'), 'public loads node:crypto');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
