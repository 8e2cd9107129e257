import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { FlurryError, systemClock } from '@flurry/core';
import { createMysqlDriver } from './mysql.js';
import { createPostgresDriver } from './postgres.js';
import { sqlFailure } from './sql-common.js';

const opts = { clock: systemClock, connectTimeoutMs: 2000 };

test('GIVEN a URL of the other dialect or an unknown option THEN each factory rejects before connecting, without the password', async () => {
  const wrongDialect = (scheme: string) => (e: unknown) => {
    assert.ok(e instanceof FlurryError, String(e));
    assert.equal(e.code, 'FLURRY_E_REGISTRY_URL');
    assert.ok(e.message.includes(`is not a ${scheme}:// URL`), e.message);
    assert.ok(!e.message.includes('s3cret') && !JSON.stringify(e.details).includes('s3cret'), e.message);
    return true;
  };
  await assert.rejects(createPostgresDriver('mysql://app:s3cret@127.0.0.1/orders', opts), wrongDialect('postgres'));
  await assert.rejects(createMysqlDriver('postgres://app:s3cret@127.0.0.1/orders', opts), wrongDialect('mysql'));
  for (const [create, factory] of [
    [createPostgresDriver, 'createPostgresDriver'],
    [createMysqlDriver, 'createMysqlDriver'],
  ] as const)
    await assert.rejects(create('postgres://127.0.0.1/orders', { ...opts, conectTimeoutMs: 1 } as never), (e) => {
      assert.ok(e instanceof FlurryError, String(e));
      assert.equal(e.code, 'FLURRY_E_UNKNOWN_OPTION');
      assert.ok(e.message.includes(`${factory} options`) && e.message.includes('connectTimeoutMs'), e.message);
      return true;
    });
});

test('GIVEN PostgreSQL errors THEN sqlFailure tells lost creation races (42P07, 23505, 42710) from schema errors and auth', () => {
  const e = (code?: string) =>
    code === undefined ? new Error('ECONNRESET') : Object.assign(new pg.DatabaseError('x', 0, 'error'), { code });
  assert.equal(sqlFailure('postgres', e('42P07')), 'race');
  assert.equal(sqlFailure('postgres', e('23505')), 'race');
  assert.equal(
    sqlFailure('postgres', e('42710')),
    'race',
    'type "…" already exists: another process created the table',
  );
  assert.equal(sqlFailure('postgres', e('42703')), 'schema');
  assert.equal(sqlFailure('postgres', e('28P01')), 'auth');
  assert.equal(sqlFailure('postgres', e('42P01')), 'no-table');
  assert.equal(sqlFailure('postgres', e()), 'unreachable');
});
