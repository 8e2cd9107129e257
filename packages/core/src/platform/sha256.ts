// SHA-256, HMAC-SHA-256 and HKDF-SHA-256 (RFC 6234, 2104, 5869), synchronous, where there is no `node:crypto`
// (Web Crypto's are asynchronous only); platform.test checks they agree with node:crypto.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const utf8 = new TextEncoder();

function bytesOf(part: string | Uint8Array): Uint8Array {
  return typeof part === 'string' ? utf8.encode(part) : part;
}

/** The SHA-256 digest (32 bytes) of the parts, concatenated. */
export function sha256(parts: readonly (string | Uint8Array)[]): Uint8Array {
  const chunks = parts.map(bytesOf);
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const padded = new Uint8Array((Math.floor((length + 8) / 64) + 1) * 64);
  let at = 0;
  for (const c of chunks) {
    padded.set(c, at);
    at += c.length;
  }
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 2 ** 29));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + 4 * i);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) | 0, c, b, a, (t1 + t2) | 0];
    }
    [a, b, c, d, e, f, g, hh].forEach((v, i) => (h[i] += v));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(4 * i, h[i]);
  return out;
}

/** HMAC-SHA-256 of the message parts under `key`. */
export function hmacSha256(key: Uint8Array, parts: readonly (string | Uint8Array)[]): Uint8Array {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256([key]) : key);
  const inner = block.map((b) => b ^ 0x36);
  const outer = block.map((b) => b ^ 0x5c);
  return sha256([outer, sha256([inner, ...parts])]);
}

/** HKDF-SHA-256 (extract, then expand to `length` bytes, at most 8160), as `node:crypto`'s `hkdfSync('sha256', …)`. */
export function hkdfSha256(
  secret: Uint8Array,
  salt: string | Uint8Array,
  info: string | Uint8Array,
  length: number,
): Uint8Array {
  if (!Number.isInteger(length) || length < 1 || length > 255 * 32)
    throw new RangeError(`hkdfSha256 takes a length from 1 to 8160 bytes; got ${String(length)}`);
  const prk = hmacSha256(bytesOf(salt), [secret]);
  const out = new Uint8Array(length);
  let t: Uint8Array = new Uint8Array(0);
  for (let i = 1, at = 0; at < length; i++) {
    t = hmacSha256(prk, [t, bytesOf(info), new Uint8Array([i])]);
    out.set(t.subarray(0, Math.min(32, length - at)), at);
    at += 32;
  }
  return out;
}
