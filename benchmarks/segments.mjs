#!/usr/bin/env node
// `npm run bench:segments`: segment mode (issue 14).
//
// 1. In-process issuing from a buffered segment: tryNext() (a plain number increment), next() (number, not
//    awaited while buffered), tryNextBigInt(), batch(1000), best of 5 runs of 20M calls. Target: tryNext ≥ 50M/s.
// 2. Sustained 1M numbers/s from one key on a real PostgreSQL (started by the test harness) for 10 s with the
//    default options (stored step 1000, adaptive up to 1,000,000): store round trips per 10,000 numbers after
//    the step has adapted (the first 2 s left out), and waits on an empty buffer. Target: ≤ 1 round trip per
//    10,000 numbers and 0 waits.
// 3. The peer the seeds describe: one Redis INCR per number (sequential round trips), same machine.
//
// Prints markdown and rewrites the "Segments" section of docs/benchmarks.md.
import { openSequences } from '@flurry/segments';
import { startDatabase, startEngine } from '@flurry/coordination/testing';
import { Redis } from 'ioredis';
import { fmt, machineLine, table, writeSection } from './report.mjs';

const RUNS = 5;
const CALLS = 20_000_000;
const SUSTAIN_S = 10;
const RATE = 1_000_000;

async function inProcess() {
  const seqs = await openSequences('memory://bench', { maxStep: 2 ** 31 - 1 });
  // One segment of 2^31 - 1 numbers: every measured call is served from the buffer.
  await seqs.create('hot', { step: 2 ** 31 - 1 });
  const s = seqs.get('hot');
  await s.next();
  const rows = [];
  const measure = async (name, fn, calls) => {
    let best = 0;
    for (let r = 0; r < RUNS; r++) {
      const t0 = process.hrtime.bigint();
      const sink = await fn(calls);
      const dt = Number(process.hrtime.bigint() - t0) / 1e9;
      if (sink === -1) throw new Error('unreachable');
      best = Math.max(best, calls / dt);
    }
    rows.push([name, fmt(best / 1e6, 1)]);
    return best;
  };
  const number = await measure(
    'tryNext() (number)',
    (n) => {
      let x = 0;
      for (let i = 0; i < n; i++) x += s.tryNext();
      return x;
    },
    CALLS,
  );
  await measure(
    'next() while buffered (number, a plain value)',
    (n) => {
      let x = 0;
      for (let i = 0; i < n; i++) x += s.next();
      return x;
    },
    CALLS,
  );
  await measure(
    'tryNextBigInt() (bigint)',
    (n) => {
      let x = 0n;
      for (let i = 0; i < n; i++) x = s.tryNextBigInt();
      return x;
    },
    CALLS,
  );
  await measure(
    'batch(1000), per number',
    async (n) => {
      let x = 0;
      for (let i = 0; i < n / 1000; i++) x += (await s.batch(1000)).length;
      return x;
    },
    CALLS / 4,
  );
  await seqs.close();
  return { rows, number };
}

async function sustained() {
  const db = await startDatabase('postgres');
  try {
    const seqs = await openSequences(db.url);
    await seqs.create('load', { step: 1000 });
    const s = seqs.get('load');
    await s.next();
    let issued = 0;
    let waits = 0;
    let waitsAt2s;
    let fetchesAt2s;
    let issuedAt2s;
    const t0 = performance.now();
    let last = 0;
    for (;;) {
      const elapsed = (performance.now() - t0) / 1000;
      if (elapsed >= SUSTAIN_S) break;
      if (fetchesAt2s === undefined && elapsed >= 2) {
        fetchesAt2s = s.status().fetches;
        issuedAt2s = issued;
        waitsAt2s = waits;
      }
      const target = Math.floor(elapsed * RATE);
      while (issued < target) {
        let v = s.tryNext();
        if (v === undefined) {
          waits++;
          v = await s.next();
        }
        if (v <= last) throw new Error(`not increasing: ${v} after ${last}`);
        last = v;
        issued++;
      }
      await new Promise((r) => setImmediate(r));
    }
    const wall = (performance.now() - t0) / 1000;
    const st = s.status();
    const fetchesAfter = st.fetches - (fetchesAt2s ?? 0);
    const issuedAfter = issued - (issuedAt2s ?? 0);
    await seqs.close();
    return {
      rate: issued / wall,
      issued,
      fetches: st.fetches,
      perTenK: (fetchesAfter / issuedAfter) * 10_000,
      waits,
      waitsAfter: waits - (waitsAt2s ?? 0),
      step: st.step,
      latency: st.lastFetchLatencyMs,
    };
  } finally {
    await db.stop();
  }
}

async function redisIncr() {
  const e = await startEngine('redis');
  const r = new Redis(e.url);
  try {
    const n = 20_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await r.incr('peer');
    return n / ((performance.now() - t0) / 1000);
  } finally {
    r.disconnect();
    await e.stop();
  }
}

const hot = await inProcess();
const sus = await sustained();
const incr = await redisIncr();

const body = [
  machineLine(),
  '',
  `In-process issuing from a buffered segment (memory store, one segment of 2^31 − 1 numbers), best of ${RUNS} runs of ${fmt(CALLS)} calls. ` +
    'Target (issue 14): at least 50M numbers/s.',
  '',
  table(['call', 'M numbers/s'], hot.rows),
  '',
  `Sustained ${fmt(RATE)} numbers/s from one key on PostgreSQL 15 (loopback, started by the harness) for ${SUSTAIN_S} s with the default options ` +
    '(stored step 1000; adaptive step, target 15 min per segment, cap 1,000,000; prefetch at 10 %). Round trips are counted after the first 2 s. ' +
    'Targets: at most 1 store round trip per 10,000 numbers after the step adapts, 0 waits on an empty buffer.',
  '',
  table(
    [
      'numbers/s achieved',
      'numbers',
      'fetches (all)',
      'round trips per 10,000 (after 2 s)',
      'waits on empty buffer (after 2 s / all)',
      'final step',
      'last fetch (ms)',
    ],
    [
      [
        fmt(sus.rate),
        fmt(sus.issued),
        fmt(sus.fetches),
        fmt(sus.perTenK, 3),
        `${fmt(sus.waitsAfter)} / ${fmt(sus.waits)}`,
        fmt(sus.step),
        fmt(sus.latency, 2),
      ],
    ],
  ),
  '',
  `Peer, the alternative the seeds describe: one Redis \`INCR\` per number (sequential, loopback): ${fmt(incr)} numbers/s.`,
].join('\n');
process.stdout.write(body + '\n');
writeSection('Segments', body);
if (hot.number < 50e6 || sus.perTenK > 1 || sus.waitsAfter > 0) process.exitCode = 1;
