#!/usr/bin/env node
// `npm run bench:client`: what one @flurry/client gets from one local `flurry serve`.
//
// 1. Sustained IDs/s with prefetch: a consumer takes IDs for `--duration` seconds
//    (tryNext(), falling back to await next() when the buffer is empty) and yields to the
//    event loop every 1,000 IDs, as an application doing its own I/O does; plus the same
//    without yielding (pure `await next()` loop), where refills can only land when the
//    buffer has run dry.
// 2. Latency of one next() call while the buffer holds IDs: the buffer is filled, then
//    each call is timed with process.hrtime.bigint() (the timer's own cost, measured
//    separately, is included in the figures, not subtracted).
//
// Prints a markdown table and rewrites the "## Client" section of docs/benchmarks.md.
// The machine is shared, so the sustained rate is measured in `--runs` runs (default 5)
// and reported as the median and the best.
// Options: --duration S per run (default 3), --runs N (default 5), --rounds N latency rounds (default 10).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const { createClient } = await import(path.join(root, 'packages/client/dist/index.js'));
const { startFlurry } = await import(path.join(root, 'packages/client/dist/testing/flurry-process.js'));

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const durationS = arg('duration', 3);
const runs = arg('runs', 5);
const rounds = arg('rounds', 10);
const load0 = os.loadavg()[0];

const dir = mkdtempSync(path.join(os.tmpdir(), 'flurry-bench-client-'));
const server = await startFlurry({ registryDir: dir });

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function sustained(yieldEvery) {
  const client = createClient({
    servers: [server.url],
    prefetch: { size: 100_000, lowWater: 60_000, maxAgeMs: 5_000 },
  });
  // Warm-up: one second, so connections, JIT and the adaptive buffer settle.
  const warm = performance.now() + 1_000;
  let k = 0;
  while (performance.now() < warm) {
    if (client.tryNext() === undefined) await client.next();
    if (++k % 1_000 === 0) await yieldLoop();
  }
  const s0 = client.stats();
  let waits = 0;
  let n = 0;
  let check = 0n;
  const t0 = performance.now();
  const end = t0 + durationS * 1_000;
  for (;;) {
    let v = yieldEvery ? client.tryNext() : undefined;
    if (v === undefined) {
      if (yieldEvery) waits++;
      v = await client.next();
    }
    check ^= v;
    n++;
    if ((n & 1023) === 0) {
      if (performance.now() >= end) break;
      if (yieldEvery) await yieldLoop();
    }
  }
  const secs = (performance.now() - t0) / 1_000;
  const s1 = client.stats();
  await client.close();
  return {
    rate: n / secs,
    n,
    waits,
    requests: s1.requests - s0.requests,
    discarded: s1.discarded - s0.discarded,
    check,
  };
}

async function latency() {
  const client = createClient({
    servers: [server.url],
    prefetch: { size: 100_000, lowWater: 99_999, adaptive: false },
  });
  const perRound = 90_000;
  const next = [];
  const sync = [];
  // Timer cost alone.
  const empty = [];
  for (let i = 0; i < 100_000; i++) {
    const a = process.hrtime.bigint();
    const b = process.hrtime.bigint();
    empty.push(Number(b - a));
  }
  await client.next();
  for (let r = 0; r < rounds * 2; r++) {
    // Wait (bounded) for the buffer to be full.
    for (let w = 0; w < 500 && client.stats().buffered < perRound; w++) await new Promise((res) => setTimeout(res, 2));
    if (client.stats().buffered < perRound) throw new Error('the buffer did not fill within 1 s');
    const into = r % 2 === 0 ? next : sync;
    if (r % 2 === 0) {
      for (let i = 0; i < perRound; i++) {
        const a = process.hrtime.bigint();
        await client.next();
        const b = process.hrtime.bigint();
        into.push(Number(b - a));
      }
    } else {
      for (let i = 0; i < perRound; i++) {
        const a = process.hrtime.bigint();
        client.tryNext();
        const b = process.hrtime.bigint();
        into.push(Number(b - a));
      }
    }
    // Let the refill land.
    await client.next();
  }
  await client.close();
  const sort = (a) => Float64Array.from(a).sort();
  return { next: sort(next), sync: sort(sync), empty: sort(empty) };
}

