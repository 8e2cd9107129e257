/**
 * A check character over a 2n-character alphabet (n odd) that catches every changed character and adjacent swap:
 * Verhoeff's scheme on the dihedral group D_n (Gumm 1985): docs/public-ids.md#the-check-character-and-typos.
 */
export class DihedralCheck {
  /** The alphabet (character of value 0 is the identity). */
  readonly alphabet: string;
  private readonly size: number;
  private readonly mul: Uint8Array;
  private readonly inv: Uint8Array;
  /** `phiPow[e * size + x]` = φ^e(x), for e ≤ {@link MAX_LENGTH}. */
  private readonly phiPow: Uint8Array;
  private readonly values: Int16Array;

  /** Longest string (check character included) this instance handles. */
  static readonly MAX_LENGTH = 64;

  constructor(alphabet: string) {
    const size = alphabet.length;
    const n = size / 2;
    if (!Number.isInteger(n) || n % 2 === 0 || n < 3 || size > 255)
      throw new RangeError('DihedralCheck: alphabet size must be 2·odd, 6..254');
    this.alphabet = alphabet;
    this.size = size;
    this.values = new Int16Array(128).fill(-1);
    for (let i = 0; i < size; i++) this.values[alphabet.charCodeAt(i)] = i;
    // The group tables, in plain loops (built at every CLI start that encodes or decodes a public ID, where a closure
    // per entry cost over 1 ms): (a,0)·(b,g) = (a + b mod n, g); (a,1)·(b,g) = (a − b mod n, 1 ⊕ g).
    this.mul = new Uint8Array(size * size);
    this.inv = new Uint8Array(size);
    for (let x = 0; x < size; x++) {
      const row = x * size;
      const s = x < n ? 0 : n; // x is r^a or, from n on, r^a·s with a = x − n
      const a = x - s;
      for (let b = 0; b < n; b++) {
        const k = s === 0 ? (a + b) % n : (a - b + n) % n;
        this.mul[row + b] = s + k;
        this.mul[row + n + b] = n - s + k;
      }
      this.inv[x] = s !== 0 || x === 0 ? x : n - x; // reflections are involutions
    }
    // φ^e(r^k) = r^((−1)^e·k) and φ^e(r^k·s) = r^(k+e)·s.
    const maxE = DihedralCheck.MAX_LENGTH;
    this.phiPow = new Uint8Array((maxE + 1) * size);
    for (let e = 0; e <= maxE; e++) {
      const row = e * size;
      const shift = e % n;
      for (let k = 0; k < n; k++) {
        this.phiPow[row + k] = e % 2 === 1 && k !== 0 ? n - k : k;
        this.phiPow[row + n + k] = n + (k + shift < n ? k + shift : k + shift - n);
      }
    }
  }

  /** Group product of two character values (exposed for the exhaustive tests). */
  multiply(x: number, y: number): number {
    return this.mul[x * this.size + y];
  }

  /** φ^e(x) (exposed for the exhaustive tests). */
  phi(x: number, e = 1): number {
    return this.phiPow[e * this.size + x];
  }

  /** The check character to append to `body` (alphabet characters only, at most MAX_LENGTH − 1; unchecked). */
  checkChar(body: string): string {
    return this.alphabet[this.checkValue(this.valuesOf(body), body.length)];
  }

  /** {@link checkChar} on the character values `values[0 … length)` (unchecked; `length` ≤ MAX_LENGTH − 1). */
  checkValue(values: ArrayLike<number>, length: number): number {
    const size = this.size;
    const phiPow = this.phiPow;
    const mul = this.mul;
    let acc = 0;
    for (let j = 0; j < length; j++) acc = mul[acc * size + phiPow[(length - j) * size + values[j]]];
    return this.inv[acc];
  }

  /** True when `values[length − 1]` is the check value of `values[0 … length − 1)`. */
  verifyValues(values: ArrayLike<number>, length: number): boolean {
    return this.checkValue(values, length - 1) === values[length - 1];
  }

  /** True when the last character of `full` (alphabet characters only) is the check character of the rest. */
  verify(full: string): boolean {
    return this.verifyValues(this.valuesOf(full), full.length);
  }

  private valuesOf(text: string): number[] {
    return Array.from(text, (ch) => this.values[ch.charCodeAt(0)]);
  }
}
