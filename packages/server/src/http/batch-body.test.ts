import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BatchBodyWriter } from './batch-body.js';

const fillWith = (values: bigint[]) => (a: BigUint64Array, o: number, n: number) => {
  for (let i = 0; i < n; i++) a[o + i] = values[i];
  return n;
};

test('GIVEN any 64-bit IDs THEN the body is exactly {"ids":[decimal strings]} as BigInt#toString writes them', () => {
  const writer = new BatchBodyWriter(64);
  const edges = [
    0n,
    1n,
    9n,
    10n,
    999_999n,
    1_000_000n,
    1_000_001n,
    4_294_967_295n,
    4_294_967_296n,
    2n ** 53n - 1n,
    2n ** 53n,
    2n ** 63n - 1n,
    2n ** 63n,
    2n ** 64n - 1n,
    1859214170478923776n,
  ];
  const check = (values: bigint[]) => {
    const body = writer.write(values.length, fillWith(values)).toString('latin1');
    assert.equal(body, JSON.stringify({ ids: values.map(String) }));
  };
  check(edges);
  check([5n]);
  fc.assert(
    fc.property(fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { minLength: 1, maxLength: 64 }), check),
    { numRuns: 2000 },
  );
  // Runs of consecutive IDs (the generator's usual output) that cross digit and 10^6 boundaries.
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 100n }), fc.integer({ min: 1, max: 64 }), (start, n) =>
      check(Array.from({ length: n }, (_, i) => start + BigInt(i))),
    ),
    { numRuns: 2000 },
  );
  check(Array.from({ length: 64 }, (_, i) => 999_990n + BigInt(i)));
  // Issued in chunks (one tick's worth at a time): the same body, every ID asked for once.
  const chunked = new BatchBodyWriter(64, 7);
  const values = Array.from({ length: 50 }, (_, i) => 1859214170478923776n + BigInt(i) * 4096n);
  const calls: number[] = [];
  const body = chunked.write(50, (a, o, n) => {
    calls.push(n);
    for (let i = 0; i < n; i++) a[o + i] = values[o + i];
    return n;
  });
  assert.equal(body.toString('latin1'), JSON.stringify({ ids: values.map(String) }));
  assert.deepEqual(calls, [7, 7, 7, 7, 7, 7, 7, 1]);
  check(Array.from({ length: 64 }, (_, i) => 1_000_000_000_000n * 999_999n + 999_980n + BigInt(i)));
});

test('GIVEN recycled bodies THEN their buffers are reused and later bodies are still exact', () => {
  const writer = new BatchBodyWriter(8);
  const values = [1n, 22n, 333n, 4444n, 2n ** 63n, 6n, 7n, 8n];
  const first = writer.write(8, fillWith(values));
  const backing = first.buffer;
  writer.recycle(first);
  const second = writer.write(3, fillWith([9n, 10n, 11n]));
  assert.equal(second.buffer, backing, 'the recycled buffer is reused');
  assert.equal(second.toString('latin1'), '{"ids":["9","10","11"]}');
  const third = writer.write(8, fillWith(values));
  assert.notEqual(third.buffer, backing, 'a body still in use is never handed out twice');
  assert.equal(third.toString('latin1'), JSON.stringify({ ids: values.map(String) }));
});
