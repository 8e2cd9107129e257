/**
 * The platform pieces of `@flurry/core` on Node.js (and Bun and Deno): `#platform` under the `node` condition (`web.ts`
 * elsewhere; the same names, docs/runtimes.md). Random bytes come from `/dev/urandom`, not `node:crypto`, whose load
 * costs the CLI's start a few milliseconds; `node:crypto` (SHA-256, HKDF) loads at its first use for the same reason.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

type NodeCrypto = typeof import('node:crypto');

export const CAN_BLOCK = true;

/** Whether /dev/urandom can be read; false after the first failure (then Web Crypto). */
let urandom = true;

export function platformRandomFill(buf: Uint8Array): Uint8Array {
  try {
    if (urandom) {
      const fd = openSync('/dev/urandom', 'r');
      try {
        // Never short for a few bytes, but a loop costs nothing (each read returns at least one byte or ends it).
        for (let off = 0, n = 0; off < buf.length; off += n) {
          n = readSync(fd, buf, off, buf.length - off, null);
          if (n <= 0) throw new Error('/dev/urandom ended');
        }
        return buf;
      } finally {
        closeSync(fd);
      }
    }
  } catch {
    urandom = false;
  }
  return globalThis.crypto.getRandomValues(buf);
}

export function monotonicMs(): number {
  const t = process.hrtime();
  return t[0] * 1e3 + t[1] / 1e6;
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

export function platformSleep(ms: number): void {
  if (ms > 0) Atomics.wait(sleepCell, 0, 0, ms);
}

let loaded: NodeCrypto | undefined;

/** `node:crypto` (loaded once): with `process.getBuiltinModule` (Node ≥ 20.16), else the CommonJS `require` of a bundle, else a `require` made for this ES module. */
function nodeCrypto(): NodeCrypto {
  if (loaded === undefined) {
    const builtin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    if (builtin !== undefined) loaded = builtin('node:crypto') as NodeCrypto;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle's own require, found at run time
    else if (typeof require === 'function') loaded = require('node:crypto') as NodeCrypto;
    else loaded = createRequire(import.meta.url)('node:crypto') as NodeCrypto;
  }
  return loaded;
}

export function hkdfSha256(
  secret: Uint8Array,
  salt: string | Uint8Array,
  info: string | Uint8Array,
  length: number,
): Uint8Array {
  return new Uint8Array(nodeCrypto().hkdfSync('sha256', secret, salt, info, length));
}

/** The SHA-256 digest of the parts, concatenated, as lower-case hex. */
export function sha256Hex(parts: readonly (string | Uint8Array)[]): string {
  const hash = nodeCrypto().createHash('sha256');
  for (const p of parts) hash.update(p);
  return hash.digest('hex');
}

/** Bytes as base64url without padding. */
export function toBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** The bytes of base64url text (characters outside the alphabet are skipped, as `Buffer` does). */
export function fromBase64url(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64url'));
}

/** A buffer of `size` bytes for ASCII text, its contents unset. */
export function asciiBuffer(size: number): Uint8Array {
  return Buffer.allocUnsafe(size);
}

/** The ASCII text of `buf[start, end)`; `buf` from {@link asciiBuffer}. */
export function asciiText(buf: Uint8Array, start: number, end: number): string {
  return (buf as Buffer).toString('latin1', start, end);
}

export function readTextFile(path: string): string {
  return readFileSync(path, 'utf8');
}
