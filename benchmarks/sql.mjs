#!/usr/bin/env node
// `npm run bench:sql`: calls per second of the in-database generator `flurry_next_id()`
// (flurry sql --generate) against the database's own ID sources, from the same sessions
// in the same run: PostgreSQL's nextval() and gen_random_uuid(), MariaDB's AUTO_INCREMENT
// insert (and an insert taking its key from flurry_next_id()). Databases are started on
// loopback by the test harness. Prints a markdown table and rewrites the "SQL generator"
// section of docs/benchmarks.md.
//
// Target (issue 15): flurry_next_id() at least half of nextval(). The statements of one
// database are measured in ROUNDS alternating rounds (A B C A B C …) and summed, so a load
// spike from other work on the machine hits every statement alike.
//   FLURRY_BENCH_SQL_SESSIONS (default 16), FLURRY_BENCH_SQL_SECONDS per statement and round
//   (default 2), FLURRY_BENCH_SQL_ROUNDS (default 3)
import os from 'node:os';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { Layout } from '@flurry/core';
import { startDatabase } from '@flurry/coordination/testing';
import { reserveSqlNode } from '../packages/server/dist/sql/reserve.js';
import { fmt, machineLine, table, writeSection } from './report.mjs';

const SESSIONS = Number(process.env.FLURRY_BENCH_SQL_SESSIONS ?? 16);
const SECONDS = Number(process.env.FLURRY_BENCH_SQL_SECONDS ?? 2);
const ROUNDS = Number(process.env.FLURRY_BENCH_SQL_ROUNDS ?? 3);
const layout = Layout.from('twitter');

/** Runs `sql` in a loop on every session for SECONDS; returns [calls, seconds] (all sessions). */
async function burst(sessions, sql) {
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
  return [counts.reduce((a, b) => a + b, 0), (performance.now() - t0) / 1000];
}

/** Calls per second (all sessions) of each statement, measured in alternating rounds. */
async function rates(sessions, statements) {
  for (const sql of statements) for (const s of sessions) for (let i = 0; i < 20; i++) await s(sql); // warm-up
  const calls = statements.map(() => 0);
  const secs = statements.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < statements.length; i++) {
      const [n, t] = await burst(sessions, statements[i]);
      calls[i] += n;
      secs[i] += t;
    }
  }
  return calls.map((n, i) => n / secs[i]);
}

const rows = [];
let pgRatio = NaN;

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
    const [flurry, nextval, uuid] = await rates(sessions, [
      'SELECT flurry_next_id()',
      "SELECT nextval('bench_seq')",
      'SELECT gen_random_uuid()',
    ]);
    pgRatio = flurry / nextval;
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
    const [flurry, auto, flurryInsert] = await rates(sessions, [
      'SELECT flurry_next_id()',
      'INSERT INTO bench_auto () VALUES ()',
      'INSERT INTO bench_flurry (id) VALUES (flurry_next_id())',
    ]);
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
const load = os
  .loadavg()
  .map((x) => x.toFixed(1))
  .join(', ');
const body =
  `\`npm run bench:sql\` (benchmarks/sql.mjs): the same ${SESSIONS} sessions call each statement in a loop, ${ROUNDS} alternating rounds of ${SECONDS} s per statement, ` +
  `one statement per call, databases on loopback started by the test harness (PostgreSQL with fsync=off, MariaDB with innodb_flush_log_at_trx_commit=2), layout twitter ` +
  `(16 lanes of 256 IDs per tick). Target: flurry_next_id() at least half of nextval(). Load average at the end of the run: ${load}.\n\n` +
  table(['Database', 'Statement', 'Calls/s (all sessions)', 'Ratio'], rows) +
  `\n\n**Target ${pgRatio >= 0.5 ? 'met' : 'MISSED'}:** flurry_next_id() ÷ nextval() = ${fmt(pgRatio, 2)} (aim ≥ 0.5). ` +
  `Each session holds a lane of its own (a sub-range of the sequence field, docs/sql.md), and no session waits for another. ` +
  `On PostgreSQL a session on a lane of its own counts in a private cursor (a temporary sequence: non-transactional, no WAL) and writes ` +
  `its lane's row once per 100 ms reservation, so a call is a sequence step, a clock read and two primary-key reads (lane open, lease held); ` +
  `the last lane is shared and updates its row on every call (with 16 lanes, one of the 16 sessions is on it). Before the cursor, a row update ` +
  `per call gave 0.40–0.87 × nextval() depending on the load; before lanes every call queued on one state row (0.25–0.35). ` +
  `MariaDB still updates its lane row on every call (SELECT … FOR UPDATE and UPDATE). ` +
  `Calls go through the Node.js client one at a time, so the client and the loaded machine weigh on every row alike.` +
  `\n\n${machineLine()}\n`;
console.log(body);
writeSection('SQL generator', body);
