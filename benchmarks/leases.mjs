#!/usr/bin/env node
// `npm run bench:leases`: per registry backend (file, zookeeper, zookeeper+leaf, etcd,
// redis, postgres, mysql on MariaDB; engines and databases started on loopback by the test
// harness) the median acquire latency,
// the median renewal cost, and the worst-case time from an engine's death (SIGKILL) to
// the holder's refusal to issue, which must never exceed the TTL. Prints a markdown
// table and rewrites the "Leases" section of docs/benchmarks.md.
//
// Targets (issue 3): acquire under 50 ms, renewal under 5 ms on loopback.
//
// `node benchmarks/leases.mjs --only=postgres,mysql` runs only the named backends and
// replaces (or adds) just their rows in the section's table.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Layout } from '@flurry/core';
import { openRegistry, leasedGenerator } from '@flurry/coordination';
import { startDatabase, startEngine } from '@flurry/coordination/testing';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fmt, machineLine, table, writeSection } from './report.mjs';

const ACQUIRES = 30;
const RENEWALS = 50;
const TTL = 3000; // for the death → refusal runs
const KILLS = 3;
const layout = Layout.parse('timestamp:41,worker:10,sequence:12');
const work = mkdtempSync(path.join(tmpdir(), 'flurry-bench-leases-'));
const stateDir = path.join(work, 'state');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function latency(url, cluster) {
  const registry = await openRegistry(url, {
    cluster,
    ttlMs: 10_000,
    autoRenew: false,
    stateDir,
    connectTimeoutMs: 5000,
  });
  try {
    // Warm-up (connections, directories, JIT).
    for (let i = 0; i < 3; i++) await (await registry.acquire(layout)).release();
    const acquire = [];
    for (let i = 0; i < ACQUIRES; i++) {
      const t = performance.now();
      const lease = await registry.acquire(layout);
      acquire.push(performance.now() - t);
      await lease.release();
    }
    const lease = await registry.acquire(layout);
    const renew = [];
    for (let i = 0; i < RENEWALS; i++) {
      const t = performance.now();
      const ok = await lease.renewNow();
      renew.push(performance.now() - t);
      if (!ok) throw new Error('a renewal failed during the benchmark');
    }
    await lease.release();
    return { acquire, renew };
  } finally {
    await registry.close().catch(() => undefined);
  }
}

/** Kills the engine at a chosen phase after a renewal; returns ms from the kill to the first refused ID. */
async function deathToRefusal(engine, url, cluster, phase) {
  const registry = await openRegistry(url, { cluster, ttlMs: TTL, stateDir, connectTimeoutMs: 5000 });
  const ids = await leasedGenerator({ registry, layout });
  try {
    const interval = registry.options.renewIntervalMs;
    await new Promise((resolve) => ids.lease.once('renewed', resolve));
    await sleep(phase * interval);
    let refusedAt = 0;
    const tKill = performance.now();
    const killed = engine.kill();
    const until = tKill + TTL * 3;
    while (!refusedAt && performance.now() < until) {
      try {
        ids.next();
      } catch {
        refusedAt = performance.now();
        break;
      }
      await sleep(1);
    }
    await killed;
    return refusedAt ? refusedAt - tKill : Infinity;
  } finally {
    await engine.restart();
    await ids.close().catch(() => undefined);
    await registry.close().catch(() => undefined);
  }
}

const backends = [
  { name: 'file', engine: null },
  { name: 'zookeeper', engine: 'zookeeper' },
  {
    name: 'zookeeper+leaf',
    engine: 'zookeeper',
    url: (e) =>
      `${e.url.replace(/^zookeeper:/, 'zookeeper+leaf:')}?address=127.0.0.1:7001&cacheDir=${encodeURIComponent(path.join(work, 'leaf'))}`,
  },
  { name: 'etcd', engine: 'etcd' },
  { name: 'redis', engine: 'redis' },
  // The SQL registries: a table in PostgreSQL 15 or MariaDB, lease expiry on the database's clock.
  { name: 'postgres', database: 'postgres', url: (d) => `${d.url}?table=flurry_bench` },
  { name: 'mysql (MariaDB)', database: 'mariadb', url: (d) => `${d.url}?table=flurry_bench` },
];
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
const only = onlyArg ? onlyArg.slice('--only='.length).split(',').filter(Boolean) : undefined;
const selected = only ? backends.filter((b) => only.some((o) => b.name === o || b.name.startsWith(`${o} `))) : backends;
if (only && selected.length === 0) {
  process.stderr.write(`bench:leases: --only names none of ${backends.map((b) => b.name).join(', ')}\n`);
  process.exit(2);
}

