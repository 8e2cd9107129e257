/**
 * The version of `@flurry/coordination`, read once from its package.json: stored with each
 * holder (`HolderInfo.version`) so a cluster listing shows which release every node runs.
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** This package's version (`'unknown'` when its package.json cannot be read). */
export const FLURRY_VERSION: string = readVersion();
