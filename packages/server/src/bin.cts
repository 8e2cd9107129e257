#!/usr/bin/env node
/**
 * The `flurry` executable (package.json `bin`), CommonJS so that the quick commands never
 * start Node's ES module loader: turns on the module compile cache where there is one
 * (Node ≥ 22.1, `module.enableCompileCache()`; a no-op on Node 20), then runs `decode`,
 * `layout`, `key` and `public` from the CLI's CommonJS bundle, `next` from its ES module
 * bundle, and every other command through the dispatcher, which loads only the module of the
 * command that runs (`cli/launch.cts` says which, and falls back to the dispatcher when a
 * bundle is missing or stale). No offline command loads the service, the settings table or
 * another registry's driver; see benchmarks/cli-start.mjs and src/cli/cold-start.test.ts.
 *
 * @example
 * ```sh
 * flurry decode 1859214170478923776
 * ```
 */
import nodeModule from 'node:module';
import path from 'node:path';
import url from 'node:url';
import type { CliIo } from './cli/io.js';
import { BUNDLE_FILES, chooseEntry } from './cli/launch.cjs';

type Run = (io: CliIo) => Promise<number>;

const enableCompileCache = (nodeModule as unknown as { enableCompileCache?: () => unknown }).enableCompileCache;
if (typeof enableCompileCache === 'function') {
  try {
    enableCompileCache();
  } catch {
    // An unwritable cache directory: start without the cache.
  }
}

async function load(): Promise<Run> {
  const entry = chooseEntry(__dirname, process.argv[2]);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS bundle, loaded by path
  if (entry === 'cjs') return (require(path.join(__dirname, BUNDLE_FILES.cjs)) as { runPure: Run }).runPure;
  const file = entry === 'esm' ? BUNDLE_FILES.esm : 'cli/main.js';
  const mod = (await import(url.pathToFileURL(path.join(__dirname, file)).href)) as { runOffline?: Run; runCli?: Run };
  return (entry === 'esm' ? mod.runOffline : mod.runCli) as Run;
}

load()
  .then((run) => run({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr }))
  .then(
    (code) => {
      process.exitCode = code;
      // Let stdout drain, then leave even if a library left a handle open.
      setTimeout(() => process.exit(code), 100).unref();
    },
    () => process.exit(1),
  );
