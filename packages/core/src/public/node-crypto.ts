/**
 * `node:crypto`, loaded at its first use instead of when the public-ID modules are imported. Those modules come
 * with `@flurry/core`'s entry, so a static import made every user of the entry (the CLI's `next`, the layout and
 * decode commands) load Node's crypto and stream modules, a few milliseconds at each start, without using them.
 *
 * @example
 * ```ts
 * const tagKey = nodeCrypto().hkdfSync('sha256', secret, salt, info, 16);
 * ```
 */
import { createRequire } from 'node:module';

type NodeCrypto = typeof import('node:crypto');

let loaded: NodeCrypto | undefined;

/**
 * The `node:crypto` module (loaded once): with `process.getBuiltinModule` (Node ≥ 20.16), else the CommonJS
 * `require` of a bundle, else a `require` made for this ES module.
 *
 * @example
 * ```ts
 * nodeCrypto().randomBytes(32);
 * ```
 */
export function nodeCrypto(): NodeCrypto {
  if (loaded === undefined) {
    const builtin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    if (builtin !== undefined) loaded = builtin('node:crypto') as NodeCrypto;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle's own require, found at run time
    else if (typeof require === 'function') loaded = require('node:crypto') as NodeCrypto;
    else loaded = createRequire(import.meta.url)('node:crypto') as NodeCrypto;
  }
  return loaded;
}
