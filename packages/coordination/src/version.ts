import { readFileSync } from 'node:fs';

/** This package's version, stored with each holder (`'unknown'` when its package.json cannot be read). */
export const FLURRY_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
})();
