import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlurryError } from '../errors.js';
import { expectCode } from '../test-support.js';
import { jsonReplacer, jsonReviver, toJSONSafe } from './json.js';

const MAX64 = (1n << 64n) - 1n;

describe('codecs: JSON helpers', () => {
  it('GIVEN records of 64-bit IDs THEN stringify with jsonReplacer and parse with jsonReviver return them exactly', () => {
    const record = fc.record({
      id: fc.bigInt({ min: 0n, max: MAX64 }),
      parentId: fc.option(fc.bigInt({ min: 0n, max: MAX64 }), { nil: null }),
      ids: fc.array(fc.bigInt({ min: 0n, max: MAX64 }), { maxLength: 5 }),
      name: fc.string(),
      count: fc.integer(),
    });
    fc.assert(
      fc.property(record, (generated) => {
        const r = { ...generated }; // a plain object (fast-check builds null-prototype records)
        const text = JSON.stringify(r, jsonReplacer);
        assert.deepEqual(JSON.parse(text, jsonReviver(['id', 'parentId', 'ids'])), r);
        assert.deepEqual(JSON.parse(JSON.stringify(toJSONSafe(r)), jsonReviver(['id', 'parentId', 'ids'])), r);
      }),
      { numRuns: 500 },
    );
  });

  it('GIVEN bigints THEN jsonReplacer writes decimal strings and leaves everything else alone', () => {
    assert.equal(
      JSON.stringify({ id: MAX64, n: 1, s: 'x', a: [1n, null] }, jsonReplacer),
      '{"id":"18446744073709551615","n":1,"s":"x","a":["1",null]}',
    );
  });

  it('GIVEN a key name, a list or a predicate THEN only those keys are revived, nested at any depth', () => {
    const text = '{"id":"7","other":"7","child":{"id":"8"},"list":[{"id":"9"}]}';
    assert.deepEqual(JSON.parse(text, jsonReviver('id')), {
      id: 7n,
      other: '7',
      child: { id: 8n },
      list: [{ id: 9n }],
    });
    assert.deepEqual(JSON.parse(text, jsonReviver(new Set(['other']))), {
      id: '7',
      other: 7n,
      child: { id: '8' },
      list: [{ id: '9' }],
    });
    assert.deepEqual(
      JSON.parse(
        '{"orderId":"1","userId":2,"x":"3"}',
        jsonReviver((k) => k.endsWith('Id')),
      ),
      { orderId: 1n, userId: 2n, x: '3' },
    );
    assert.deepEqual(JSON.parse('{"id":null,"ids":["1",null,2]}', jsonReviver(['id', 'ids'])), {
      id: null,
      ids: [1n, null, 2n],
    });
  });

  it('GIVEN the runtime passes the source text THEN a number above 2^53 revives exactly', () => {
    const reviver = jsonReviver('id');
    assert.equal(reviver.call({}, 'id', 9007199254740992, { source: '9007199254740993' }), 9007199254740993n);
  });

  it('GIVEN a value that is not an ID under a chosen key THEN reviving throws a coded error, never a wrong ID', () => {
    const r = jsonReviver(['id']);
    expectCode(() => JSON.parse('{"id":9007199254740993}', r), 'FLURRY_E_ID_MALFORMED', /already rounded/);
    expectCode(() => JSON.parse('{"id":[9007199254740993]}', r), 'FLURRY_E_ID_MALFORMED', /already rounded/);
    expectCode(() => JSON.parse('{"id":"12a"}', r), 'FLURRY_E_ID_MALFORMED', /decimal string/);
    expectCode(() => JSON.parse('{"id":"-1"}', r), 'FLURRY_E_ID_MALFORMED');
    expectCode(() => JSON.parse('{"id":""}', r), 'FLURRY_E_ID_MALFORMED');
    expectCode(() => JSON.parse('{"id":-1}', r), 'FLURRY_E_ID_MALFORMED');
    expectCode(() => JSON.parse('{"id":1.5}', r), 'FLURRY_E_ID_MALFORMED');
    expectCode(() => JSON.parse('{"id":true}', r), 'FLURRY_E_ID_MALFORMED');
    expectCode(() => JSON.parse('{"id":{"x":1}}', r), 'FLURRY_E_ID_MALFORMED');
    expectCode(() => JSON.parse('{"id":"18446744073709551616"}', r), 'FLURRY_E_ID_TOO_WIDE', /does not fit 64 bits/);
    expectCode(
      () => JSON.parse('{"id":"4096"}', jsonReviver('id', { bits: 12 })),
      'FLURRY_E_ID_TOO_WIDE',
      /does not fit 12 bits/,
    );
    assert.equal((JSON.parse('{"id":"4095"}', jsonReviver('id', { bits: 12 })) as { id: bigint }).id, 4095n);
    expectCode(() => jsonReviver('id', { bits: 65 }), 'FLURRY_E_INVALID_OPTION');
  });

  it('GIVEN nested values, typed arrays, dates and errors THEN toJSONSafe copies them with bigints as strings', () => {
    const src = {
      id: 5n,
      batch: [6n, 7n],
      arr: BigUint64Array.of(1n, MAX64),
      at: new Date(0),
      err: new FlurryError('FLURRY_E_X', 'm', { v: 1n }),
      deep: { x: [{ y: 2n }] },
      s: 'a',
      n: 1,
      u: undefined,
    };
    const out = toJSONSafe(src);
    assert.deepEqual(out, {
      id: '5',
      batch: ['6', '7'],
      arr: ['1', '18446744073709551615'],
      at: '1970-01-01T00:00:00.000Z',
      err: { code: 'FLURRY_E_X', message: 'm', details: { v: '1' } },
      deep: { x: [{ y: '2' }] },
      s: 'a',
      n: 1,
      u: undefined,
    });
    assert.equal(src.id, 5n, 'the input is not modified');
    assert.equal(toJSONSafe(3n), '3');
    assert.equal(toJSONSafe(null), null);
    const shared = { v: 1n };
    assert.deepEqual(
      toJSONSafe({ a: shared, b: shared }),
      { a: { v: '1' }, b: { v: '1' } },
      'a shared (acyclic) object is fine',
    );
  });

  it('GIVEN a cycle THEN toJSONSafe throws FLURRY_E_INVALID_OPTION', () => {
    const a: Record<string, unknown> = { id: 1n };
    a.self = a;
    expectCode(() => toJSONSafe(a), 'FLURRY_E_INVALID_OPTION', /cycle/);
  });
});
