import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlurryError } from '@flurry/core';
import { parseIdsBody } from './parse-ids.js';

const compact = (ids: readonly (bigint | string)[]): Buffer =>
  Buffer.from('{"ids":[' + ids.map((i) => `"${i}"`).join(',') + ']}');
const isBad = (e: unknown): boolean => e instanceof FlurryError && e.code === 'FLURRY_E_CLIENT_BAD_RESPONSE';
const U64_MAX = (1n << 64n) - 1n;

test("GIVEN any strictly increasing list of unsigned 64-bit IDs in the server's compact form THEN the scanner returns exactly those IDs", () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.bigInt({ min: 0n, max: U64_MAX }), { maxLength: 200 }), (raw) => {
      const ids = [...raw].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      assert.deepEqual([...parseIdsBody(compact(ids), ids.length)], ids);
    }),
    { numRuns: 300, seed: 5 },
  );
});

test('GIVEN the edges of each digit count (0, 2^32, 2^53, 10^19, 2^64 − 1) THEN the scanner is exact', () => {
  const ids = [
    0n,
    1n,
    9n,
    4294967295n,
    4294967296n,
    9007199254740991n,
    9007199254740993n,
    999999999999999999n,
    1000000000000000000n,
    9223372036854775807n,
    9223372036854775808n,
    10000000000000000000n,
    U64_MAX,
  ];
  assert.deepEqual([...parseIdsBody(compact(ids), ids.length)], ids);
});

test('GIVEN JSON with whitespace or extra keys (not the compact form) THEN the JSON fallback parses it the same way', () => {
  const body = Buffer.from('{ "ids" : [ "7", "18446744073709551615" ], "note": 1 }\n');
  assert.deepEqual([...parseIdsBody(body, 2)], [7n, U64_MAX]);
  assert.deepEqual([...parseIdsBody(Buffer.from('{"ids":["5"]}\r\n'), 1)], [5n]);
});

test('GIVEN a body that is wrong in any way THEN FLURRY_E_CLIENT_BAD_RESPONSE, never a partial result', () => {
  const cases: Array<[string, number]> = [
    ['{"ids":["1","2"]}', 3], // too few
    ['{"ids":["1","2","3"]}', 2], // too many
    ['{"ids":["2","1"]}', 2], // decreasing
    ['{"ids":["1","1"]}', 2], // repeated
    ['{"ids":["18446744073709551616"]}', 1], // 2^64
    ['{"ids":["99999999999999999999"]}', 1], // 20 digits > 2^64
    ['{"ids":["123456789012345678901"]}', 1], // 21 digits
    ['{"ids":["-1"]}', 1],
    ['{"ids":["1e3"]}', 1],
    ['{"ids":[1]}', 1], // a number, not a string
    ['{"ids":[""]}', 1],
    ['{"id":"1"}', 1],
    ['<html>502 Bad Gateway</html>', 1],
    ['', 1],
    ['{"ids":["1"', 1],
    ['{ "ids": ["3", "2"] }', 2], // decreasing, fallback path
  ];
  for (const [body, n] of cases) assert.throws(() => parseIdsBody(Buffer.from(body), n), isBad, body);
});
