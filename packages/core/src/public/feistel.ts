// A keyed permutation of [0, 2^N), 1 ≤ N ≤ 64: an alternating Feistel network (FF1's structure in radix 2) whose
// round function is Chaskey-12 under HKDF-derived round keys; no cycle-walking (docs/public-ids.md#the-permutation).
import { hkdfSha256 } from '#platform';
import { checkBits } from '../codecs/alphabet.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { chaskeyTimesTwo } from './chaskey.js';

/** Number of Feistel rounds (even, so the parts end in their original order and widths). */
export const FEISTEL_ROUNDS = 12;

/** Rounds of the Chaskey permutation inside each Feistel round function (Chaskey-12). */
const CHASKEY_ROUNDS = 12;
/** "FLRY" as a little-endian word: the fourth word of every round-function block. */
const DOMAIN_WORD = 0x59524c46;
/** HKDF salt: a version label; changing it would change every public ID. */
const HKDF_SALT = 'flurry/public-id/v1';
/** Words stored per round: K ⊕ K1 ⊕ (0, i, N, "FLRY") (4 words), then K1[0]. */
const STRIDE = 5;

/**
 * The keyed N-bit permutation. Create it with {@link FeistelPermutation.fromSecret}; `encryptHalves`/`decryptHalves`
 * are inverse bijections of [0, 2^N).
 */
export class FeistelPermutation {
  /** The width N in bits. */
  readonly bits: number;
  /** Width of the left (high) part, ⌈N/2⌉. */
  private readonly u: number;
  /** Width of the right (low) part, ⌊N/2⌋. */
  private readonly v: number;
  private readonly maskU: number;
  private readonly maskV: number;
  /** 2^v and 2^(32 - v), for splitting and joining without bigint. */
  private readonly powV: number;
  private readonly powHiShift: number;
  /** Per-round precomputed Chaskey state words (see {@link STRIDE}); a #private field so that no inspection shows key material. */
  readonly #rk: Int32Array;
  /** Output of the last `*Halves` call: [hi, lo]. */
  readonly out = new Float64Array(2);

  private constructor(bits: number, roundKeys: Uint32Array) {
    this.bits = bits;
    this.u = Math.ceil(bits / 2);
    this.v = bits - this.u;
    this.maskU = this.u === 32 ? -1 : 2 ** this.u - 1;
    this.maskV = this.v === 32 ? -1 : 2 ** this.v - 1;
    this.powV = 2 ** this.v;
    this.powHiShift = 2 ** (32 - this.v);
    this.#rk = new Int32Array(FEISTEL_ROUNDS * STRIDE);
    for (let i = 0; i < FEISTEL_ROUNDS; i++) {
      const k = roundKeys.subarray(4 * i, 4 * i + 4);
      const k1 = chaskeyTimesTwo(k);
      const m = [0, i, bits, DOMAIN_WORD];
      for (let w = 0; w < 4; w++) this.#rk[STRIDE * i + w] = k[w] ^ k1[w] ^ m[w];
      this.#rk[STRIDE * i + 4] = k1[0];
    }
  }

  /** Derives the round keys from a 256-bit secret by HKDF-SHA256, 16 bytes per round. */
  static fromSecret(secret: Uint8Array, bits: number): FeistelPermutation {
    checkBits(bits);
    if (secret.length !== 32)
      throw new FlurryError(
        ErrorCode.PUBLIC_KEY_INVALID,
        `A public-ID secret must be 32 bytes, got ${secret.length}.`,
        {},
      );
    const info = `feistel-chaskey12;bits=${bits};rounds=${FEISTEL_ROUNDS}`;
    const okm = hkdfSha256(secret, HKDF_SALT, info, 16 * FEISTEL_ROUNDS);
    const words = new Uint32Array(4 * FEISTEL_ROUNDS);
    const dv = new DataView(okm.buffer, okm.byteOffset, okm.byteLength);
    for (let i = 0; i < words.length; i++) words[i] = dv.getUint32(4 * i, true);
    return new FeistelPermutation(bits, words);
  }

  /** Round function i: word 0 of Chaskey-12 over (x, i, N, "FLRY"), `chaskeyTag` inlined (tested against it). */
  roundFunction(i: number, x: number): number {
    const rk = this.#rk;
    const o = STRIDE * i;
    let v0 = rk[o] ^ x;
    let v1 = rk[o + 1];
    let v2 = rk[o + 2];
    let v3 = rk[o + 3];
    for (let r = 0; r < CHASKEY_ROUNDS; r++) {
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
    return v0 ^ rk[o + 4];
  }

  /** Encrypts the in-range N-bit value `hi·2^32 + lo` (hi = 0 when N ≤ 32) into `this.out` as [hi, lo]. */
  encryptHalves(hi: number, lo: number): void {
    const q = Math.floor(lo / this.powV);
    let a = hi * this.powHiShift + q;
    let b = lo - q * this.powV;
    let maskA = this.maskU;
    let maskB = this.maskV;
    for (let i = 0; i < FEISTEL_ROUNDS; i++) {
      const c = ((a ^ this.roundFunction(i, b)) & maskA) >>> 0;
      a = b;
      b = c;
      const m = maskA;
      maskA = maskB;
      maskB = m;
    }
    this.join(a, b);
  }

  /** Inverse of {@link encryptHalves}; the result is in `this.out` as [hi, lo]. */
  decryptHalves(hi: number, lo: number): void {
    const q = Math.floor(lo / this.powV);
    let a = hi * this.powHiShift + q;
    let b = lo - q * this.powV;
    // Before round i the left part is u bits wide when i is even, v bits when i is odd.
    for (let i = FEISTEL_ROUNDS - 1; i >= 0; i--) {
      const maskPrevA = (i & 1) === 0 ? this.maskU : this.maskV;
      const prevA = ((b ^ this.roundFunction(i, a)) & maskPrevA) >>> 0;
      b = a;
      a = prevA;
    }
    this.join(a, b);
  }

  /** (a, b) back to [hi, lo] in `out` (for N ≤ 32, a < 2^(32 − v), so hi is 0). */
  private join(a: number, b: number): void {
    const hi = Math.floor(a / this.powHiShift);
    this.out[0] = hi;
    this.out[1] = (a - hi * this.powHiShift) * this.powV + b;
  }
}
