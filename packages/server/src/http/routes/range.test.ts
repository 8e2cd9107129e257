import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout } from '@flurry/core';
import { httpGet, runFlurry, startFlurry, type FlurryProcess } from '../../test-support.js';

const NOV = Date.UTC(2026, 10, 1);
const DEC = Date.UTC(2026, 11, 1);

describe('GET /v1/ids/range and flurry range', () => {
  let svc: FlurryProcess;
  before(async () => {
    svc = await startFlurry({ args: ['--layout', 'sonyflake'] });
  });
  after(async () => {
    const r = await svc.stop();
    assert.equal(r.code, 0, svc.stderr());
  });

  test('GIVEN from and to as ISO dates or Unix ms THEN the service answers the bounds of its layout (sonyflake, machine last) as decimal strings', async () => {
    const sony = Layout.from('sonyflake');
    const b = sony.bounds(NOV, DEC);
    for (const q of [
      'from=2026-11-01&to=2026-12-01',
      `from=${NOV}&to=${DEC}`,
      'from=2026-11-01T00:00:00.005Z&to=2026-12-01',
    ]) {
      const r = await httpGet(svc.port, `/v1/ids/range?${q}`);
      assert.equal(r.status, 200, r.body);
      assert.deepEqual(JSON.parse(r.body), {
        layout: 'sonyflake',
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-12-01T00:00:00.000Z',
        fromMs: NOV,
        toMs: DEC,
        min: b.min.toString(),
        maxExclusive: b.maxExclusive.toString(),
        maxInclusive: (b.maxExclusive - 1n).toString(),
      });
    }
    // an ID the service issues now is inside the range of today
    const id = BigInt((JSON.parse((await httpGet(svc.port, '/v1/ids/next')).body) as { id: string }).id);
    const now = Date.now();
    const r = JSON.parse((await httpGet(svc.port, `/v1/ids/range?from=${now - 60_000}&to=${now + 60_000}`)).body) as {
      min: string;
      maxExclusive: string;
    };
    assert.ok(BigInt(r.min) <= id && id < BigInt(r.maxExclusive));
  });

  test('GIVEN a bad range query THEN 400 with a coded error saying what is allowed', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['from=2026-11-01', 'FLURRY_E_QUERY', /to is missing/],
      ['from=1&from=2&to=3', 'FLURRY_E_QUERY', /given 2 times/],
      ['from=2026-11-01&to=2026-12-01&x=1', 'FLURRY_E_QUERY', /unknown query parameter "x"/],
      ['from=yesterday&to=2026-12-01', 'FLURRY_E_INVALID_OPTION', /ISO 8601/],
      ['from=2026-12-01&to=2026-11-01', 'FLURRY_E_INVALID_OPTION', /before it starts/],
      [
        'from=2000-01-01&to=2026-11-01',
        'FLURRY_E_TIME_OUT_OF_RANGE',
        /2014-09-01T00:00:00\.000Z .*2188-11-16T03:28:58\.880Z/,
      ],
      ['from=2026-01-01&to=2300-01-01', 'FLURRY_E_TIME_OUT_OF_RANGE', /past the layout's end of life/],
    ];
    for (const [q, code, re] of cases) {
      const r = await httpGet(svc.port, `/v1/ids/range?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.body}`);
      const e = (JSON.parse(r.body) as { error: { code: string; message: string } }).error;
      assert.equal(e.code, code, q);
      assert.match(e.message, re, q);
    }
    assert.equal((await httpGet(svc.port, '/v1/ids/range?from=1&to=2', {}, 'POST')).status, 405);
  });

  test('GIVEN flurry range THEN it prints the same bounds (text and --json), and a time out of range exits 2 with FLURRY_E_TIME_OUT_OF_RANGE', async () => {
    const twitter = Layout.from('twitter');
    const b = twitter.bounds(NOV, DEC);
    const text = await runFlurry(['range', '--from', '2026-11-01', '--to', '2026-12-01']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`WHERE id >= ${b.min} AND id < ${b.maxExclusive}`));
    const json = await runFlurry([
      'range',
      '--from',
      String(NOV),
      '--to',
      String(DEC),
      '--fields',
      'timestamp:41,worker:10,sequence:12',
      '--epoch',
      '2024-01-01T00:00:00Z',
      '--json',
    ]);
    assert.equal(json.code, 0, json.stderr);
    const custom = Layout.parse('timestamp:41,worker:10,sequence:12', { epoch: '2024-01-01T00:00:00Z' });
    assert.equal((JSON.parse(json.stdout) as { min: string }).min, custom.minIdAt(NOV).toString());
    const bad = await runFlurry(['range', '--from', '2009-01-01', '--to', '2026-12-01']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^flurry: FLURRY_E_TIME_OUT_OF_RANGE: .*before the layout's epoch/);
    const usage = await runFlurry(['range', '--from', '2026-11-01']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /FLURRY_E_USAGE: flurry range needs --from and --to/);
  });
});
