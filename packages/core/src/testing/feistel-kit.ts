/**
 * Whole-value calls on a {@link FeistelPermutation} for its tests: the cipher calls only `encryptHalves` and
 * `decryptHalves` (with its own range checks), so the number and bigint forms, with their range checks, live here.
 */
import { MAX_FOR_BITS, TWO32, joinU64, splitU64 } from '../codecs/alphabet.js';
import { ErrorCode, FlurryError } from '../errors.js';
import type { FeistelPermutation } from '../public/feistel.js';

/** Encrypts a number of at most N (≤ 53) bits; no range check. */
export function encryptNumber(p: FeistelPermutation, x: number): number {
  const hi = Math.floor(x / TWO32);
  p.encryptHalves(hi, x - hi * TWO32);
  return p.out[0] * TWO32 + p.out[1];
}

/** Inverse of {@link encryptNumber}. */
export function decryptNumber(p: FeistelPermutation, x: number): number {
  const hi = Math.floor(x / TWO32);
  p.decryptHalves(hi, x - hi * TWO32);
  return p.out[0] * TWO32 + p.out[1];
}

/** Encrypts a value in [0, 2^N); `FLURRY_E_ID_NEGATIVE` / `FLURRY_E_ID_TOO_WIDE` / `FLURRY_E_ID_MALFORMED` outside. */
export function encrypt(p: FeistelPermutation, x: bigint): bigint {
  split(p, x);
  p.encryptHalves(p.out[0], p.out[1]);
  return joinU64(p.out[0], p.out[1]);
}

/** Inverse of {@link encrypt}, with the same range checks. */
export function decrypt(p: FeistelPermutation, x: bigint): bigint {
  split(p, x);
  p.decryptHalves(p.out[0], p.out[1]);
  return joinU64(p.out[0], p.out[1]);
}

function split(p: FeistelPermutation, x: bigint): void {
  if (typeof x !== 'bigint') {
    throw new FlurryError(ErrorCode.ID_MALFORMED, `Expected a bigint in [0, 2^${p.bits}), got a ${typeof x}.`, {});
  }
  if (x < 0n)
    throw new FlurryError(ErrorCode.ID_NEGATIVE, `An ID cannot be negative, got ${x}.`, { value: x.toString() });
  if (x > MAX_FOR_BITS[p.bits]) {
    throw new FlurryError(
      ErrorCode.ID_TOO_WIDE,
      `The value ${x} does not fit ${p.bits} bits (largest ${MAX_FOR_BITS[p.bits]}).`,
      { value: x.toString(), bits: p.bits },
    );
  }
  splitU64(x, p.out);
}
