/**
 * The general form of Chaskey (any number of rounds, a fresh key schedule per call): the reference the known-answer
 * tests check, and against which the inlined arithmetic of `public/feistel.ts` and `ChaskeyBlockMac` is tested.
 */
import { chaskeyTimesTwo } from '../public/chaskey.js';

/** Applies `rounds` rounds of the Chaskey permutation π to the four words of `v` in place. */
export function chaskeyPermute(v: Uint32Array, rounds: number): void {
  let v0 = v[0] | 0;
  let v1 = v[1] | 0;
  let v2 = v[2] | 0;
  let v3 = v[3] | 0;
  for (let r = 0; r < rounds; r++) {
    v0 = (v0 + v1) | 0;
    v1 = (v1 << 5) | (v1 >>> 27);
    v1 ^= v0;
    v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0;
    v3 = (v3 << 8) | (v3 >>> 24);
    v3 ^= v2;
    v0 = (v0 + v3) | 0;
    v3 = (v3 << 13) | (v3 >>> 19);
    v3 ^= v0;
    v2 = (v2 + v1) | 0;
    v1 = (v1 << 7) | (v1 >>> 25);
    v1 ^= v2;
    v2 = (v2 << 16) | (v2 >>> 16);
  }
  v[0] = v0;
  v[1] = v1;
  v[2] = v2;
  v[3] = v3;
}

/**
 * The Chaskey tag of exactly one full 16-byte message block (four little-endian words):
 * `π(K ⊕ K1 ⊕ M) ⊕ K1`. With `rounds = 8` this is the original Chaskey, with 12 Chaskey-12.
 */
export function chaskeyTag(key: Uint32Array, block: Uint32Array, rounds: number): Uint32Array {
  const k1 = chaskeyTimesTwo(key);
  const v = new Uint32Array(4);
  for (let i = 0; i < 4; i++) v[i] = key[i] ^ k1[i] ^ block[i];
  chaskeyPermute(v, rounds);
  for (let i = 0; i < 4; i++) v[i] ^= k1[i];
  return v;
}
