/**
 * The hot-path helpers of {@link UuidGenerator}: the random pool and the writers of a UUID's
 * four words as bytes and as canonical characters.
 */
import { randomFill } from '../random.js';
import { HEX2 } from './forms.js';

/** UUIDs per string a canonical batch reads at once (see `canonicalBatch`). */
export const TEXT_CHUNK = 1024;
/** The ASCII codes of {@link HEX2}: byte `b`'s two hex digits at `2b` and `2b + 1`. @example `HEX_CODES[0xff * 2] === 102 // 'f'` */
export const HEX_CODES = Uint8Array.from(HEX2.join(''), (ch) => ch.charCodeAt(0));

/**
 * Random words shared by the generators of this thread, 64 KiB at a time from Web Crypto's
 * `getRandomValues` (OpenSSL's CSPRNG, in process: the kernel's random device costs a system
 * call whose time, per UUID, was more than all the rest of `nextBytes()`), or from the
 * kernel's device where Web Crypto is missing. Web Crypto loads on the first refill only,
 * so importing the core costs nothing for it.
 */
export const pool = new Uint32Array(16384);
/** Words in {@link pool}. */
export const POOL_WORDS = pool.length;
/** Where the next unused word of {@link pool} is. */
export const cursor = { at: POOL_WORDS };
/** Refills {@link pool} and rewinds {@link cursor}. */
export function refill(): void {
  const webCrypto = globalThis.crypto;
  if (webCrypto !== undefined && typeof webCrypto.getRandomValues === 'function') webCrypto.getRandomValues(pool);
  else randomFill(new Uint8Array(pool.buffer));
  cursor.at = 0;
}

/** Writes the 36 ASCII characters of a UUID's canonical form at `b[at]`. */
export function writeCanonical(b: Uint8Array, at: number, w0: number, w1: number, w2: number, w3: number): void {
  const c = HEX_CODES;
  const put = (i: number, byte: number) => {
    b[i] = c[byte * 2];
    b[i + 1] = c[byte * 2 + 1];
  };
  put(at, w0 >>> 24);
  put(at + 2, (w0 >>> 16) & 255);
  put(at + 4, (w0 >>> 8) & 255);
  put(at + 6, w0 & 255);
  b[at + 8] = 45;
  put(at + 9, w1 >>> 24);
  put(at + 11, (w1 >>> 16) & 255);
  b[at + 13] = 45;
  put(at + 14, (w1 >>> 8) & 255);
  put(at + 16, w1 & 255);
  b[at + 18] = 45;
  put(at + 19, w2 >>> 24);
  put(at + 21, (w2 >>> 16) & 255);
  b[at + 23] = 45;
  put(at + 24, (w2 >>> 8) & 255);
  put(at + 26, w2 & 255);
  put(at + 28, w3 >>> 24);
  put(at + 30, (w3 >>> 16) & 255);
  put(at + 32, (w3 >>> 8) & 255);
  put(at + 34, w3 & 255);
}
