// Issue 29, part 3: the packages as users install them. `npm pack` each workspace package,
// install the five tarballs (and nothing of this repository besides) into a fresh project in a
// temporary directory outside the repository, with the npm registry for their dependencies, and
// check there: ESM import and CommonJS require (Node's require(esm), the one copy of each
// module), TypeScript declarations under moduleResolution node16, nodenext and bundler with
// strict and skipLibCheck off (the repository's tsc), the engine clients left out (optional
// peer dependencies) with their FLURRY_E_*_CLIENT_MISSING messages, the `flurry` bin, and
// `npm publish --dry-run` of each package with nothing to warn about. Prints the tarball
// sizes and the install footprint (listed in README.md, "Installing from npm").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PACKAGES = ['core', 'coordination', 'segments', 'server', 'client'] as const;
const TSC = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const ENGINE_CLIENTS = ['pg', 'mysql2', 'ioredis', 'etcd3', 'node-zookeeper-client'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** npm's environment without what `npm test` sets for this repository (workspace, prefix, …). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^npm_/i.test(k) || /^npm_config_(cache|registry|userconfig)$/i.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', TZ: 'UTC', npm_config_update_notifier: 'false' };
}

function run(cmd: string, args: string[], cwd: string, timeoutMs = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, env: cleanEnv(), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function ok(r: Run, what: string): string {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code}):\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
  return r.stdout;
}

function duKiB(dir: string): number {
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) bytes += statSync(p).size;
    }
  };
  walk(dir);
  return Math.round(bytes / 1024);
}

const kB = (n: number) => `${(n / 1000).toFixed(1)} kB`;

interface Packed {
  name: string;
  version: string;
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: Array<{ path: string }>;
}

