/**
 * The platform pieces of `@flurry/core` outside Node.js (a browser, workerd): `#platform` under the `default` condition
 * (`node.ts` under `node`; the same names, docs/runtimes.md). Sleep blocks only where the thread may (else the system
 * clock is `nonBlocking`); SHA-256 and HKDF are plain TypeScript (`sha256.ts`: Web Crypto's are asynchronous only);
 * there is no file system.
 */
import { sha256 } from './sha256.js';

/** A cell to wait on, where shared memory exists. */
const sleepCell = typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4)) : undefined;

function probeBlocking(): boolean {
  if (sleepCell === undefined || typeof Atomics === 'undefined' || typeof Atomics.wait !== 'function') return false;
  try {
    // The value differs, so where the thread may block this returns 'not-equal' at once; a browser's main thread throws
    // a TypeError before comparing.
    Atomics.wait(sleepCell, 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `platformSleep` blocks the thread: where `Atomics.wait` is allowed (not a browser's main thread, not
 * workerd).
 */
export const CAN_BLOCK = probeBlocking();

/** Web Crypto's limit per call. */
const RANDOM_CHUNK = 65536;

export function platformRandomFill(buf: Uint8Array): Uint8Array {
  for (let at = 0; at < buf.length; at += RANDOM_CHUNK)
    globalThis.crypto.getRandomValues(buf.subarray(at, Math.min(buf.length, at + RANDOM_CHUNK)));
  return buf;
}

export function monotonicMs(): number {
  return performance.now();
}

/**
 * Blocks the current thread for `ms` milliseconds with `Atomics.wait` where it may block ({@link CAN_BLOCK}); elsewhere
 * returns at once (never a busy loop).
 */
export function platformSleep(ms: number): void {
  if (ms > 0 && CAN_BLOCK && sleepCell !== undefined) Atomics.wait(sleepCell, 0, 0, ms);
}

export { hkdfSha256 } from './sha256.js';

export function sha256Hex(parts: readonly (string | Uint8Array)[]): string {
  let s = '';
  for (const b of sha256(parts)) s += (b < 16 ? '0' : '') + b.toString(16);
  return s;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64URL_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64URL_VALUE[B64URL.charCodeAt(i)] = i;
// Node's Buffer also reads the base64 alphabet's two characters.
B64URL_VALUE[43] = 62; // '+'
B64URL_VALUE[47] = 63; // '/'

export function toBase64url(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let k = 0; k < chars; k++) s += B64URL[(n >>> (18 - 6 * k)) & 63];
  }
  return s;
}

/**
 * The bytes of base64url text (`+` and `/` read as `-` and `_`, other characters outside the alphabet skipped, as
 * Node's `Buffer` does).
 */
export function fromBase64url(text: string): Uint8Array {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? B64URL_VALUE[c] : -1;
    if (v < 0) {
      if (text[i] === '=') break;
      continue;
    }
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >>> bits) & 255);
    }
  }
  return Uint8Array.from(out);
}

export function asciiBuffer(size: number): Uint8Array {
  return new Uint8Array(size);
}

const latin1 = new TextDecoder('latin1');

export function asciiText(buf: Uint8Array, start: number, end: number): string {
  return latin1.decode(buf.subarray(start, end));
}

export function readTextFile(path: string): string {
  throw Object.assign(
    new Error(`no file system in this runtime to read ${JSON.stringify(path)}; pass the keys' text instead`),
    { code: 'ENOSYS' },
  );
}
