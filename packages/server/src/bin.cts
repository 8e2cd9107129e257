#!/usr/bin/env node
// The `flurry` executable, CommonJS so the quick commands never start the ES module loader
// (benchmarks/cli-start.mjs); the entry is chosen by cli/launch.cts.
import nodeModule from 'node:module';
import path from 'node:path';
import url from 'node:url';
import type { CliIo } from './cli/io.js';
import { fdOutput } from './cli/fd-output.cjs';
import { BUNDLES, chooseEntry, requireBundle } from './cli/launch.cjs';

type Run = (io: CliIo) => Promise<number>;

const enableCompileCache = (nodeModule as unknown as { enableCompileCache?: () => unknown }).enableCompileCache;
if (typeof enableCompileCache === 'function') {
  try {
    enableCompileCache();
  } catch {
    // An unwritable cache directory: start without the cache.
  }
}

const entry = chooseEntry(__dirname, process.argv[2]);

async function load(): Promise<Run> {
  if (entry !== 'main') {
    const bundle = BUNDLES[entry];
    return (requireBundle(path.join(__dirname, bundle.file)) as Record<string, Run>)[bundle.run];
  }
  const mod = (await import(url.pathToFileURL(path.join(__dirname, 'cli/main.js')).href)) as { runCli: Run };
  return mod.runCli;
}

load()
  .then((run) =>
    run({
      argv: process.argv.slice(2),
      env: process.env,
      stdout: fdOutput(1, () => process.stdout),
      stderr: fdOutput(2, () => process.stderr),
    }),
  )
  .then(
    (code) => {
      process.exitCode = code;
      // Let stdout drain, then leave even if an engine client left a handle open (the pure
      // commands open none and skip the timer: its first use costs about half a millisecond).
      if (entry !== 'pure') setTimeout(() => process.exit(code), 100).unref();
    },
    () => process.exit(1),
  );
