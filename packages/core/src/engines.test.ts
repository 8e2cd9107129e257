import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkUrlParams,
  isRedisAuthError,
  loadClient,
  redactLoosely,
  redactUrl,
  redisClientOptions,
  sqlErrorClass,
} from './engines.js';

test('GIVEN PostgreSQL and MySQL errors THEN sqlErrorClass sorts them by SQLSTATE and server errno; errors the server did not send are unreachable', () => {
  const pg = (code: string) => sqlErrorClass('postgres', Object.assign(new Error('x'), { code }));
  assert.equal(pg('28P01'), 'auth');
  assert.equal(pg('42501'), 'denied');
  assert.equal(pg('42P01'), 'no-table');
  assert.equal(pg('3D000'), 'no-database');
  assert.equal(pg('23505'), 'duplicate');
  assert.equal(pg('42P07'), 'exists');
  assert.equal(pg('40P01'), 'conflict');
  assert.equal(pg('42703'), 'schema');
  assert.equal(pg('ECONNRESET'), 'unreachable');
  assert.equal(sqlErrorClass('postgres', new Error('timeout')), 'unreachable');
  const my = (errno: number, sqlState?: string) =>
    sqlErrorClass('mysql', Object.assign(new Error('x'), { errno, ...(sqlState ? { sqlState } : {}) }));
  assert.equal(my(1045, '28000'), 'auth');
  assert.equal(my(1044, '42000'), 'denied');
  assert.equal(my(1146, '42S02'), 'no-table');
  assert.equal(my(1062, '23000'), 'duplicate');
  assert.equal(my(1050, '42S01'), 'exists');
  assert.equal(my(1213, '40001'), 'conflict');
  assert.equal(my(1054, '42S22'), 'schema');
  assert.equal(my(-111), 'unreachable', 'ECONNREFUSED carries an errno but no sqlState');
  assert.equal(sqlErrorClass('mysql', undefined), 'unreachable');
});

test('GIVEN URLs with passwords THEN redactUrl and redactLoosely never show them', () => {
  assert.equal(redactUrl('postgres://app:pw@127.0.0.1:5432/orders'), 'postgres://app:***@127.0.0.1:5432/orders');
  assert.equal(redactUrl('redis://127.0.0.1:6379/0'), 'redis://127.0.0.1:6379/0');
  assert.equal(redactLoosely('redis://:hun@ter2@h:1/0'), 'redis://***@h:1/0');
});

test('GIVEN a client that cannot be loaded THEN loadClient throws what the caller makes of the npm package to install', async () => {
  await assert.rejects(
    () =>
      loadClient(
        'mysql',
        'the mysql store (mysql://h/db)',
        () => Promise.reject(new Error("Cannot find package 'mysql2'")),
        (message, pkg) => Object.assign(new Error(message), { pkg }),
      ),
    (e: Error & { pkg?: string }) =>
      e.message ===
        'the mysql store (mysql://h/db) needs the npm package "mysql2", which is not installed: run npm install mysql2@3' &&
      e.pkg === 'mysql2',
  );
  assert.equal(
    await loadClient(
      'redis',
      'x',
      () => Promise.resolve(42),
      () => new Error('never'),
    ),
    42,
  );
});

test('GIVEN URL parameters THEN checkUrlParams refuses an unknown one (naming the closest) and a repeated one', () => {
  const bad = (why: string) => new Error(why);
  assert.throws(() => checkUrlParams(new URLSearchParams('tabel=x'), ['table', 'pool'], bad), /did you mean "table"/);
  assert.throws(() => checkUrlParams(new URLSearchParams('pool=1&pool=2'), ['table', 'pool'], bad), /given twice/);
  checkUrlParams(new URLSearchParams('pool=1'), ['table', 'pool'], bad);
});

test('GIVEN the Redis helpers THEN credentials refusals are auth errors AND the client reconnects only once connected', () => {
  assert.ok(isRedisAuthError(new Error('WRONGPASS invalid username-password pair or user is disabled.')));
  assert.ok(isRedisAuthError(new Error('NOAUTH Authentication required.')));
  assert.ok(!isRedisAuthError(new Error('connect ECONNREFUSED 127.0.0.1:6379')));
  let up = false;
  const o = redisClientOptions(
    { host: 'h', port: 6380, db: 2, password: 'pw', tls: true },
    5000,
    'flurry-test',
    () => up,
  );
  assert.deepEqual(
    { host: o.host, port: o.port, db: o.db, password: o.password, tls: o.tls, timeout: o.commandTimeout },
    { host: 'h', port: 6380, db: 2, password: 'pw', tls: { servername: 'h' }, timeout: 5000 },
  );
  assert.equal(o.retryStrategy(1), null, 'the first connection fails fast');
  up = true;
  assert.equal(o.retryStrategy(1), 100);
  assert.equal(o.retryStrategy(20), 1000);
});
