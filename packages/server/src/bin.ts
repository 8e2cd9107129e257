#!/usr/bin/env node
/**
 * The `flurry` executable (package.json `bin`): turns on Node's module compile cache where
 * there is one (Node ≥ 22.1, `module.enableCompileCache()`; a no-op on Node 20), then loads
 * only the CLI dispatcher, which loads only the module of the command that runs. The offline
 * commands (`decode`, `layout`, `key`, `public`, and `next` up to its registry) therefore
 * never load the service, the registry drivers or the settings table; see
 * benchmarks/cli-start.mjs and src/cli/cold-start.test.ts.
 *
 * @example
 * ```sh
 * flurry decode 1859214170478923776
 * ```
 */
import module from 'node:module';

const enableCompileCache = (module as unknown as { enableCompileCache?: () => unknown }).enableCompileCache;
if (typeof enableCompileCache === 'function') {
  try {
    enableCompileCache();
  } catch {
    // An unwritable cache directory: start without the cache.
  }
}

const { runCli } = await import('./cli/main.js');
runCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
    // Let stdout drain, then leave even if a library left a handle open.
    setTimeout(() => process.exit(code), 100).unref();
  },
  () => process.exit(1),
);
