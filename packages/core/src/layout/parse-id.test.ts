import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout, parseId } from './index.js';

const code = (c: string) => (e: unknown) => e instanceof FlurryError && e.code === c;

test('GIVEN decimal strings, bigints and safe numbers THEN parseId returns the bigint', () => {
  assert.equal(parseId('0'), 0n);
  assert.equal(parseId('18446744073709551615'), 2n ** 64n - 1n);
  assert.equal(parseId('00042'), 42n);
  assert.equal(parseId(42), 42n);
  assert.equal(parseId(123n), 123n);
  assert.equal(parseId('175928847299117063', Layout.from('discord')), 175928847299117063n);
});

test('GIVEN a negative ID in any form THEN FLURRY_E_ID_NEGATIVE', () => {
  assert.throws(() => parseId('-1'), code(ErrorCode.ID_NEGATIVE));
  assert.throws(() => parseId(-1n), code(ErrorCode.ID_NEGATIVE));
  assert.throws(() => parseId(-7), code(ErrorCode.ID_NEGATIVE));
});

test('GIVEN an ID wider than 64 bits or than its layout THEN FLURRY_E_ID_TOO_WIDE', () => {
  assert.throws(() => parseId('18446744073709551616'), code(ErrorCode.ID_TOO_WIDE));
  assert.throws(() => parseId(2n ** 64n), code(ErrorCode.ID_TOO_WIDE));
  assert.throws(() => parseId('123456789012345678901'), code(ErrorCode.ID_TOO_WIDE));
  assert.throws(() => parseId(2n ** 63n, Layout.from('twitter')), code(ErrorCode.ID_TOO_WIDE));
  assert.throws(() => Layout.from('js53').decode(2n ** 53n), code(ErrorCode.ID_TOO_WIDE));
  assert.equal(parseId(2n ** 63n - 1n, Layout.from('twitter')), 2n ** 63n - 1n);
});

test('GIVEN malformed input (empty, whitespace, floats, signs, other bases, imprecise numbers) THEN FLURRY_E_ID_MALFORMED', () => {
  for (const bad of ['', ' 1', '1 ', '1.0', '1e3', '+1', '0x1f', 'abc', '１２', '1_000']) {
    assert.throws(() => parseId(bad), code(ErrorCode.ID_MALFORMED), JSON.stringify(bad));
  }
  assert.throws(() => parseId(1.5), code(ErrorCode.ID_MALFORMED));
  assert.throws(() => parseId(Number.NaN), code(ErrorCode.ID_MALFORMED));
  assert.throws(() => parseId(2 ** 60), code(ErrorCode.ID_MALFORMED));
  assert.throws(() => parseId(null as never), code(ErrorCode.ID_MALFORMED));
});

test('GIVEN any 64-bit value THEN its decimal string parses back to it (property)', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (v) => {
      assert.equal(parseId(v.toString()), v);
    }),
    { numRuns: 500 },
  );
});
