import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout } from '../layout/index.js';
import { layoutSql, sqlPrefix } from './ddl.js';

const code = (c: string, re: RegExp) => (e: unknown) => e instanceof FlurryError && e.code === c && re.test(e.message);

test('GIVEN a layout THEN layoutSql lists every decode and bound function, with one CREATE per function and the ID type of the dialect', () => {
  const twitter = Layout.from('twitter');
  const pg = layoutSql(twitter, { dialect: 'postgres' });
  assert.equal(pg.idType, 'bigint');
  assert.deepEqual(
    pg.functions.map((f) => f.name),
    ['unix_ms', 'timestamp', 'datacenter', 'worker', 'sequence', 'min_id_ms', 'max_id_ms', 'min_id', 'max_id'].map(
      (n) => `flurry_${n}`,
    ),
  );
  assert.equal(pg.statements.filter((s) => s.startsWith('CREATE OR REPLACE FUNCTION')).length, 9);
  assert.ok(pg.statements.filter((s) => s.startsWith('CREATE')).every((s) => /IMMUTABLE STRICT PARALLEL SAFE/.test(s)));
  assert.match(pg.script, /ERRCODE = '22008'/);
  assert.equal(layoutSql(Layout.from('discord'), { dialect: 'postgres' }).idType, 'numeric(20,0)');
  const my = layoutSql(Layout.from('sonyflake'), { dialect: 'mysql', prefix: 'sf_' });
  assert.equal(my.idType, 'BIGINT UNSIGNED');
  assert.ok(my.functions.some((f) => f.name === 'sf_machine'));
  assert.ok(my.statements.filter((s) => s.startsWith('CREATE')).every((s) => /DETERMINISTIC NO SQL/.test(s)));
  assert.match(my.script, /^DELIMITER \$\$$/m);
  assert.match(my.script, /SIGNAL SQLSTATE '22008'/);
});

test('GIVEN a bad prefix, dialect or a node field named like a generated function THEN FLURRY_E_INVALID_OPTION says what is allowed', () => {
  assert.equal(sqlPrefix(undefined), 'flurry_');
  for (const bad of ['', 'Flurry_', '1x', 'a-b', 'x'.repeat(41), 'a;drop'])
    assert.throws(() => sqlPrefix(bad), code(ErrorCode.INVALID_OPTION, /lower-case letter/), bad);
  assert.throws(
    () => layoutSql(Layout.from('twitter'), { dialect: 'oracle' as 'mysql' }),
    code(ErrorCode.INVALID_OPTION, /use postgres or mysql/),
  );
  const l = Layout.parse('timestamp:41,min_id:10,sequence:12');
  assert.throws(
    () => layoutSql(l, { dialect: 'postgres' }),
    code(ErrorCode.INVALID_OPTION, /node field min_id .* rename the field/),
  );
});

test('GIVEN generator options THEN generatorSql writes the state row past the floor tick and refuses bad tables, tokens, waits and unknown options', async () => {
  const { generatorSql } = await import('./generate.js');
  const l = Layout.from('twitter');
  const base = {
    dialect: 'postgres' as const,
    registryTable: 'ops.flurry_nodes',
    namespace: 'orders/datacenter-0',
    slot: 3,
    token: 'abc123',
    nodeBits: l.nodeBits({ datacenter: 0, worker: 3 }),
    floorMs: l.epochMs + 10,
  };
  const pg = generatorSql(l, base);
  assert.match(pg.script, /VALUES \(1, 'orders\/datacenter-0', 3, 'abc123', 12288, 10, 4095\)/);
  assert.match(pg.script, /FROM "ops"\."flurry_nodes" r WHERE/);
  assert.deepEqual(
    pg.functions.map((f) => f.name),
    [
      'flurry_now_ms',
      'flurry_lane',
      'flurry_cursor',
      'flurry_cursor_wait',
      'flurry_next_id',
      'flurry_next_ids',
      'flurry_release_node',
    ],
  );
  assert.match(generatorSql(l, { ...base, dialect: 'mysql' }).script, /FROM `ops`\.`flurry_nodes`/);
  assert.match(generatorSql(l, { ...base, floorMs: 0 }).script, /12288, -1, 4095\)/);
  for (const [bad, re] of [
    [{ registryTable: 'x; drop' }, /not a table name/],
    [{ token: "a'b" }, /lease token/],
    [{ maxWaitMs: 60_001 }, /maxWaitMs/],
    [{ slot: -1 }, /slot/],
  ] as const)
    assert.throws(() => generatorSql(l, { ...base, ...bad }), code(ErrorCode.INVALID_OPTION, re));
  assert.throws(() => generatorSql(l, { ...base, maxWait: 5 } as never), code(ErrorCode.UNKNOWN_OPTION, /maxWaitMs/));
});