try {
  process.stderr.write(`bench:client: sustained rate, ${runs} runs of ${durationS} s…\n`);
  const yieldRuns = [];
  for (let r = 0; r < runs; r++) yieldRuns.push(await sustained(true));
  yieldRuns.sort((a, b) => a.rate - b.rate);
  const withYield = yieldRuns[Math.floor(yieldRuns.length / 2)];
  const best = yieldRuns[yieldRuns.length - 1];
  const noYield = await sustained(false);
  process.stderr.write(`bench:client: latency, ${rounds} rounds…\n`);
  const lat = await latency();
  const us = (ns) => fmt(ns / 1_000, 2);
  const load1 = os.loadavg()[0];

  const rows = [
    [
      `IDs/s from one client, one server, prefetch (consumer yields every 1,000 IDs), median of ${runs} runs`,
      fmt(withYield.rate),
      '≥ 1,000,000',
      withYield.rate >= 1_000_000 ? 'yes' : '**no**',
      `that run: ${fmt(withYield.n)} IDs in ${durationS} s, ${fmt(withYield.requests)} batch requests, buffer empty ${fmt(withYield.waits)} times, ${fmt(withYield.discarded)} discarded as stale; all runs: ${yieldRuns.map((r) => fmt(r.rate / 1e6, 2)).join(', ')} M/s`,
    ],
    [
      `IDs/s, best of the ${runs} runs (the least interference)`,
      fmt(best.rate),
      '≥ 1,000,000',
      best.rate >= 1_000_000 ? 'yes' : '**no**',
      `${fmt(best.requests)} batch requests, buffer empty ${fmt(best.waits)} times`,
    ],
    [
      'IDs/s, consumer never yields (`await next()` loop)',
      fmt(noYield.rate),
      '(no target)',
      '',
      `${fmt(noYield.requests)} requests; refills land only when the buffer is empty`,
    ],
    [
      '`await next()` latency while the buffer holds IDs, p50 / p99 / p99.9 (µs)',
      `${us(pct(lat.next, 50))} / ${us(pct(lat.next, 99))} / ${us(pct(lat.next, 99.9))}`,
      'p99 < 5 µs',
      pct(lat.next, 99) < 5_000 ? 'yes' : '**no**',
      `${fmt(lat.next.length)} calls; max ${us(lat.next[lat.next.length - 1])} µs (GC)`,
    ],
    [
      '`tryNext()` latency (synchronous), p50 / p99 / p99.9 (µs)',
      `${us(pct(lat.sync, 50))} / ${us(pct(lat.sync, 99))} / ${us(pct(lat.sync, 99.9))}`,
      '(no target)',
      '',
      `${fmt(lat.sync.length)} calls`,
    ],
    [
      'the timer alone (two `process.hrtime.bigint()` calls), p50 / p99 (µs)',
      `${us(pct(lat.empty, 50))} / ${us(pct(lat.empty, 99))}`,
      '',
      '',
      'included in the latencies above',
    ],
  ];
  const body = [
    machineLine() +
      ` Load average at the start of the run: ${load0.toFixed(1)}, at the end: ${load1.toFixed(1)} (other processes share the cores).`,
    '',
    "One `@flurry/client` in the benchmark process and one `flurry serve` (twitter layout, file registry, defaults) in its own process, on loopback. Prefetch: a buffer of up to 100,000 IDs, low-water mark 60,000, refilled by `GET /v1/ids?count=N` with N up to the service's 10,000, at most one refill in flight per server, so one server delivers at most 10,000 IDs per request round trip. The latency rounds fill the buffer first, then time 90,000 calls each.",
    '',
    table(['Measure', 'Result', 'Target', 'Met', 'Notes'], rows),
    '',
    'Regenerate with `npm run bench:client` (options: `--duration S --runs N --rounds N`).',
  ].join('\n');
  console.log(body);
  writeSection('Client', body);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
