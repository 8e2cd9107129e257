#!/usr/bin/env node
// Post-build step: bundles the CLI's offline commands (packages/server/dist/cli/pure.js and
// cli/offline.js) with esbuild into packages/server/dist/cli-bundle/: `pure.cjs`, one CommonJS
// file for decode, layout, key and public, and `offline.cjs`, one CommonJS file for next. On
// Node 20 a cold start is mostly the ES module loader (its start and its work per module), so
// one CommonJS file instead of 20 to 73 modules is most of what the CLI start-up targets need
// (benchmarks/cli-start.mjs); the bin loads each with V8's code cache (cli/launch.cts), which
// lives beside the bundle and so goes with it when this step clears the directory.
//
// Which module goes into which file is the bin's own table, BUNDLES in cli/launch.cts. Only
// Flurry's own packages go into the bundle; every npm package (the engine clients, which are
// optional peer dependencies, and anything else) stays a require() resolved at run time, so
// a missing client still gives FLURRY_E_REGISTRY_CLIENT_MISSING. The bin uses the bundle only
// while it is at least as new as the compiled packages (packages/server/src/cli/launch.cts),
// so a later `tsc -b` alone never leaves old code running. Without esbuild (a production
// install) this step says so and the bin runs the compiled modules.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'packages', 'server', 'dist');
const outdir = path.join(dist, 'cli-bundle');

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  rmSync(outdir, { recursive: true, force: true });
  console.error('bundle-cli: esbuild is not installed (npm ci installs it); the flurry CLI runs unbundled');
  process.exit(0);
}

/** Flurry's packages are bundled; every other bare specifier stays external. */
const externalNpm = {
  name: 'external-npm',
  setup(build) {
    // A package's own subpath imports (`#platform` in @flurry/core) are bundled, under the `node` condition.
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('node:') || args.path.startsWith('@flurry/') || args.path.startsWith('#')
        ? undefined
        : { path: args.path, external: true },
    );
  },
};

/** coordination/version.js reads its package.json next to itself; in the bundle, inline it. */
const inlineVersion = {
  name: 'inline-version',
  setup(build) {
    build.onLoad({ filter: /[\\/]coordination[\\/]dist[\\/]version\.js$/ }, () => {
      const { version } = JSON.parse(readFileSync(path.join(root, 'packages', 'coordination', 'package.json'), 'utf8'));
      return { contents: `export const FLURRY_VERSION = ${JSON.stringify(String(version))};\n`, loader: 'js' };
    });
  },
};

/**
 * The bundles run only as the CLI's own process, on its main thread: `node:worker_threads`, which the generator's
 * per-thread node claims (core/generator/node-claims.ts) read `isMainThread` and `threadId` from, is the main
 * thread's answer here instead of Node's module, whose load (with the stream modules it pulls in) cost every
 * `next` about 2 ms. Importing anything else from it in the CLI fails this build ("No matching export").
 */
const mainThreadOnly = {
  name: 'main-thread-only',
  setup(build) {
    build.onResolve({ filter: /^(node:)?worker_threads$/ }, () => ({
      path: 'worker_threads',
      namespace: 'main-thread',
    }));
    build.onLoad({ filter: /.*/, namespace: 'main-thread' }, () => ({
      contents: 'export const isMainThread = true;\nexport const threadId = 0;\n',
      loader: 'js',
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
const started = performance.now();
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
  // Smaller files to read and compile at every start; names are kept (stack traces, error names).
  minify: true,
  keepNames: true,
  metafile: true,
  // core/platform/node.ts reaches import.meta.url only where there is no CommonJS require (an ES module on
  // Node < 20.16); in these CommonJS bundles that branch never runs.
  logOverride: { 'empty-import-meta': 'silent' },
  plugins: [mainThreadOnly, externalNpm, inlineVersion],
};
// Two CommonJS files, so the bin starts no ES module loader: pure.cjs (decode, layout, key,
// public) and offline.cjs (next and its registry drivers, each initialised, and its npm client
// required, only when its registry is opened).
const { BUNDLES } = createRequire(import.meta.url)(path.join(dist, 'cli', 'launch.cjs'));
const builds = await Promise.all(
  Object.values(BUNDLES).map((b) =>
    esbuild.build({
      ...common,
      entryPoints: [path.join(dist, b.entry)],
      outfile: path.join(dist, b.file),
      format: 'cjs',
    }),
  ),
);
if (builds.some((b) => b.errors.length > 0)) process.exit(1);
const files = builds.reduce((n, b) => n + Object.keys(b.metafile.outputs).length, 0);

// The bin itself, with the two small modules it requires (cli/launch.cjs, cli/fd-output.cjs)
// inlined: two fewer files to resolve, read and compile at every start. It replaces tsc's
// dist/bin.cjs in place (same directory, so its __dirname and the paths in BUNDLES hold);
// without esbuild, tsc's bin runs and requires them. A bin bundled before (tsc rewrites it only
// when bin.cts changes) carries BUNDLED_MARK and is left as it is.
const binFile = path.join(dist, 'bin.cjs');
const BUNDLED_MARK = '// flurry: bundled by scripts/bundle-cli.mjs';
if (!readFileSync(binFile, 'utf8').includes(BUNDLED_MARK)) {
  const bin = await esbuild.build({
    ...common,
    metafile: false,
    entryPoints: [binFile],
    outfile: binFile,
    allowOverwrite: true,
    write: false,
    format: 'cjs',
    banner: { js: BUNDLED_MARK },
  });
  if (bin.errors.length > 0) process.exit(1);
  writeFileSync(binFile, bin.outputFiles[0].contents);
}
console.log(
  `bundle-cli: ${path.relative(root, outdir)}/ (${files} files) and the bin in ${Math.round(performance.now() - started)} ms`,
);
