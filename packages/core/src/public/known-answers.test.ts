/**
 * Known-answer vectors: a fixed key and fixed IDs must always give these outputs. If this
 * test fails, the cipher, the key derivation or the string form changed, and every public
 * ID ever issued would stop decoding — change them only with a new key format version.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PublicIdCodec } from './codec.js';

/** Secret bytes 00 01 … 1f under key ID K. */
const KEY = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';

const ENCRYPT_VECTORS: [bits: number, pairs: [id: bigint, encrypted: bigint][]][] = [
  [64, [[0n, 3794176953148616541n], [1n, 737733518083378335n], [2n, 15395687388818077068n], [1859214170478923776n, 10727990515057880452n], [18446744073709551615n, 2682234199773439470n]]],
  [63, [[0n, 2479865911642581566n], [1n, 4354716886823214333n], [2n, 5150680887033834810n], [1859214170478923776n, 4535350042915326487n], [9223372036854775807n, 9219677076998564802n]]],
  [53, [[0n, 2626654794930801n], [1n, 7699877508928896n], [2n, 2689894371518540n], [3731124002279424n, 3922333784163785n], [9007199254740991n, 5499557670822091n]]],
  [41, [[0n, 540034531268n], [1n, 226146574300n], [2n, 1441078147734n], [1580560863232n, 608397293796n], [2199023255551n, 835630735840n]]],
  [32, [[0n, 1483420979n], [1n, 3825982780n], [2n, 3303685157n], [12898304n, 2396547653n], [4294967295n, 1012660927n]]],
  [20, [[0n, 1001726n], [1n, 568764n], [2n, 804982n], [315392n, 956232n], [1048575n, 37461n]]],
  [16, [[0n, 24399n], [1n, 48806n], [2n, 58479n], [53248n, 40795n], [65535n, 65350n]]],
  [8, [[0n, 204n], [1n, 7n], [2n, 251n], [255n, 91n]]],
  [1, [[0n, 1n], [1n, 0n]]],
];

/** [id, base62 64-bit, base58 64-bit, base62 41-bit of (id mod 2^41)] */
const STRING_VECTORS: [bigint, string, string, string][] = [
  [0n, 'K4WHMyxszSaTD', 'K9opQZmaADrUG', 'K9VTFrDIU'],
  [1n, 'K0sUpIIC35LDD', 'K2iKhqYaHBhxm', 'K3yqdyhw8'],
  [1859214170478923776n, 'KCmUJF4zBACyY', 'KRuL9CN52G1ZH', 'KAi5l2fMk'],
  [18446744073709551615n, 'K3C8ezEaoyqsZ', 'K7E7dhAHUBfKx', 'KEi7xPKCH'],
];

describe('public: known-answer vectors', () => {
  it('GIVEN the fixed key THEN encrypt gives the committed values at every width, and decrypt inverts them', () => {
    for (const [bits, pairs] of ENCRYPT_VECTORS) {
      const codec = PublicIdCodec.create({ keys: KEY, bits });
      for (const [id, encrypted] of pairs) {
        assert.equal(codec.encrypt(id), encrypted, `bits ${bits}, id ${id}`);
        assert.equal(codec.decrypt(encrypted), id);
      }
    }
  });

  it('GIVEN the fixed key THEN the string forms are the committed ones and decode back', () => {
    const b62 = PublicIdCodec.create({ keys: KEY });
    const b58 = PublicIdCodec.create({ keys: KEY, alphabet: 'base58' });
    const narrow = PublicIdCodec.create({ keys: KEY, bits: 41 });
    for (const [id, s62, s58, s41] of STRING_VECTORS) {
      assert.equal(b62.encode(id), s62);
      assert.equal(b58.encode(id), s58);
      assert.equal(narrow.encode(id & ((1n << 41n) - 1n)), s41);
      assert.equal(b62.decode(s62), id);
      assert.equal(b58.decode(s58), id);
      assert.equal(narrow.decode(s41), id & ((1n << 41n) - 1n));
    }
  });
});
