// uuidSql's shape and refusals, and the UUIDv7 bounds of a time (the SQL runs on real
// PostgreSQL and MariaDB in packages/server/src/sql/uuid-sql.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '../errors.js';
import { decodeUuid } from '../uuid/forms.js';
import { uuidMaxAt, uuidMinAt } from '../uuid/format.js';
import { uuidSql } from './uuid-ddl.js';

const coded = (code: string) => (e: unknown) => e instanceof FlurryError && e.code === code;

test('GIVEN each dialect THEN uuidSql names the functions with the prefix; bad options are coded errors', () => {
  const pg = uuidSql({ dialect: 'postgres', prefix: 'o_' });
  assert.equal(pg.idType, 'uuid');
  assert.deepEqual(
    pg.functions.map((f) => f.name),
    ['unix_ms', 'timestamp', 'node', 'sequence', 'min_at_ms', 'max_at_ms', 'min_at', 'max_at'].map(
      (n) => `o_uuid_${n}`,
    ),
  );
  const my = uuidSql({ dialect: 'mysql' });
  assert.equal(my.idType, 'BINARY(16)');
  for (const n of ['unix_ms_text', 'min_at_text', 'max_at_text', 'timestamp_text'])
    assert.ok(
      my.functions.some((f) => f.name === `flurry_uuid_${n}`),
      n,
    );
  assert.match(my.script, /^DELIMITER \$\$$/m);
  assert.throws(() => uuidSql({ dialect: 'oracle' as never }), coded('FLURRY_E_INVALID_OPTION'));
  assert.throws(() => uuidSql({ dialect: 'postgres', prefix: 'Bad' }), coded('FLURRY_E_INVALID_OPTION'));
  assert.throws(() => uuidSql({ dialect: 'postgres', nodeBits: 49 }), FlurryError);
  assert.throws(() => uuidSql({ dialect: 'postgres', nodBits: 3 } as never), coded('FLURRY_E_UNKNOWN_OPTION'));
});

test('GIVEN a Unix ms THEN uuidMinAt / uuidMaxAt are v7 UUIDs of that ms, the least and the greatest; outside 48 bits FLURRY_E_TIME_OUT_OF_RANGE', () => {
  const ms = Date.parse('2022-02-22T19:22:22.000Z');
  assert.equal(uuidMinAt(ms), '017f22e2-79b0-7000-8000-000000000000');
  assert.equal(uuidMaxAt(ms), '017f22e2-79b0-7fff-bfff-ffffffffffff');
  assert.equal(decodeUuid(uuidMinAt(ms)).unixMs, ms);
  assert.equal(decodeUuid(uuidMaxAt(ms)).unixMs, ms);
  assert.ok(uuidMaxAt(ms - 1) < uuidMinAt(ms));
  assert.ok('017f22e2-79b0-7cc3-98c4-dc0c0c07398f' > uuidMinAt(ms));
  assert.ok('017f22e2-79b0-7cc3-98c4-dc0c0c07398f' < uuidMaxAt(ms));
  assert.equal(uuidMinAt(0), '00000000-0000-7000-8000-000000000000');
  assert.equal(uuidMaxAt(2 ** 48 - 1), 'ffffffff-ffff-7fff-bfff-ffffffffffff');
  for (const bad of [-1, 2 ** 48, 1.5, Number.NaN])
    assert.throws(() => uuidMinAt(bad), coded('FLURRY_E_TIME_OUT_OF_RANGE'));
});
