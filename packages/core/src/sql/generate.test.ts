import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout } from '../layout/index.js';
import { generatorLanes, generatorSql, type GeneratorSqlOptions } from './generate.js';

const twitter = Layout.from('twitter');
const lease = (o: Partial<GeneratorSqlOptions> = {}): GeneratorSqlOptions => ({
  dialect: 'postgres',
  registryTable: 'flurry_nodes',
  namespace: 'orders/datacenter-0',
  slot: 3,
  token: 'f00d',
  nodeBits: twitter.nodeBits({ datacenter: 0, worker: 3 }),
  floorMs: 0,
  ...o,
});

test('GIVEN layouts THEN the default lanes leave every lane at least 16 IDs per tick, at most 16 lanes', () => {
  assert.equal(generatorLanes(twitter), 16);
  assert.equal(generatorLanes(Layout.from('sonyflake')), 16);
  assert.equal(generatorLanes(Layout.parse('timestamp:41,worker:10,sequence:6')), 4);
  assert.equal(generatorLanes(Layout.parse('timestamp:41,worker:10,sequence:2')), 1);
});

test('GIVEN generatorSql THEN it reports lanes and lane size, bakes the lease into next_id and splits the sequence field by lane', () => {
  for (const dialect of ['postgres', 'mysql'] as const) {
    const g = generatorSql(twitter, lease({ dialect }));
    assert.equal(g.lanes, 16);
    assert.equal(g.laneSize, 256);
    const next = g.statements.find((s) => /FUNCTION flurry_next_id\(\)/.test(s)) ?? '';
    assert.match(next, /'f00d'/, 'the lease token is checked on every call');
    assert.match(g.script, /16 lane\(s\) of 256 IDs per tick/);
    assert.ok(g.statements.some((s) => /CREATE TABLE IF NOT EXISTS flurry_lanes/.test(s)));
    assert.ok(g.functions.some((f) => f.name === 'flurry_lane'));
  }
  const one = generatorSql(twitter, lease({ lanes: 1 }));
  assert.equal(one.laneSize, 4096);
});

test('GIVEN lanes that are not a power of two within the sequence field THEN FLURRY_E_INVALID_OPTION names the range', () => {
  for (const lanes of [0, 3, 8192, 1.5]) {
    assert.throws(
      () => generatorSql(twitter, lease({ lanes })),
      (e) =>
        e instanceof FlurryError &&
        e.code === ErrorCode.INVALID_OPTION &&
        /power of two from 1 to 1024/.test(e.message),
    );
  }
});
