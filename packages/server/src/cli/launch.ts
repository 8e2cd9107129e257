/**
 * Which entry the `flurry` bin loads: the CLI's bundle (`dist/cli-bundle/offline.js`) for an
 * offline command when the bundle is at least as new as every compiled package it was built
 * from, else the dispatcher (`dist/cli/main.js`). The freshness check is three `stat` calls:
 * a `tsc -b` run after the last bundling (without `npm run build`'s bundling step) makes the
 * bundle stale, and the bin then runs the compiled modules, never old code. A missing
 * bundle (esbuild not installed) or missing build info (an installed package) is handled the
 * same way: no bundle → main; no build info → the bundle is trusted.
 *
 * @example
 * ```ts
 * const entry = chooseEntry('/repo/packages/server/dist', 'decode'); // 'bundle' or 'main'
 * ```
 */
import { statSync } from 'node:fs';
import path from 'node:path';

/**
 * The commands the bundle serves (its `OFFLINE_COMMANDS`; a test keeps the two equal).
 *
 * @example
 * ```ts
 * BUNDLED_COMMANDS.includes('decode'); // true
 * ```
 */
export const BUNDLED_COMMANDS: readonly string[] = ['next', 'decode', 'layout', 'key', 'public'];

/**
 * The bundle's entry file, relative to the server's `dist/`.
 *
 * @example
 * ```ts
 * const entry = path.join(distDir, BUNDLE_ENTRY); // …/dist/cli-bundle/offline.js
 * ```
 */
export const BUNDLE_ENTRY = 'cli-bundle/offline.js';

function mtimeMs(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * `'bundle'` when `command` is served by a fresh bundle under `distDir`, else `'main'`.
 *
 * @example
 * ```ts
 * if (chooseEntry(distDir, process.argv[2]) === 'bundle') await import(`${distDir}/cli-bundle/offline.js`);
 * ```
 */
export function chooseEntry(distDir: string, command: string | undefined): 'bundle' | 'main' {
  if (command === undefined || !BUNDLED_COMMANDS.includes(command)) return 'main';
  const bundled = mtimeMs(path.join(distDir, BUNDLE_ENTRY));
  if (bundled === undefined) return 'main';
  // The build info of the packages the bundle holds (server, coordination, core), when built here.
  const packages = path.resolve(distDir, '..', '..');
  for (const p of ['server', 'coordination', 'core']) {
    const built = mtimeMs(path.join(packages, p, 'dist', '.tsbuildinfo'));
    if (built !== undefined && built > bundled) return 'main';
  }
  return 'bundle';
}
