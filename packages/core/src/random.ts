// Random names and tokens (lease tokens, holder IDs, file names) that must not repeat across a fleet; none is secret.
import { platformRandomFill } from '#platform';

/** Fills `buf` with random bytes from the operating system's random source. */
export const randomFill: (buf: Uint8Array) => Uint8Array = platformRandomFill;

/** `bytes` random bytes as lower-case hex (`2 × bytes` characters). */
export function randomHex(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024)
    throw new RangeError(`randomHex takes a byte count from 1 to 1024; got ${String(bytes)}`);
  return Array.from(randomFill(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A uniformly random integer from 0 to `n − 1` (`1 ≤ n ≤ 2^48`), e.g. where a registry starts probing slots. */
export function randomBelow(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 2 ** 48)
    throw new RangeError(`randomBelow takes an integer bound from 1 to 2^48; got ${String(n)}`);
  // Rejection sampling on 48-bit draws: unbiased; each draw is rejected with probability below 1/2, so 64 draws all
  // rejected (then the last is used, biased by under 2^-48) happens with probability below 2^-64.
  const limit = 2 ** 48 - (2 ** 48 % n);
  const buf = new Uint8Array(6);
  let v = 0;
  for (let round = 0; round < 64; round++) {
    randomFill(buf);
    v = buf[0] * 2 ** 40 + buf[1] * 2 ** 32 + buf[2] * 2 ** 24 + buf[3] * 2 ** 16 + buf[4] * 2 ** 8 + buf[5];
    if (v < limit) break;
  }
  return v % n;
}