/** Every subpath of every installed package's `exports`, as specifiers. */
function specifiers(app: string): string[] {
  const out: string[] = [];
  for (const p of PACKAGES) {
    const pkg = JSON.parse(readFileSync(path.join(app, 'node_modules', '@flurry', p, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    for (const sub of Object.keys(pkg.exports)) out.push(`@flurry/${p}${sub === '.' ? '' : sub.slice(1)}`);
  }
  return out;
}

const ESM = `import { createRequire } from 'node:module';
const specs = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const out = {};
for (const s of specs) {
  const esm = await import(s);
  const cjs = require(s);
  out[s] = { esm: Object.keys(esm).sort(), cjs: Object.keys(cjs).filter((k) => k !== '__esModule' && k !== 'module.exports').sort(), same: Object.keys(esm).every((k) => esm[k] === cjs[k]) };
}
const { Generator, Layout } = await import('@flurry/core');
const gen = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 7 } });
const id = gen.next();
out.decoded = Layout.from('twitter').decode(id).fields;
console.log(JSON.stringify(out));
`;

const CJS = `'use strict';
const { Generator, FlurryError } = require('@flurry/core');
const { createClient } = require('@flurry/client');
const { openSequences } = require('@flurry/segments');
const gen = new Generator({ layout: 'js53', node: { worker: 3 } });
const a = gen.next();
const b = gen.next();
let code;
try { createClient({ servers: [] }); } catch (e) { code = e instanceof FlurryError ? e.code : 'not a FlurryError: ' + e; }
console.log(JSON.stringify({ increasing: b > a, code, openSequences: typeof openSequences }));
`;

const PEERS = `import { openRegistry } from '@flurry/coordination';
import { openSequences } from '@flurry/segments';
const out = [];
for (const url of ['redis://127.0.0.1:1/0', 'etcd://127.0.0.1:1/x', 'zookeeper://127.0.0.1:1/x', 'zookeeper+leaf://127.0.0.1:1/x', 'postgres://u:p@127.0.0.1:1/db', 'mysql://u:p@127.0.0.1:1/db'])
  await openRegistry(url, { cluster: 'c' }).then(() => out.push({ url, opened: true }), (e) => out.push({ url, code: e.code, message: e.message }));
for (const url of ['redis://127.0.0.1:1/0', 'postgres://u:p@127.0.0.1:1/db', 'mysql://u:p@127.0.0.1:1/db'])
  await openSequences(url).then(() => out.push({ url, opened: true }), (e) => out.push({ url, code: e.code, message: e.message }));
console.log(JSON.stringify(out));
`;

/** A TypeScript user of every package (type-checked only). */
const USE_TS = `import { Generator, Layout, FlurryError, encodeId } from '@flurry/core';
import { Layout as Layout2 } from '@flurry/core/layout';
import { openRegistry, leasedGenerator } from '@flurry/coordination';
import { openSequences } from '@flurry/segments';
import { loadServeConfig, startService, type ServiceLogger } from '@flurry/server';
import { createClient } from '@flurry/client';

const gen = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 7 } });
const id: bigint = gen.next();
const text: string = encodeId(id, 'base62', { fixed: true });
const unixMs: number = Layout.from('twitter').decode(id).unixMs;
const bits: number = Layout2.from('js53').totalBits;
const quiet: ServiceLogger = { info() {}, warn() {}, error() {}, debug() {}, child: () => quiet };
export async function use(): Promise<string> {
  const registry = await openRegistry('file:/tmp/flurry-types', { cluster: 'c' });
  const ids = await leasedGenerator({ registry, layout: 'twitter' });
  const next: bigint = ids.next();
  const n: number | undefined = (await openSequences('memory://t')).get('k').tryNext();
  const port: number = (await startService(loadServeConfig(['--port', '0'], {}), quiet)).port;
  const fromFleet: bigint = await createClient({ servers: ['http://127.0.0.1:8080'] }).next();
  try {
    gen.next();
  } catch (e) {
    if (e instanceof FlurryError) return e.code;
  }
  return [text, unixMs, bits, next, n, port, fromFleet].join();
}
`;

/** A CommonJS TypeScript user (module nodenext models require(esm)). */
const USE_CTS = `import core = require('@flurry/core');
const gen = new core.Generator({ layout: 'twitter', node: { datacenter: 1, worker: 7 } });
export const id: bigint = gen.next();
`;

test('GIVEN the packed tarballs installed into a fresh project THEN import, require, types, optional engine clients, the bin and publish --dry-run all work as users see them', async (t) => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'flurry-packed-'));
  assert.ok(path.relative(root, tmp).startsWith('..'), 'outside the repository');
  try {
    // 1. npm pack every package (built by `npm run build`, as `npm test` does first).
    const tgz = path.join(tmp, 'tarballs');
    mkdirSync(tgz);
    const packArgs = ['pack', '--json', '--pack-destination', tgz, ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`])];
    const packed = JSON.parse(ok(await run('npm', packArgs, root), 'npm pack')) as Packed[];
    assert.deepEqual(packed.map((p) => p.name).sort(), PACKAGES.map((p) => `@flurry/${p}`).sort());
    for (const p of packed) {
      const files = p.files.map((f) => f.path);
      for (const must of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts'])
        assert.ok(files.includes(must), `${p.name} ships ${must}`);
      const stray = files.filter((f) =>
        /\.test\.|\.map$|\.tsbuildinfo$|test-kit|test-support|\/testing\/flurry/.test(f),
      );
      assert.deepEqual(stray, [], `${p.name} ships no tests, maps or build state`);
    }

    // 2. A fresh project with only the tarballs (and @types/node, as a TypeScript user has).
    const app = path.join(tmp, 'app');
    mkdirSync(app);
    const deps = Object.fromEntries(packed.map((p) => [p.name, `file:../tarballs/${p.filename}`]));
    const typesNode = (
      JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
    ).devDependencies['@types/node'];
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({
        name: 'flurry-packed-app',
        private: true,
        type: 'module',
        dependencies: deps,
        devDependencies: { '@types/node': typesNode },
      }),
    );
    const started = Date.now();
    ok(await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], app), 'npm install');
    const installMs = Date.now() - started;
    const nm = path.join(app, 'node_modules');
    const installed = readdirSync(nm).flatMap((d) =>
      d.startsWith('@') ? readdirSync(path.join(nm, d)).map((s) => `${d}/${s}`) : d.startsWith('.') ? [] : [d],
    );
    for (const p of PACKAGES)
      assert.throws(
        () => statSync(path.join(nm, '@flurry', p, 'node_modules', '@flurry')),
        `one copy of each @flurry package (none nested under @flurry/${p})`,
      );

    await t.test('sizes and footprint', () => {
      const lines = packed.map(
        (p) =>
          `  ${p.name.padEnd(22)} tarball ${kB(p.size).padStart(9)}  unpacked ${kB(p.unpackedSize).padStart(9)}  ${String(p.entryCount).padStart(3)} files`,
      );
      const runtime = installed.filter((d) => d !== '@types/node' && d !== 'undici-types');
      const typesKiB = duKiB(path.join(nm, '@types', 'node')) + duKiB(path.join(nm, 'undici-types'));
      const report =
        `packed-install: tarballs and install footprint (npm install ${installMs} ms)\n${lines.join('\n')}\n` +
        `  all five installed: ${runtime.length} packages, ${Math.round((duKiB(nm) - typesKiB) / 1024)} MiB in node_modules ` +
        `(@flurry/core alone: ${kB(packed.find((p) => p.name === '@flurry/core')?.unpackedSize ?? 0)}, no dependencies)\n`;
      for (const line of report.split('\n')) if (line) t.diagnostic(line);
    });

    await t.test('the engine clients are optional peers: none installed, each one named when missing', async () => {
      for (const c of ENGINE_CLIENTS) assert.ok(!installed.includes(c), `${c} is not installed`);
      writeFileSync(path.join(app, 'peers.mjs'), PEERS);
      const out = JSON.parse(ok(await run(process.execPath, ['peers.mjs'], app), 'peers.mjs')) as Array<{
        url: string;
        code?: string;
        message?: string;
      }>;
      const want: Record<string, string> = {
        redis: 'ioredis@6',
        etcd: 'etcd3@1',
        zookeeper: 'node-zookeeper-client@1',
      };
      Object.assign(want, { 'zookeeper+leaf': want.zookeeper, postgres: 'pg@8', mysql: 'mysql2@3' });
      out.forEach((r, i) => {
        const code = i < 6 ? 'FLURRY_E_REGISTRY_CLIENT_MISSING' : 'FLURRY_E_SEQUENCE_CLIENT_MISSING';
        assert.equal(r.code, code, JSON.stringify(r));
        const install = want[r.url.slice(0, r.url.indexOf(':'))];
        assert.match(r.message ?? '', new RegExp(`is not installed: run npm install ${install.replace('+', '\\+')}$`));
        assert.doesNotMatch(r.message ?? '', /:p@/, 'no password');
      });
      const cli = await run(path.join(nm, '.bin', 'flurry'), ['next', '--registry', 'redis://127.0.0.1:1/0'], app);
      assert.equal(cli.code, 2, cli.stderr);
      assert.match(cli.stderr, /^flurry: FLURRY_E_REGISTRY_CLIENT_MISSING: .*run npm install ioredis@6$/m);
    });

    await t.test('ESM import and CommonJS require give the same single module; the bin runs', async () => {
      const [major, minor] = process.versions.node.split('.').map(Number);
      assert.ok((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22, 'engines');
      writeFileSync(path.join(app, 'both.mjs'), ESM);
      const specs = specifiers(app);
      const out = JSON.parse(
        ok(await run(process.execPath, ['both.mjs', JSON.stringify(specs)], app), 'both.mjs'),
      ) as Record<string, unknown>;
      for (const s of specs) {
        const r = out[s] as { esm: string[]; cjs: string[]; same: boolean };
        assert.ok(r.esm.length > 0, `${s} exports something`);
        assert.deepEqual(r.cjs, r.esm, `${s}: require() sees what import sees`);
        assert.ok(r.same, `${s}: the same objects (one copy, no dual-package hazard)`);
      }
      assert.deepEqual(out.decoded, { datacenter: 1, worker: 7 });
      writeFileSync(path.join(app, 'plain.cjs'), CJS);
      const cjs = ok(await run(process.execPath, ['plain.cjs'], app), 'plain.cjs');
      assert.deepEqual(JSON.parse(cjs), {
        increasing: true,
        code: 'FLURRY_E_CLIENT_CONFIG',
        openSequences: 'function',
      });
      const layout = await run(path.join(nm, '.bin', 'flurry'), ['layout', 'js53'], app);
      assert.equal(layout.code, 0, layout.stderr);
      assert.match(layout.stdout, /^Layout js53: 53 bits/);
    });

    await t.test('types under node16, nodenext and bundler, strict, skipLibCheck off', async () => {
      mkdirSync(path.join(app, 'src'));
      writeFileSync(path.join(app, 'src', 'use.ts'), USE_TS);
      writeFileSync(path.join(app, 'src', 'use-cjs.cts'), USE_CTS);
      const configs = {
        node16: { module: 'node16', files: ['src/use.ts'] },
        nodenext: { module: 'nodenext', files: ['src/use.ts', 'src/use-cjs.cts'] },
        bundler: { module: 'esnext', files: ['src/use.ts'] },
      };
      const runs = Object.entries(configs).map(([resolution, c]) => {
        const file = `tsconfig.${resolution}.json`;
        const compilerOptions = {
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          target: 'es2022',
          module: c.module,
          moduleResolution: resolution,
          types: ['node'],
        };
        writeFileSync(path.join(app, file), JSON.stringify({ compilerOptions, files: c.files }));
        return run(process.execPath, [TSC, '-p', file], app).then((r) => [resolution, r] as const);
      });
      for (const [resolution, r] of await Promise.all(runs))
        assert.equal(r.code, 0, `tsc under moduleResolution ${resolution}:\n${r.stdout}${r.stderr}`);
    });

    await t.test(
      'npm publish --dry-run of each package: public, licensed, with a repository and a README of its own',
      async () => {
        // From the workspace, as a maintainer publishes (npm normalizes package.json then and warns about what it fixed).
        const pub = await run(
          'npm',
          ['publish', '--dry-run', ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`])],
          root,
        );
        assert.equal(pub.code, 0, pub.stderr);
        const warnings = pub.stderr
          .split('\n')
          .filter((l) => /^npm (warn|error)/i.test(l) && !/requires you to be logged in/.test(l));
        assert.deepEqual(warnings, [], 'npm publish --dry-run has nothing to warn about');
        assert.match(pub.stderr, /with tag latest and public access \(dry-run\)/);
        assert.deepEqual(
          pub.stdout.match(/^\+ @flurry\/\S+$/gm)?.sort(),
          packed.map((p) => `+ ${p.name}@${p.version}`).sort(),
        );
        for (const p of packed) {
          const dir = path.join(nm, ...p.name.split('/'));
          const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
          assert.equal(pkg.license, 'MIT', p.name);
          assert.deepEqual(pkg.publishConfig, { access: 'public' }, p.name);
          assert.deepEqual(pkg.repository, {
            type: 'git',
            url: 'git+https://github.com/flurry-ids/flurry.git',
            directory: `packages/${p.name.split('/')[1]}`,
          });
          assert.deepEqual(pkg.engines, { node: '^20.19.0 || >=22.12.0' }, p.name);
          const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
          assert.match(readme, new RegExp(`^# ${p.name}\\n`), `${p.name}: its own README`);
          assert.match(
            readme,
            new RegExp("```(ts|sh)\\n[^`]*(from '" + p.name + "'|npx flurry)"),
            `${p.name}: its own example`,
          );
        }
      },
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
