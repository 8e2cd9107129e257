/**
 * The UUIDv7 SQL of uuidSql on real PostgreSQL 15 and MariaDB: 16 sessions insert UUIDs of
 * 4 leased processes into a `uuid` primary key, `ORDER BY id` is each process's order of
 * generation, the bound functions select exactly the rows of a time window through the
 * primary key (EXPLAIN), and the decoders agree with decodeUuid; MariaDB the same for
 * BINARY(16) and CHAR(36) columns; `flurry sql --uuid` and `flurry range --uuid`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { ManualClock, UuidGenerator, decodeUuid, uuidMaxAt, uuidMinAt, uuidSql } from '@flurry/core';
import { startDatabase, type RunningDatabase } from '@flurry/coordination/testing';
import { runFlurry } from '../test-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const PER_PROCESS = 5_000;

/** One leased process: `count` UUIDs from leasedUuidGenerator on the file registry, in bursts across milliseconds. */
const CHILD = `
import { openRegistry, leasedUuidGenerator } from '@flurry/coordination';
const [dir, count] = [process.argv[1], Number(process.argv[2])];
const registry = await openRegistry('file:' + dir, { cluster: 'uuid-sql' });
const gen = await leasedUuidGenerator({ registry });
const out = [];
while (out.length < count) {
  for (let k = 0; k < 97 && out.length < count; k++) out.push(gen.next());
  await new Promise((r) => setTimeout(r, 1));
}
await gen.close();
await registry.close();
process.stdout.write(JSON.stringify(out));
`;

function runChild(dir: string, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--input-type=module', '-e', CHILD, dir, String(count)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(err))));
  });
}

/** `n` UUIDs of the library over `spanMs` from `start`, nodes 0..7, for the decoder comparisons. */
function libraryUuids(n: number, start: number, spanMs: number): string[] {
  const clock = new ManualClock(start);
  const gens = Array.from({ length: 8 }, (_, node) => new UuidGenerator({ node: node * 4099, clock }));
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 50 === 0) clock.advance(Math.max(1, Math.floor((spanMs * 50) / n)));
    out.push(gens[i % 8].next());
  }
  for (const g of gens) g.close();
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** UUIDs of other widths (nodeBits 12, sequenceBits 40; sequences and nodes at their extremes too). */
function otherWidths(): string[] {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const out: string[] = [];
  for (const node of [0, 1, 2048, 4095]) {
    const g = new UuidGenerator({ node, nodeBits: 12, sequenceBits: 40, clock, sequenceStart: 'random' });
    for (let i = 0; i < 250; i++) out.push(g.next());
    clock.advance(1);
    g.close();
  }
  return out;
}
const WIDTHS = { nodeBits: 12, sequenceBits: 40 } as const;

