// Chaskey-12 (Mouha et al., SAC 2014; ISO/IEC 29192-6), the PRF of the Feistel rounds and of the tag
// (docs/public-ids.md#the-permutation). feistel.ts and ChaskeyBlockMac inline it for speed; the tests check both
// against testing/chaskey-reference.ts.
/** Chaskey's key schedule step: times x in GF(2^128) (little-endian words, reduction 0x87). */
export function chaskeyTimesTwo(k: Uint32Array): Uint32Array {
  const out = new Uint32Array(4);
  out[0] = (k[0] << 1) ^ (k[3] >>> 31 ? 0x87 : 0);
  out[1] = (k[1] << 1) | (k[0] >>> 31);
  out[2] = (k[2] << 1) | (k[1] >>> 31);
  out[3] = (k[3] << 1) | (k[2] >>> 31);
  return out;
}

/**
 * Chaskey-12 as an allocation-free MAC of one 16-byte block under a fixed key (`chaskeyTag(key, block, 12)` with the
 * key schedule precomputed): the public-ID tag. The key words live in a `#private` field, so no inspection shows them.
 */
export class ChaskeyBlockMac {
  /** The four tag words of the last {@link tag} call (int32 representation). */
  readonly out = new Int32Array(4);
  /** K ⊕ K1 (words 0–3), then K1 (words 4–7). */
  readonly #k: Int32Array;

  constructor(key: Uint32Array) {
    if (key.length !== 4) throw new RangeError('ChaskeyBlockMac: the key is four 32-bit words');
    const k1 = chaskeyTimesTwo(key);
    this.#k = new Int32Array(8);
    for (let i = 0; i < 4; i++) {
      this.#k[i] = key[i] ^ k1[i];
      this.#k[4 + i] = k1[i];
    }
  }

  /** Computes the Chaskey-12 tag of the block `(m0, m1, m2, m3)` (little-endian words) into {@link out}. */
  tag(m0: number, m1: number, m2: number, m3: number): void {
    const k = this.#k;
    let v0 = k[0] ^ m0;
    let v1 = k[1] ^ m1;
    let v2 = k[2] ^ m2;
    let v3 = k[3] ^ m3;
    for (let r = 0; r < 12; r++) {
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
    const out = this.out;
    out[0] = v0 ^ k[4];
    out[1] = v1 ^ k[5];
    out[2] = v2 ^ k[6];
    out[3] = v3 ^ k[7];
  }
}