const rows = [];
const engines = new Map();
try {
  for (const b of selected) {
    process.stderr.write(`bench:leases: ${b.name}…\n`);
    const row = { name: b.name };
    try {
      let engine = null;
      let url;
      if (b.database) {
        engine = await startDatabase(b.database);
        engines.set(b.name, engine);
        url = b.url(engine);
      } else if (b.engine) {
        engine = engines.get(b.engine) ?? (await startEngine(b.engine));
        engines.set(b.engine, engine);
        url = b.url ? b.url(engine) : engine.url;
      } else {
        url = `file:${path.join(work, 'registry')}`;
      }
      const { acquire, renew } = await latency(url, `bench-${b.name.replace(/\W/g, '')}`);
      Object.assign(row, {
        acqMed: median(acquire),
        acqP95: pct(acquire, 95),
        renMed: median(renew),
        renP95: pct(renew, 95),
      });
      if (engine) {
        const times = [];
        for (let k = 0; k < KILLS; k++) {
          times.push(await deathToRefusal(engine, url, `bench-kill-${b.name.replace(/\W/g, '')}-${k}`, k / KILLS));
        }
        row.refusal = Math.max(...times);
      }
    } catch (e) {
      row.error = (e && e.message ? e.message : String(e)).split('\n')[0].slice(0, 120);
    }
    rows.push(row);
  }
} finally {
  for (const e of engines.values()) await e.stop().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}

const ms = (x) => (Number.isFinite(x) ? fmt(x, 2) : '–');
const body = [
  machineLine(),
  '',
  `Loopback, one process. Acquire = claim a free node ID and record the claim-time high-water mark (${ACQUIRES} runs, released in between); ` +
    `renewal = one background renewal with its high-water report (${RENEWALS} runs). Death → refusal: the engine is SIGKILLed at ${KILLS} phases of the ` +
    `renewal interval (TTL ${TTL} ms, margin ${Math.min(1000, TTL / 5)} ms) while the holder issues every millisecond; the worst time until its generator refuses. ` +
    'It must stay below the TTL (the holder stops at its fencing deadline, last renewal start + TTL − margin, or sooner when the driver notices the loss). Targets: acquire < 50 ms, renewal < 5 ms.',
  '',
  table(
    [
      'backend',
      'acquire median (ms)',
      'acquire p95 (ms)',
      'renewal median (ms)',
      'renewal p95 (ms)',
      'death → refusal, worst (ms)',
      'within TTL',
    ],
    rows.map((r) =>
      r.error
        ? [r.name, `error: ${r.error}`, '', '', '', '', '']
        : [
            r.name,
            ms(r.acqMed),
            ms(r.acqP95),
            ms(r.renMed),
            ms(r.renP95),
            r.refusal === undefined ? 'n/a (no engine)' : ms(r.refusal),
            r.refusal === undefined ? '–' : r.refusal <= TTL ? 'yes' : '**NO**',
          ],
    ),
  ),
].join('\n');
process.stdout.write(body + '\n');
if (only) replaceRows(body);
else writeSection('Leases', body);
if (rows.some((r) => r.refusal !== undefined && !(r.refusal <= TTL))) process.exitCode = 1;

/** With --only: replaces (or appends) only the measured backends' rows of the Leases table. */
function replaceRows(newBody) {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'benchmarks.md');
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.indexOf('## Leases');
  if (start < 0) return writeSection('Leases', newBody);
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end < 0) end = lines.length;
  for (const row of newBody.split('\n').filter((l) => /^\| [^-]/.test(l) && !l.startsWith('| backend '))) {
    const name = row.split('|')[1];
    const at = lines.findIndex((l, i) => i > start && i < end && l.split('|')[1] === name);
    if (at >= 0) lines[at] = row;
    else {
      let last = start;
      for (let i = start; i < end; i++) if (lines[i].startsWith('| ')) last = i;
      lines.splice(last + 1, 0, row);
      end++;
    }
  }
  writeFileSync(file, lines.join('\n'));
}
