/**
 * Known-answer vectors: a fixed key and fixed IDs must always give these outputs. If this
 * test fails, the cipher, the key derivation or the string form changed, and every public
 * ID ever issued would stop decoding — change them only with a new format version.
 *
 * The integer vectors (ENCRYPT_VECTORS) pin the Feistel permutation and are unchanged since
 * format 1; the string vectors are those of format 2 (with the authentication tag), whose
 * tag is also recomputed here from the reference Chaskey implementation, so another
 * implementation can check itself step by step: tag key, MAC block, MAC words, tag value.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hkdfSync } from 'node:crypto';
import { chaskeyTag } from '../testing/chaskey-reference.js';
import { PUBLIC_ID_FORMAT_VERSION, PublicIdCipher } from './cipher.js';

/** Secret bytes 00 01 … 1f under key ID K. */
const KEY = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';

const ENCRYPT_VECTORS: [bits: number, pairs: [id: bigint, encrypted: bigint][]][] = [
  [
    64,
    [
      [0n, 3794176953148616541n],
      [1n, 737733518083378335n],
      [2n, 15395687388818077068n],
      [1859214170478923776n, 10727990515057880452n],
      [18446744073709551615n, 2682234199773439470n],
    ],
  ],
  [
    63,
    [
      [0n, 2479865911642581566n],
      [1n, 4354716886823214333n],
      [2n, 5150680887033834810n],
      [1859214170478923776n, 4535350042915326487n],
      [9223372036854775807n, 9219677076998564802n],
    ],
  ],
  [
    53,
    [
      [0n, 2626654794930801n],
      [1n, 7699877508928896n],
      [2n, 2689894371518540n],
      [3731124002279424n, 3922333784163785n],
      [9007199254740991n, 5499557670822091n],
    ],
  ],
  [
    41,
    [
      [0n, 540034531268n],
      [1n, 226146574300n],
      [2n, 1441078147734n],
      [1580560863232n, 608397293796n],
      [2199023255551n, 835630735840n],
    ],
  ],
  [
    32,
    [
      [0n, 1483420979n],
      [1n, 3825982780n],
      [2n, 3303685157n],
      [12898304n, 2396547653n],
      [4294967295n, 1012660927n],
    ],
  ],
  [
    20,
    [
      [0n, 1001726n],
      [1n, 568764n],
      [2n, 804982n],
      [315392n, 956232n],
      [1048575n, 37461n],
    ],
  ],
  [
    16,
    [
      [0n, 24399n],
      [1n, 48806n],
      [2n, 58479n],
      [53248n, 40795n],
      [65535n, 65350n],
    ],
  ],
  [
    8,
    [
      [0n, 204n],
      [1n, 7n],
      [2n, 251n],
      [255n, 91n],
    ],
  ],
  [
    1,
    [
      [0n, 1n],
      [1n, 0n],
    ],
  ],
];

/** [id, base62 64-bit, base58 64-bit, base62 41-bit of (id mod 2^41)]: format 2 (key ID, encrypted ID, tag, check character). */
const STRING_VECTORS: [bigint, string, string, string][] = [
  [0n, 'K4WHMyxszSaTY5mJ', 'K9opQZmaADrUYcJR', 'K9VTFrDIKoEc'],
  [1n, 'K0sUpIIC35LDvZI3', 'K2iKhqYaHBhxitDg', 'K3yqdyhwvrmh'],
  [1859214170478923776n, 'KCmUJF4zBACyLOHw', 'KRuL9CN52G1ZjyEB', 'KAi5l2fMJIbR'],
  [18446744073709551615n, 'K3C8ezEaoyqs2gau', 'K7E7dhAHUBfKP4h1', 'KEi7xPKCmOeN'],
];

/** The tag key of KEY: HKDF-SHA256(secret, salt "flurry/public-id/v2", info "tag;chaskey12", 16 bytes). */
const TAG_KEY_HEX = '0cb21453f1f89c2870d31bf79d6bafb6';

