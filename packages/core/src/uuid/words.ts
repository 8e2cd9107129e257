/**
 * The hot-path helpers of {@link UuidGenerator}: the random pool and the writers of a UUID's
 * four words as bytes and as canonical characters.
 */
import { randomFill } from '../random.js';

/** Two lowercase hex digits of each byte. */
export const HEX2: readonly string[] = Array.from({ length: 256 }, (_, i) => (i < 16 ? '0' : '') + i.toString(16));
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

/** Writes a UUID's four words as 16 bytes, big-endian, at `out[at]`; returns `out`. */
export function writeBytes(out: Uint8Array, at: number, w0: number, w1: number, w2: number, w3: number): Uint8Array {
  out[at] = w0 >>> 24;
  out[at + 1] = w0 >>> 16;
  out[at + 2] = w0 >>> 8;
  out[at + 3] = w0;
  out[at + 4] = w1 >>> 24;
  out[at + 5] = w1 >>> 16;
  out[at + 6] = w1 >>> 8;
  out[at + 7] = w1;
  out[at + 8] = w2 >>> 24;
  out[at + 9] = w2 >>> 16;
  out[at + 10] = w2 >>> 8;
  out[at + 11] = w2;
  out[at + 12] = w3 >>> 24;
  out[at + 13] = w3 >>> 16;
  out[at + 14] = w3 >>> 8;
  out[at + 15] = w3;
  return out;
}
