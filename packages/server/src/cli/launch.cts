/**
 * Which entry the `flurry` bin loads (CommonJS, like the bin, so that choosing costs no ES
 * module loader):
 * - `'cjs'`: `decode`, `layout`, `key` and `public` from the CLI's CommonJS bundle
 *   (`dist/cli-bundle/pure.cjs`): one file, and no ES module loader at all, which on Node 20
 *   is most of a cold start;
 * - `'esm'`: `next` from the ES module bundle (`dist/cli-bundle/offline.js`, an entry and
 *   lazily loaded chunks, one per registry driver, whose npm clients stay `import()`s resolved
 *   at run time);
 * - `'main'`: every other command, or a bundle that is missing (esbuild not installed) or
 *   older than the build info of the server, coordination or core (a `tsc -b` after the last
 *   `npm run build`), through the dispatcher `dist/cli/main.js`: never old code.
 * Without build info (an installed package) the bundles are trusted.
 *
 * @example
 * ```ts
 * const entry = chooseEntry('/repo/packages/server/dist', 'decode'); // 'cjs', 'esm' or 'main'
 * ```
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * The commands of the CommonJS bundle (its `PURE_COMMANDS`; a test keeps the two equal).
 *
 * @example
 * ```ts
 * CJS_COMMANDS.includes('decode'); // true
 * ```
 */
export const CJS_COMMANDS: readonly string[] = ['decode', 'layout', 'key', 'public'];

/**
 * The commands of the ES module bundle besides those (`next`: its registry drivers load
 * their npm clients with `import()`).
 *
 * @example
 * ```ts
 * ESM_COMMANDS.includes('next'); // true
 * ```
 */
export const ESM_COMMANDS: readonly string[] = ['next'];

/**
 * The bundles' entry files, relative to the server's `dist/`.
 *
 * @example
 * ```ts
 * require(path.join(distDir, BUNDLE_FILES.cjs)).runPure(io);
 * ```
 */
export const BUNDLE_FILES = { cjs: 'cli-bundle/pure.cjs', esm: 'cli-bundle/offline.js' } as const;

function mtimeMs(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * `'cjs'` or `'esm'` when `command` is served by a fresh bundle under `distDir`, else `'main'`.
 *
 * @example
 * ```ts
 * const entry = chooseEntry(distDir, process.argv[2]);
 * ```
 */
export function chooseEntry(distDir: string, command: string | undefined): 'cjs' | 'esm' | 'main' {
  const kind =
    command === undefined
      ? undefined
      : CJS_COMMANDS.includes(command)
        ? 'cjs'
        : ESM_COMMANDS.includes(command)
          ? 'esm'
          : undefined;
  if (kind === undefined) return 'main';
  const bundled = mtimeMs(path.join(distDir, BUNDLE_FILES[kind]));
  if (bundled === undefined) return 'main';
  // The build info of the packages the bundles hold, when built here.
  const packages = path.resolve(distDir, '..', '..');
  for (const p of ['server', 'coordination', 'core']) {
    const built = mtimeMs(path.join(packages, p, 'dist', '.tsbuildinfo'));
    if (built !== undefined && built > bundled) return 'main';
  }
  return kind;
}
