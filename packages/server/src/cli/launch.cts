/**
 * How the `flurry` bin launches a command (CommonJS, so that launching costs no ES module
 * loader): which entry serves it ({@link chooseEntry}: a fresh CLI bundle, else the dispatcher
 * `dist/cli/main.js`, never old code) and how a bundle is loaded ({@link requireBundle}).
 */
import fs from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/**
 * The CLI's bundles, relative to the server's `dist/`: the compiled module esbuild bundles
 * (scripts/bundle-cli.mjs reads this table), the bundle file, the function it exports to run a
 * command line, and the commands it serves (a test keeps these equal to the bundles' command
 * tables, `PURE_COMMANDS` and `OFFLINE_COMMANDS`).
 */
export const BUNDLES = {
  pure: {
    entry: 'cli/pure.js',
    file: 'cli-bundle/pure.cjs',
    run: 'runPure',
    commands: ['decode', 'layout', 'key', 'public'],
  },
  offline: { entry: 'cli/offline.js', file: 'cli-bundle/offline.cjs', run: 'runOffline', commands: ['next'] },
} as const satisfies Record<string, { entry: string; file: string; run: string; commands: readonly string[] }>;

/** The name of one of the CLI's bundles. */
export type BundleName = keyof typeof BUNDLES;

function stat(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

/** The bundle that serves `command` when it is fresh under `distDir`, else `'main'`. */
export function chooseEntry(distDir: string, command: string | undefined): BundleName | 'main' {
  const name = (Object.keys(BUNDLES) as BundleName[]).find((b) =>
    (BUNDLES[b].commands as readonly string[]).includes(command ?? ''),
  );
  if (name === undefined) return 'main';
  const bundled = stat(path.join(distDir, BUNDLES[name].file))?.mtimeMs;
  if (bundled === undefined) return 'main';
  // The build info of the packages the bundles hold, when built here.
  const packages = path.resolve(distDir, '..', '..');
  for (const p of ['server', 'coordination', 'core']) {
    const built = stat(path.join(packages, p, 'dist', '.tsbuildinfo'))?.mtimeMs;
    if (built !== undefined && built > bundled) return 'main';
  }
  return name;
}

/**
 * The code cache file of a bundle: named by the bundle's modification time and size, so a
 * rebuilt bundle never meets the cache of the old one (V8 itself checks only the length).
 */
export function codeCacheFile(file: string, st: { mtimeMs: number; size: number }): string {
  return `${file}.${Math.trunc(st.mtimeMs)}-${st.size}.v8cache`;
}

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `require(file)`, but compiled from V8's code cache where Node has no compile cache of its own
 * (Node 20 and 21). A missing or rejected cache is written atomically at exit, except where the
 * directory is not writable (a read-only install pays nothing for it).
 */
export function requireBundle(file: string): unknown {
  const enableCompileCache = (nodeModule as unknown as { enableCompileCache?: unknown }).enableCompileCache;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node's compile cache serves require()
  if (typeof enableCompileCache === 'function') return require(file);
  const st = fs.statSync(file);
  const cacheFile = codeCacheFile(file, st);
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(nodeModule.wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });
  const mod = new nodeModule(file);
  mod.filename = file;
  mod.paths = (nodeModule as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    path.dirname(file),
  );
  require.cache[file] = mod;
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: nodeModule,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(mod.exports, mod.exports, nodeModule.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  if ((cachedData === undefined || script.cachedDataRejected === true) && writable(path.dirname(file))) {
    process.once('exit', () => {
      const tmp = `${cacheFile}.tmp-${process.pid}`;
      try {
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cacheFile);
      } catch {
        // The cache could not be written (a full disk, a race with a rebuild): start without it.
        try {
          fs.unlinkSync(tmp);
        } catch {
          // nothing was written
        }
      }
    });
  }
  return mod.exports;
}
