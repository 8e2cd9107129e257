import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '@flurry/core';
import { parseRegistryUrl, parseSqlUrl } from '../url.js';
import { registryTableDdl } from './sql-common.js';

const SECRET = 'pa55:w@rd/secret';
const enc = encodeURIComponent(SECRET);

test('GIVEN postgres and mysql URLs THEN host, port, database, table, sslmode and credentials are parsed AND the redacted form hides the password', () => {
  const pg = parseSqlUrl(`postgres://app:${enc}@db.internal:6432/orders?table=ops.flurry_nodes&sslmode=verify-full`);
  assert.deepEqual(
    { ...pg },
    {
      dialect: 'postgres',
      host: 'db.internal',
      port: 6432,
      database: 'orders',
      user: 'app',
      password: SECRET,
      table: 'ops.flurry_nodes',
      sslmode: 'verify-full',
      redacted: 'postgres://app:***@db.internal:6432/orders?table=ops.flurry_nodes&sslmode=verify-full',
    },
  );
  const my = parseSqlUrl('mariadb://root@[::1]/flurry');
  assert.equal(my.dialect, 'mysql');
  assert.equal(my.host, '::1');
  assert.equal(my.port, 3306);
  assert.equal(my.table, 'flurry_nodes');
  assert.equal(my.password, undefined);
  assert.equal(parseSqlUrl('postgresql://h/db').port, 5432);
  const r = parseRegistryUrl(`mysql://app:${enc}@127.0.0.1:3307/orders`);
  assert.equal(r.kind, 'mysql');
  assert.equal(r.redacted, 'mysql://app:***@127.0.0.1:3307/orders');
});

test('GIVEN malformed SQL registry URLs THEN FLURRY_E_REGISTRY_URL saying what is wrong AND never the password', () => {
  const cases: [string, RegExp][] = [
    [`postgres://app:${enc}@h/db?tabel=x`, /unknown parameter "tabel"; did you mean "table"\?/],
    [`postgres://app:${enc}@h/db?table=a&table=b`, /"table" is given twice/],
    [`postgres://app:${enc}@h/db?table=x;drop`, /the table "x;drop" must be letters/],
    [`postgres://app:${enc}@h/db?table=1x`, /not starting with a digit/],
    [`postgres://app:${enc}@h/db?sslmode=prefer`, /sslmode "prefer" is not one of disable, require, verify-full/],
    [`mysql://app:${enc}@h:70000/db`, /port 70000 is outside 1\.\.65535/],
    [`mysql://app:${enc}@h`, /the database is missing/],
    [`mysql://app:${enc}@h/`, /the database is missing/],
    [`mysql://app:${enc}@h/a b`, /the database "a b" must be 1-64 letters/],
    [`mysql://app:${enc}@h/db#frag`, /fragment/],
    [`mysql://:${enc}@h/db`, /the user before "@" is empty/],
    [`postgres://app:%zz@h/db`, /percent-encoding/],
    [`sqlite://h/db`, /not postgres:, postgresql:, mysql: or mariadb:/],
  ];
  for (const [url, why] of cases) {
    assert.throws(
      () => parseSqlUrl(url),
      (e: unknown) => {
        assert.ok(e instanceof FlurryError, String(e));
        assert.equal(e.code, 'FLURRY_E_REGISTRY_URL');
        assert.match(e.message, why, url);
        for (const s of [SECRET, enc]) {
          assert.ok(!e.message.includes(s), e.message);
          assert.ok(!JSON.stringify(e.details).includes(s), JSON.stringify(e.details));
        }
        return true;
      },
    );
  }
  assert.throws(() => parseRegistryUrl(`postgres://app:${enc}@h/db?tabel=x`), { code: 'FLURRY_E_REGISTRY_URL' });
});

test('GIVEN registryTableDdl THEN it quotes the table per dialect, keeps the shared column names AND refuses a bad name', () => {
  const pg = registryTableDdl('postgres', 'ops.flurry_nodes');
  assert.match(pg, /^CREATE TABLE IF NOT EXISTS "ops"\."flurry_nodes" \(/);
  const my = registryTableDdl('mysql', 'flurry_nodes');
  assert.match(my, /^CREATE TABLE IF NOT EXISTS `flurry_nodes` \(/);
  for (const col of ['namespace', 'slot', 'token', 'expires_at', 'holder', 'high_water_ms', 'version', 'updated_at'])
    for (const ddl of [pg, my]) assert.match(ddl, new RegExp(`\\b${col}\\b`), col);
  assert.match(pg, /PRIMARY KEY \(namespace, slot\)/);
  assert.throws(() => registryTableDdl('postgres', 'a"; DROP TABLE x; --'), { code: 'FLURRY_E_REGISTRY_URL' });
});
