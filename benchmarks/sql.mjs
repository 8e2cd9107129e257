#!/usr/bin/env node
// `npm run bench:sql`: calls per second of the in-database generator `flurry_next_id()`
// (flurry sql --generate) against the database's own ID sources, from the same sessions
// in the same run: PostgreSQL's nextval() and gen_random_uuid(), MariaDB's AUTO_INCREMENT
// insert (and an insert taking its key from flurry_next_id()). Databases are started on
// loopback by the test harness. Prints a markdown table and rewrites the "SQL generator"
// section of docs/benchmarks.md.
//
// Target (issue 15): flurry_next_id() at least half of nextval().
//   FLURRY_BENCH_SQL_SESSIONS (default 8), FLURRY_BENCH_SQL_SECONDS per measurement (default 5)
import mysql from 'mysql2/promise';
import pg from 'pg';
import { Layout } from '@flurry/core';
import { startDatabase } from '@flurry/coordination/testing';
import { reserveSqlNode } from '../packages/server/dist/sql/reserve.js';
import { fmt, machineLine, table, writeSection } from './report.mjs';

const SESSIONS = Number(process.env.FLURRY_BENCH_SQL_SESSIONS ?? 8);
const SECONDS = Number(process.env.FLURRY_BENCH_SQL_SECONDS ?? 5);
const layout = Layout.from('twitter');

/** Runs `sql` in a loop on every session for SECONDS; returns calls per second (all sessions). */
async function rate(sessions, sql) {
  for (const s of sessions) for (let i = 0; i < 20; i++) await s(sql); // warm-up
  const until = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  const counts = await Promise.all(
    sessions.map(async (s) => {
      let n = 0;
      while (performance.now() < until) {
        await s(sql);
        n++;
      }
      return n;
    }),
  );
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - t0) / 1000);
}

const rows = [];

async function postgres() {
  const db = await startDatabase('postgres');
  try {
    await reserveSqlNode({ url: `${db.url}?table=flurry_nodes`, layout, cluster: 'bench', apply: true });
    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const c = new pg.Client(db.connection);
        await c.connect();
        return c;
      }),
    );
    await clients[0].query('CREATE SEQUENCE bench_seq');
    const sessions = clients.map((c) => (sql) => c.query(sql));
    const flurry = await rate(sessions, 'SELECT flurry_next_id()');
    const nextval = await rate(sessions, "SELECT nextval('bench_seq')");
    const uuid = await rate(sessions, 'SELECT gen_random_uuid()');
    rows.push(['PostgreSQL 15', 'SELECT flurry_next_id()', fmt(flurry), '']);
    rows.push([
      'PostgreSQL 15',
      "SELECT nextval('bench_seq')",
      fmt(nextval),
      `flurry_next_id ÷ nextval = ${fmt(flurry / nextval, 2)}`,
    ]);
    rows.push([
      'PostgreSQL 15',
      'SELECT gen_random_uuid()',
      fmt(uuid),
      `flurry_next_id ÷ gen_random_uuid = ${fmt(flurry / uuid, 2)}`,
    ]);
    await Promise.all(clients.map((c) => c.end()));
  } finally {
    await db.stop();
  }
}

async function mariadb() {
  const db = await startDatabase('mariadb');
  try {
    await reserveSqlNode({ url: `${db.url}?table=flurry_nodes`, layout, cluster: 'bench', apply: true });
    const conns = await Promise.all(Array.from({ length: SESSIONS }, () => mysql.createConnection(db.connection)));
    await conns[0].query('CREATE TABLE bench_auto (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB');
    await conns[0].query('CREATE TABLE bench_flurry (id BIGINT UNSIGNED PRIMARY KEY) ENGINE=InnoDB');
    const sessions = conns.map((c) => (sql) => c.query(sql));
    const flurry = await rate(sessions, 'SELECT flurry_next_id()');
    const auto = await rate(sessions, 'INSERT INTO bench_auto () VALUES ()');
    const flurryInsert = await rate(sessions, 'INSERT INTO bench_flurry (id) VALUES (flurry_next_id())');
    rows.push(['MariaDB', 'SELECT flurry_next_id()', fmt(flurry), '']);
    rows.push([
      'MariaDB',
      'INSERT … AUTO_INCREMENT',
      fmt(auto),
      `flurry_next_id ÷ AUTO_INCREMENT insert = ${fmt(flurry / auto, 2)}`,
    ]);
    rows.push([
      'MariaDB',
      'INSERT … VALUES (flurry_next_id())',
      fmt(flurryInsert),
      `÷ AUTO_INCREMENT insert = ${fmt(flurryInsert / auto, 2)}`,
    ]);
    await Promise.all(conns.map((c) => c.end()));
  } finally {
    await db.stop();
  }
}

await postgres();
await mariadb();
const body =
  `\`npm run bench:sql\` (benchmarks/sql.mjs): ${SESSIONS} sessions calling in a loop for ${SECONDS} s per row, one statement per call, ` +
  `databases on loopback started by the test harness, layout twitter. Target: flurry_next_id() at least half of nextval().\n\n` +
  table(['Database', 'Statement', 'Calls/s (all sessions)', 'Ratio'], rows) +
  `\n\n${machineLine()}\n`;
console.log(body);
writeSection('SQL generator', body);
