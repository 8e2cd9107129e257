/**
 * The platform pieces of `@flurry/core` outside Node.js (a browser, workerd): `#platform` under the `default` condition
 * (`node.ts` under `node`; the same names, docs/runtimes.md). Sleep blocks only where the thread may (else the system
 * clock is `nonBlocking`); SHA-256 and HKDF are plain TypeScript (`sha256.ts`: Web Crypto's are asynchronous only);
 * there is no file system.
 */
import { sha256 } from './sha256.js';

const sleepCell = typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4)) : undefined;

function probeBlocking(): boolean {
  if (sleepCell === undefined || typeof Atomics === 'undefined' || typeof Atomics.wait !== 'function') return false;
  try {
    // Returns 'not-equal' at once where the thread may block; a browser's main thread throws before comparing.
    Atomics.wait(sleepCell, 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether `platformSleep` blocks: where `Atomics.wait` is allowed (not a browser's main thread, not workerd). */
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

/** `Atomics.wait` for `ms` where the thread may block ({@link CAN_BLOCK}); elsewhere returns at once (no busy loop). */
export function platformSleep(ms: number): void {
  if (ms > 0 && CAN_BLOCK && sleepCell !== undefined) Atomics.wait(sleepCell, 0, 0, ms);
}

export { hkdfSha256 } from './sha256.js';

export function sha256Hex(parts: readonly (string | Uint8Array)[]): string {
  return Array.from(sha256(parts), (b) => b.toString(16).padStart(2, '0')).join('');
}

export function toBase64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

// As Node's Buffer reads it: `+` and `/` as `-` and `_`, other characters skipped, nothing after `=`, a lone last
// character dropped.
export function fromBase64url(text: string): Uint8Array {
  const b64 = text.split('=')[0].replace(/[^A-Za-z0-9+/]/g, (c) => (c === '-' ? '+' : c === '_' ? '/' : ''));
  const bin = atob(b64.length % 4 === 1 ? b64.slice(0, -1) : b64);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
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
