import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chaskeyPermute, chaskeyTag } from '../testing/chaskey-reference.js';
import { ChaskeyBlockMac, chaskeyTimesTwo } from './chaskey.js';

const REF_KEY = Uint32Array.of(0x833d3433, 0x009f389f, 0x2398e64f, 0x417acf39);
/** The 16-byte message 00 01 … 0f as little-endian words. */
const MSG16 = Uint32Array.of(0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c);

const hex = (a: Uint32Array): string[] => [...a].map((w) => w.toString(16).padStart(8, '0'));

describe('public: Chaskey round function', () => {
  it('GIVEN the designers’ reference key and the 16-byte message 00..0f THEN 8-round Chaskey gives the published tag', () => {
    // Mouha's reference implementation, test vector for message length 16.
    assert.deepEqual(hex(chaskeyTag(REF_KEY, MSG16, 8)), ['79271ca9', 'd66a1c71', '81ca474e', '49831cad']);
  });

  it('GIVEN fixed keys and messages THEN Chaskey-12 gives the tags of the C reference construction', () => {
    // Computed with the reference C macros (ROUND ×12, TIMESTWO) for one full block.
    assert.deepEqual(hex(chaskeyTag(REF_KEY, MSG16, 12)), ['5dd0e2a9', 'fb5eac8c', '633a392e', '500c36f3']);
    assert.deepEqual(
      hex(
        chaskeyTag(
          Uint32Array.of(0xffffffff, 0x80000000, 0x12345678, 0xfedcba98),
          Uint32Array.of(0xdeadbeef, 0, 0xffffffff, 0x7fffffff),
          12,
        ),
      ),
      ['2b066a48', 'a0dc3b3a', '8f37a410', '9b859ee8'],
    );
  });

  it('GIVEN any 128-bit key THEN times-two is doubling in GF(2^128) modulo x^128 + x^7 + x^2 + x + 1', () => {
    const toBig = (w: Uint32Array): bigint => w.reduceRight((acc, x) => (acc << 32n) | BigInt(x), 0n);
    fc.assert(
      fc.property(fc.uint32Array({ minLength: 4, maxLength: 4 }), (k) => {
        const x = toBig(k);
        let expect = x << 1n;
        if (expect >> 128n) expect = (expect & ((1n << 128n) - 1n)) ^ 0x87n;
        assert.equal(toBig(chaskeyTimesTwo(k)), expect);
      }),
    );
  });

  it('GIVEN different states THEN the permutation maps them to different states (a sample of injectivity)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const v = Uint32Array.of(i, 0, 0, 0);
      chaskeyPermute(v, 12);
      seen.add(hex(v).join(''));
    }
    assert.equal(seen.size, 5000);
  });

  it('GIVEN any key and block THEN ChaskeyBlockMac (precomputed key schedule, allocation-free) gives the Chaskey-12 tag', () => {
    const mac = new ChaskeyBlockMac(REF_KEY);
    mac.tag(MSG16[0], MSG16[1], MSG16[2], MSG16[3]);
    assert.deepEqual(hex(Uint32Array.from(mac.out)), ['5dd0e2a9', 'fb5eac8c', '633a392e', '500c36f3']);
    fc.assert(
      fc.property(
        fc.uint32Array({ minLength: 4, maxLength: 4 }),
        fc.uint32Array({ minLength: 4, maxLength: 4 }),
        (k, m) => {
          const mac = new ChaskeyBlockMac(k);
          mac.tag(m[0], m[1], m[2], m[3]);
          assert.deepEqual(Uint32Array.from(mac.out), chaskeyTag(k, m, 12));
        },
      ),
      { numRuns: 2000 },
    );
    assert.throws(() => new ChaskeyBlockMac(new Uint32Array(3)), RangeError);
  });
});
