/**
 * The database harness itself, on real servers: start, connect as the test role with its
 * password through the real client, crash and restart with the data kept, stall and resume,
 * stop with the data directory removed.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { startDatabase, type RunningDatabase } from './databases.js';

async function pgQuery(db: RunningDatabase, sql: string, timeoutMs = 10_000): Promise<unknown[]> {
  const client = new pg.Client({ ...db.connection, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  await client.connect();
  try {
    return (await client.query(sql)).rows as unknown[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function myQuery(db: RunningDatabase, sql: string, timeoutMs = 10_000): Promise<unknown[]> {
  const conn = await mysql.createConnection({ ...db.connection, connectTimeout: timeoutMs });
  try {
    const [rows] = await conn.query({ sql, timeout: timeoutMs });
    return rows as unknown[];
  } finally {
    conn.destroy();
  }
}

const cases: { kind: 'postgres' | 'mariadb'; query: typeof pgQuery; scheme: string }[] = [
  { kind: 'postgres', query: pgQuery, scheme: 'postgres:' },
  { kind: 'mariadb', query: myQuery, scheme: 'mysql:' },
];

for (const { kind, query, scheme } of cases) {
  describe(`database harness: ${kind}`, () => {
    it(`GIVEN a started ${kind} THEN the test role connects with its password, data survives a crash and restart, a pause stalls queries, and stop removes the data`, async () => {
      const db = await startDatabase(kind);
      try {
        assert.equal(new URL(db.url).protocol, scheme);
        assert.equal(new URL(db.url).port, String(db.port));
        await query(db, 'CREATE TABLE t (v INT)');
        await query(db, 'INSERT INTO t VALUES (42)');
        assert.deepEqual(
          (await query(db, 'SELECT v FROM t')).map((r) => (r as { v: number }).v),
          [42],
        );
        assert.match(db.sql('SELECT count(*) FROM t'), /^1\s*$/);

        // wrong password: refused
        await assert.rejects(() =>
          kind === 'postgres'
            ? new pg.Client({ ...db.connection, password: 'wrong' }).connect()
            : mysql.createConnection({ ...db.connection, password: 'wrong' }),
        );

        await db.kill();
        await assert.rejects(() => query(db, 'SELECT 1', 2000));
        await db.restart();
        assert.deepEqual(
          (await query(db, 'SELECT v FROM t')).map((r) => (r as { v: number }).v),
          [42],
        );

        db.pause();
        const started = Date.now();
        await assert.rejects(() => query(db, 'SELECT 1', 1000));
        assert.ok(Date.now() - started >= 900, 'a paused database does not answer');
        db.resume();
        assert.equal((await query(db, 'SELECT 1 AS one')).length, 1);
      } finally {
        await db.stop();
      }
      assert.equal(existsSync(db.dataDir), false);
      await assert.rejects(() => query(db, 'SELECT 1', 2000));
    });
  });
}