describe('uuidSql on PostgreSQL 15', () => {
  let db: RunningDatabase;
  let c: pg.Client;
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-uuid-sql-'));
  before(async () => {
    db = await startDatabase('postgres');
    c = new pg.Client({ ...db.connection, query_timeout: 120_000 });
    await c.connect();
    await c.query("SET TimeZone = 'Asia/Kolkata'"); // the functions must not depend on the session zone
    for (const s of uuidSql({ dialect: 'postgres' }).statements) await c.query(s);
  });
  after(async () => {
    await c?.end().catch(() => undefined);
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GIVEN 16 sessions inserting the UUIDs of 4 leased processes into a uuid primary key THEN ORDER BY id is each process’s order of generation, the bounds select exactly a time window through the primary key, and the decoders agree with decodeUuid', async () => {
    const procs = await Promise.all([0, 1, 2, 3].map(() => runChild(dir, PER_PROCESS)));
    // A process that started after another released its node may hold the same node ID: it starts above that one's UUIDs.
    assert.equal(new Set(procs.flat()).size, 4 * PER_PROCESS, 'no duplicate across the processes');
    await c.query('CREATE TABLE events (id uuid PRIMARY KEY, proc int NOT NULL, seq int NOT NULL)');
    // 16 sessions: each process's UUIDs dealt round-robin to 4 of them, inserted concurrently in small batches.
    const sessions = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const s = new pg.Client(db.connection);
        await s.connect();
        return s;
      }),
    );
    try {
      await Promise.all(
        sessions.map(async (s, k) => {
          const proc = k % 4;
          const mine = procs[proc].map((u, i) => [u, i] as const).filter(([, i]) => i % 4 === Math.floor(k / 4));
          for (let b = 0; b < mine.length; b += 100) {
            const chunk = mine.slice(b, b + 100);
            await s.query('INSERT INTO events (id, proc, seq) SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[])', [
              chunk.map(([u]) => u),
              chunk.map(() => proc),
              chunk.map(([, i]) => i),
            ]);
          }
        }),
      );
    } finally {
      await Promise.all(sessions.map((s) => s.end()));
    }
    const total = await c.query<{ n: string }>('SELECT count(*) AS n FROM events');
    assert.equal(Number(total.rows[0].n), 4 * PER_PROCESS);
    await c.query('ANALYZE events');

    for (const [p, uuids] of procs.entries()) {
      const r = await c.query<{ id: string; seq: number }>(
        'SELECT id::text AS id, seq FROM events WHERE proc = $1 ORDER BY id',
        [p],
      );
      assert.equal(r.rows.length, PER_PROCESS);
      assert.deepEqual(
        r.rows.map((x) => x.seq),
        uuids.map((_, i) => i),
        `process ${p}: ORDER BY id is the order of generation`,
      );
    }

    // The decoders, on every row, against the library.
    const all = procs.flat();
    const dec = await c.query<{ id: string; ms: string; node: string; seq: string; ts: Date }>(
      'SELECT id::text AS id, flurry_uuid_unix_ms(id) AS ms, flurry_uuid_node(id) AS node, flurry_uuid_sequence(id) AS seq, flurry_uuid_timestamp(id) AS ts FROM events',
    );
    const byId = new Map(dec.rows.map((x) => [x.id, x]));
    for (const u of all) {
      const d = decodeUuid(u);
      const row = byId.get(u)!;
      assert.equal(Number(row.ms), d.unixMs, u);
      assert.equal(Number(row.node), d.node, u);
      assert.equal(Number(row.seq), d.sequence, u);
      assert.equal(row.ts.getTime(), d.unixMs, u);
    }
    const special = await c.query<{ rfc: string; v4: string | null; lo: string; hi: string }>(
      `SELECT flurry_uuid_unix_ms('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') AS rfc,
              flurry_uuid_unix_ms(gen_random_uuid()) AS v4,
              flurry_uuid_min_at('2022-02-22T19:22:22.000Z')::text AS lo,
              flurry_uuid_max_at('2022-02-22T19:22:22.000Z')::text AS hi`,
    );
    assert.equal(Number(special.rows[0].rfc), Date.parse('2022-02-22T19:22:22.000Z'));
    assert.equal(special.rows[0].v4, null, 'not a v7 UUID: NULL');
    assert.equal(special.rows[0].lo, '017f22e2-79b0-7000-8000-000000000000');
    assert.equal(special.rows[0].hi, '017f22e2-79b0-7fff-bfff-ffffffffffff');
    await assert.rejects(c.query('SELECT flurry_uuid_min_at_ms(-1)'), /FLURRY_E_TIME_OUT_OF_RANGE/);
    // Other widths (prefix w_): node and sequence where that format puts them.
    for (const st of uuidSql({ dialect: 'postgres', prefix: 'w_', ...WIDTHS }).statements) await c.query(st);
    const other = otherWidths();
    const w = await c.query<{ node: string; seq: string }>(
      'SELECT w_uuid_node(u) AS node, w_uuid_sequence(u) AS seq FROM unnest($1::uuid[]) WITH ORDINALITY AS x(u, i) ORDER BY i',
      [other],
    );
    assert.deepEqual(
      w.rows.map((x) => [Number(x.node), Number(x.seq)]),
      other.map((u) => [decodeUuid(u, WIDTHS).node, decodeUuid(u, WIDTHS).sequence]),
    );

    // A time window in the middle of the run: exactly its rows, through the primary key.
    const times = all.map((u) => decodeUuid(u).unixMs).sort((a, b) => a - b);
    const from = times[Math.floor(times.length * 0.4)];
    const to = times[Math.floor(times.length * 0.45)] + 1;
    const expected = all.filter((u) => {
      const ms = decodeUuid(u).unixMs;
      return ms >= from && ms < to;
    });
    assert.ok(expected.length > 100 && expected.length < all.length / 5, `window of ${expected.length} rows`);
    const where = `id >= flurry_uuid_min_at('${iso(from)}') AND id < flurry_uuid_min_at('${iso(to)}')`;
    const got = await c.query<{ id: string }>(`SELECT id::text AS id FROM events WHERE ${where} ORDER BY id`);
    assert.deepEqual(
      got.rows.map((x) => x.id),
      [...expected].sort(),
    );
    const incl = await c.query<{ n: string }>(
      `SELECT count(*) AS n FROM events WHERE id BETWEEN flurry_uuid_min_at('${iso(from)}') AND flurry_uuid_max_at('${iso(to - 1)}')`,
    );
    assert.equal(Number(incl.rows[0].n), expected.length, 'the inclusive bounds select the same rows');
    const plan = (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT * FROM events WHERE ${where}`)).rows
      .map((x) => x['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /Index (Only )?Scan using events_pkey|Bitmap Index Scan on events_pkey/, plan);
    assert.match(plan, /Index Cond: \(\(id >= '[0-9a-f-]{36}'::uuid\) AND \(id < '[0-9a-f-]{36}'::uuid\)\)/, plan);
  });
});

describe('uuidSql on MariaDB', () => {
  let db: RunningDatabase;
  let c: mysql.Connection;
  before(async () => {
    db = await startDatabase('mariadb');
    c = await mysql.createConnection({ ...db.connection, supportBigNumbers: true, bigNumberStrings: true });
    await c.query("SET time_zone = '+05:30'"); // DATETIME(3) parameters are UTC whatever the session zone
    for (const s of uuidSql({ dialect: 'mysql' }).statements) await c.query(s);
  });
  after(async () => {
    await c?.end().catch(() => undefined);
    await db?.stop();
  });

  test('GIVEN 20,000 UUIDs in a BINARY(16) and in a CHAR(36) primary key THEN the decoders agree with decodeUuid, and the bounds select exactly a time window through PRIMARY', async () => {
    const start = Date.UTC(2026, 10, 1, 12);
    const uuids = libraryUuids(20_000, start, 60_000);
    await c.query('CREATE TABLE b (id BINARY(16) PRIMARY KEY, n INT NOT NULL)');
    await c.query('CREATE TABLE t (id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY, n INT NOT NULL)');
    for (let i = 0; i < uuids.length; i += 1000) {
      const chunk = uuids.slice(i, i + 1000);
      await c.query('INSERT INTO b (id, n) VALUES ?', [
        chunk.map((u, k) => [Buffer.from(u.replace(/-/g, ''), 'hex'), i + k]),
      ]);
      await c.query('INSERT INTO t (id, n) VALUES ?', [chunk.map((u, k) => [u, i + k])]);
    }
    // One query per table (n is not indexed: a join on it would compare every pair of rows).
    const [rows] = await c.query<mysql.RowDataPacket[]>(
      `SELECT n, flurry_uuid_unix_ms(id) AS ms, flurry_uuid_node(id) AS node, flurry_uuid_sequence(id) AS seq,
              CAST(flurry_uuid_timestamp(id) AS CHAR) AS ts
         FROM b`,
    );
    const [texts] = await c.query<mysql.RowDataPacket[]>('SELECT n, flurry_uuid_unix_ms_text(id) AS tms FROM t');
    assert.equal(rows.length, uuids.length);
    assert.equal(texts.length, uuids.length);
    const tms = new Map(texts.map((r) => [r.n as number, r.tms as unknown]));
    for (const r of rows) {
      const d = decodeUuid(uuids[r.n as number]);
      assert.equal(Number(r.ms), d.unixMs);
      assert.equal(Number(tms.get(r.n as number)), d.unixMs);
      assert.equal(Number(r.node), d.node);
      assert.equal(Number(r.seq), d.sequence);
      assert.equal(r.ts, d.timestamp.replace('T', ' ').slice(0, 23));
    }
    const [[special]] = await c.query<mysql.RowDataPacket[]>(
      `SELECT flurry_uuid_unix_ms_text('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') AS rfc,
              flurry_uuid_unix_ms_text('017f22e2-79b0-4cc3-98c4-dc0c0c07398f') AS v4,
              flurry_uuid_min_at_text('2022-02-22 19:22:22.000') AS lo,
              HEX(flurry_uuid_max_at('2022-02-22 19:22:22.000')) AS hi`,
    );
    assert.equal(Number(special.rfc), Date.parse('2022-02-22T19:22:22.000Z'));
    assert.equal(special.v4, null);
    assert.equal(special.lo, '017f22e2-79b0-7000-8000-000000000000');
    assert.equal(special.hi, '017F22E279B07FFFBFFFFFFFFFFFFFFF');
    await assert.rejects(c.query('SELECT flurry_uuid_min_at_ms(-1)'), /FLURRY_E_TIME_OUT_OF_RANGE/);
    for (const st of uuidSql({ dialect: 'mysql', prefix: 'w_', ...WIDTHS }).statements) await c.query(st);
    const other = otherWidths();
    const [w] = await c.query<mysql.RowDataPacket[]>(
      `SELECT w_uuid_node(u) AS node, w_uuid_sequence(u) AS seq
         FROM (${other.map(() => 'SELECT ? AS i, ? AS u').join(' UNION ALL ')}) x ORDER BY i`,
      other.flatMap((u, i) => [i, Buffer.from(u.replace(/-/g, ''), 'hex')]),
    );
    assert.deepEqual(
      w.map((r) => [Number(r.node), Number(r.seq)]),
      other.map((u) => [decodeUuid(u, WIDTHS).node, decodeUuid(u, WIDTHS).sequence]),
    );

    const from = start + 20_000 + 123;
    const to = start + 31_000;
    const sql = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
    const expected = uuids.filter((u) => {
      const ms = decodeUuid(u).unixMs;
      return ms >= from && ms < to;
    });
    assert.ok(expected.length > 1000 && expected.length < 10_000);
    for (const [table, suffix] of [
      ['b', ''],
      ['t', '_text'],
    ] as const) {
      const where = `id >= flurry_uuid_min_at${suffix}('${sql(from)}') AND id < flurry_uuid_min_at${suffix}('${sql(to)}')`;
      const [got] = await c.query<mysql.RowDataPacket[]>(`SELECT n FROM ${table} WHERE ${where} ORDER BY id`);
      assert.deepEqual(
        got.map((r) => uuids[r.n as number]),
        [...expected].sort(),
        `${table}: exactly the window, in order`,
      );
      const [plan] = await c.query<mysql.RowDataPacket[]>(`EXPLAIN SELECT n FROM ${table} WHERE ${where}`);
      assert.equal(plan[0].key, 'PRIMARY', JSON.stringify(plan));
      assert.equal(plan[0].type, 'range', JSON.stringify(plan));
    }
  });
});

describe('flurry sql --uuid and flurry range --uuid', () => {
  test('GIVEN --uuid THEN flurry sql prints uuidSql’s script and flurry range the UUIDv7 bounds (text and --json); layout flags and bad widths are usage errors', async () => {
    const pgScript = await runFlurry(['sql', '--uuid', '--dialect', 'postgres', '--node-bits', '12']);
    assert.equal(pgScript.code, 0, pgScript.stderr);
    assert.equal(pgScript.stdout, uuidSql({ dialect: 'postgres', nodeBits: 12 }).script);
    const my = await runFlurry(['sql', '--uuid', '--dialect', 'mariadb', '--prefix', 'o_']);
    assert.equal(my.stdout, uuidSql({ dialect: 'mysql', prefix: 'o_' }).script);
    for (const args of [
      ['sql', '--uuid', '--dialect', 'postgres', '--layout', 'twitter'],
      ['sql', '--uuid', '--dialect', 'postgres', '--sequence-bits', '50'],
      ['sql', '--dialect', 'postgres', '--node-bits', '12'],
      ['range', '--uuid', '--from', '2026-11-01', '--to', '2026-12-01', '--layout', 'leaf'],
    ]) {
      const r = await runFlurry(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /FLURRY_E_USAGE: /);
    }
    const from = Date.UTC(2026, 10, 1);
    const to = Date.UTC(2026, 11, 1);
    const text = await runFlurry(['range', '--uuid', '--from', '2026-11-01', '--to', '2026-12-01']);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(text.stdout.includes(`SQL: WHERE id >= '${uuidMinAt(from)}' AND id < '${uuidMinAt(to)}'`), text.stdout);
    const json = await runFlurry(['range', '--uuid', '--from', String(from), '--to', String(to), '--json']);
    assert.deepEqual(JSON.parse(json.stdout), {
      from: iso(from),
      to: iso(to),
      min: uuidMinAt(from),
      maxExclusive: uuidMinAt(to),
      maxInclusive: uuidMaxAt(to - 1),
    });
  });
});
