// How the `flurry` bin launches a command (CommonJS: no ES module loader): a fresh CLI bundle, else dist/cli/main.js.
import fs from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** The CLI's bundles under `dist/` (scripts/bundle-cli.mjs reads this table; a test keeps `commands` equal to the bundles' tables). */
export const BUNDLES = {
  pure: {
    entry: 'cli/pure.js',
    file: 'cli-bundle/pure.cjs',
    run: 'runPure',
    commands: ['decode', 'layout', 'key', 'public'],
  },
  offline: { entry: 'cli/offline.js', file: 'cli-bundle/offline.cjs', run: 'runOffline', commands: ['next'] },
} as const satisfies Record<string, { entry: string; file: string; run: string; commands: readonly string[] }>;

type BundleName = keyof typeof BUNDLES;

function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
const stat = (file: string): fs.Stats | undefined => attempt(() => fs.statSync(file));
const writable = (dir: string): boolean => attempt(() => fs.accessSync(dir, fs.constants.W_OK) ?? true) === true;

/** The bundle that serves `command` when it is fresh under `distDir`, else `'main'`. */
export function chooseEntry(distDir: string, command: string | undefined): BundleName | 'main' {
  const name = (Object.keys(BUNDLES) as BundleName[]).find((b) =>
    (BUNDLES[b].commands as readonly string[]).includes(command ?? ''),
  );
  if (name === undefined) return 'main';
  const bundled = stat(path.join(distDir, BUNDLES[name].file))?.mtimeMs;
  if (bundled === undefined) return 'main';
  // Never old code: a package built after the bundle serves through main.
  const packages = path.resolve(distDir, '..', '..');
  const built = (p: string) => stat(path.join(packages, p, 'dist', '.tsbuildinfo'))?.mtimeMs ?? 0;
  return ['server', 'coordination', 'core'].some((p) => built(p) > bundled) ? 'main' : name;
}

/** A bundle's code cache file, named by its mtime and size so a rebuilt bundle never meets an old cache (V8 checks only the length). */
export function codeCacheFile(file: string, st: { mtimeMs: number; size: number }): string {
  return `${file}.${Math.trunc(st.mtimeMs)}-${st.size}.v8cache`;
}

/** `require(file)` through V8's code cache where Node has no compile cache (20, 21); the cache is written at exit where writable. */
export function requireBundle(file: string): unknown {
  const enableCompileCache = (nodeModule as unknown as { enableCompileCache?: unknown }).enableCompileCache;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node's compile cache serves require()
  if (typeof enableCompileCache === 'function') return require(file);
  const st = fs.statSync(file);
  const cacheFile = codeCacheFile(file, st);
  const cachedData = attempt(() => fs.readFileSync(cacheFile));
  const script = new vm.Script(nodeModule.wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });
  const mod = new nodeModule(file);
  mod.filename = file;
  mod.paths = (nodeModule as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    path.dirname(file),
  );
  require.cache[file] = mod;
  // Node's module wrapper: (exports, require, module, __filename, __dirname).
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(mod.exports, mod.exports, nodeModule.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  if ((cachedData === undefined || script.cachedDataRejected === true) && writable(path.dirname(file))) {
    process.once('exit', () => {
      const tmp = `${cacheFile}.tmp-${process.pid}`;
      try {
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cacheFile);
      } catch {
        attempt(() => fs.unlinkSync(tmp)); // a full disk or a race with a rebuild: go on without the cache
      }
    });
  }
  return mod.exports;
}
