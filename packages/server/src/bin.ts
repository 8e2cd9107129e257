#!/usr/bin/env node
/**
 * The `flurry` executable (package.json `bin`): turns on Node's module compile cache where
 * there is one (Node ≥ 22.1, `module.enableCompileCache()`; a no-op on Node 20), then loads
 * for the offline commands (`next`, `decode`, `layout`, `key`, `public`) the CLI's bundle,
 * a few files instead of 20 to 70 modules (`cli/offline.ts`; `cli/launch.ts` says when), and
 * for every other command the dispatcher, which loads only the module of the command that
 * runs. No offline command loads the service, the settings table or another registry's
 * driver; see benchmarks/cli-start.mjs and src/cli/cold-start.test.ts.
 *
 * @example
 * ```sh
 * flurry decode 1859214170478923776
 * ```
 */
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CliIo } from './cli/io.js';
import { BUNDLE_ENTRY, chooseEntry } from './cli/launch.js';

const enableCompileCache = (module as unknown as { enableCompileCache?: () => unknown }).enableCompileCache;
if (typeof enableCompileCache === 'function') {
  try {
    enableCompileCache();
  } catch {
    // An unwritable cache directory: start without the cache.
  }
}

const dist = path.dirname(fileURLToPath(import.meta.url));
const run: (io: CliIo) => Promise<number> =
  chooseEntry(dist, process.argv[2]) === 'bundle'
    ? ((await import(pathToFileURL(path.join(dist, BUNDLE_ENTRY)).href)) as typeof import('./cli/offline.js'))
        .runOffline
    : (await import('./cli/main.js')).runCli;
run({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
    // Let stdout drain, then leave even if a library left a handle open.
    setTimeout(() => process.exit(code), 100).unref();
  },
  () => process.exit(1),
);