/** [bits, alphabet, id, encrypted value, Chaskey-12 MAC words (hex), tag value, tag characters]. */
const TAG_VECTORS: [number, 'base62' | 'base58', bigint, bigint, string, number, string][] = [
  [64, 'base62', 0n, 3794176953148616541n, '5440810e 3f404061 7938b0cc 7d3a22cf', 131054, 'Y5m'],
  [64, 'base62', 1n, 737733518083378335n, '4ac304e8 dc74cc85 48b8072e b8d9a707', 221296, 'vZI'],
  [64, 'base58', 0n, 3794176953148616541n, 'b431a72b d5f35c6c 685cae80 5f007c2f', 106331, 'YcJ'],
  [64, 'base58', 1n, 737733518083378335n, 'ce8a222e 13ab3b68 42f6f336 e0fb48c8', 140894, 'itD'],
  [63, 'base62', 0n, 2479865911642581566n, '8e17ec92 d3a4e85b 4166dde4 d1d05176', 88322, 'MyY'],
  [63, 'base62', 1n, 4354716886823214333n, '210dc6ac aa38728e a6c34fc7 f6e89c6b', 76292, 'JqW'],
  [41, 'base62', 0n, 540034531268n, '7d0e4f0a 2fe70221 81832056 4d04eb83', 79994, 'KoE'],
  [41, 'base62', 1n, 226146574300n, 'e2e80b22 ccd86694 689ac452 d898f957', 222442, 'vrm'],
];

describe('public: known-answer vectors', () => {
  it('GIVEN the fixed key THEN encrypt gives the committed values at every width, and decrypt inverts them', () => {
    for (const [bits, pairs] of ENCRYPT_VECTORS) {
      const codec = PublicIdCipher.create({ keys: KEY, bits });
      for (const [id, encrypted] of pairs) {
        assert.equal(codec.encrypt(id), encrypted, `bits ${bits}, id ${id}`);
        assert.equal(codec.decrypt(encrypted), id);
      }
    }
  });

  it('GIVEN the fixed key THEN the string forms are the committed ones and decode back', () => {
    const b62 = PublicIdCipher.create({ keys: KEY });
    const b58 = PublicIdCipher.create({ keys: KEY, alphabet: 'base58' });
    const narrow = PublicIdCipher.create({ keys: KEY, bits: 41 });
    for (const [id, s62, s58, s41] of STRING_VECTORS) {
      assert.equal(b62.encode(id), s62);
      assert.equal(b58.encode(id), s58);
      assert.equal(narrow.encode(id & ((1n << 41n) - 1n)), s41);
      assert.equal(b62.decode(s62), id);
      assert.equal(b58.decode(s58), id);
      assert.equal(narrow.decode(s41), id & ((1n << 41n) - 1n));
    }
  });

  it('GIVEN the fixed key THEN the tag key, MAC words and tag of each string are the committed ones, recomputed from the reference Chaskey', () => {
    const secret = Uint8Array.from({ length: 32 }, (_, i) => i);
    const tagKey = Buffer.from(hkdfSync('sha256', secret, 'flurry/public-id/v2', 'tag;chaskey12', 16));
    assert.equal(tagKey.toString('hex'), TAG_KEY_HEX);
    const keyWords = Uint32Array.from({ length: 4 }, (_, i) => tagKey.readUInt32LE(4 * i));
    assert.equal(PUBLIC_ID_FORMAT_VERSION, 2);
    for (const [bits, alphabet, id, encrypted, macHex, tagValue, tagChars] of TAG_VECTORS) {
      const codec = PublicIdCipher.create({ keys: KEY, bits, alphabet });
      const radix = alphabet === 'base62' ? 62 : 58;
      assert.equal(codec.encrypt(id), encrypted, 'the permutation is unchanged');
      // Block: encrypted low word, high word, N | radix << 8 | "K" << 16 | version << 24, "FTAG" (little-endian words).
      const block = Uint32Array.of(
        Number(encrypted & 0xffffffffn),
        Number(encrypted >> 32n),
        bits | (radix << 8) | (0x4b << 16) | (2 << 24),
        0x47415446,
      );
      const mac = chaskeyTag(keyWords, block, 12);
      assert.equal([...mac].map((w) => w.toString(16).padStart(8, '0')).join(' '), macHex, `${bits} ${alphabet} ${id}`);
      assert.equal(((mac[1] >>> 11) * 2 ** 32 + mac[0]) % radix ** 3, tagValue);
      const s = codec.encode(id);
      const chars = s.slice(1 + codec.payloadLength, 1 + codec.payloadLength + 3);
      assert.equal(chars, tagChars);
      const digits =
        alphabet === 'base62'
          ? '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
          : '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
      assert.equal(
        [...chars].reduce((v, ch) => v * radix + digits.indexOf(ch), 0),
        tagValue,
        'the tag is its value in 3 digits, most significant first',
      );
      assert.equal(codec.decode(s), id);
    }
  });
});
