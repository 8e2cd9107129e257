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
// 4. Over HTTP: `GET /v1/sequences/{key}/next` vs `GET /v1/ids/next` req/s on one `flurry serve --sequences`
//    process, wrk runs interleaved, medians (segments-http.mjs). Target: within 5 %.
//
// Options: --rounds N (HTTP runs per route, default 7), --duration S (per HTTP run, default 2).
// Part of `npm run bench` (benchmarks/run.mjs runs it after the generator).
// Prints markdown and rewrites the "Segments" section of docs/benchmarks.md.
import { openSequences } from '@flurry/segments';
import { startDatabase, startEngine } from '@flurry/coordination/testing';
import { Redis } from 'ioredis';
import { fmt, machineLine, table, writeSection } from './report.mjs';
import { httpComparison } from './segments-http.mjs';

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(argv[i + 1]);
};

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
const web = await httpComparison({ rounds: opt('rounds', 7), duration: opt('duration', 2), connections: 64 });
const webOk = web.error === undefined && web.ratio >= 0.95;
const verdict = (ok) => (ok ? 'met' : 'MISSED');
const targets = [
  [
    'in-process tryNext() from a buffered segment',
    '≥ 50M numbers/s',
    `${fmt(hot.number / 1e6, 1)}M/s`,
    verdict(hot.number >= 50e6),
  ],
  [
    '`GET /v1/sequences/{key}/next` vs `GET /v1/ids/next`, same process, same run',
    '≥ 95 %',
    web.error ?? `${fmt(web.ratio * 100, 1)} % (${fmt(web.sequences)} vs ${fmt(web.ids)} req/s)`,
    verdict(webOk),
  ],
  [
    `store round trips per 10,000 numbers at ${fmt(RATE)}/s, after the step adapts`,
    '≤ 1',
    fmt(sus.perTenK, 3),
    verdict(sus.perTenK <= 1),
  ],
  [
    'waits on an empty buffer at that rate, after the step adapts',
    '0',
    fmt(sus.waitsAfter),
    verdict(sus.waitsAfter === 0),
  ],
];

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
  '',
  web.error
    ? `HTTP: not measured (${web.error}).`
    : `HTTP, one \`flurry serve --sequences memory://… --auto-create\` process, wrk (1 thread, ${web.connections} connections, ${web.duration} s per run), ` +
      `${web.rounds} runs per route interleaved (ids, sequences, ids, …) after a 2 s warm-up of each; the load generator shares the machine. ` +
      `Medians: \`GET /v1/ids/next\` ${fmt(web.ids)} req/s, \`GET /v1/sequences/bench/next\` ${fmt(web.sequences)} req/s ` +
      `(runs: ids ${web.idsRuns.map((x) => fmt(x)).join(', ')}; sequences ${web.seqRuns.map((x) => fmt(x)).join(', ')}).`,
  '',
  '### Targets (issue 14)',
  '',
  table(['what', 'target', 'measured', 'verdict'], targets),
  '',
  'Regenerate with `npm run bench:segments` (also part of `npm run bench`).',
].join('\n');
process.stdout.write(body + '\n');
writeSection('Segments', body);
if (hot.number < 50e6 || sus.perTenK > 1 || sus.waitsAfter > 0 || !webOk) process.exitCode = 1;
