#!/usr/bin/env node
// `npm run bench:service`: drives the real `flurry serve` process with wrk (Debian's
// package; autocannon for the constant-rate run) on loopback and, in the same run, a bare
// node:http server answering a constant body, as the ceiling of this machine. Prints a
// markdown table and rewrites the "Service" section of docs/benchmarks.md.
//
// Figures (issue 4):
//   1. GET /v1/ids/next requests/s vs the bare server (target >= 85%), same wrk settings,
//      runs interleaved (bare, flurry, bare, flurry, …), the median of each side.
//   2. p99 latency at half of Flurry's measured rate (target < 2 ms): autocannon with
//      `overallRate` (a constant request rate; wrk2 is not packaged), from a separate process.
//   3. The batch route to one client: GET /v1/ids?count=10000 over one keep-alive
//      connection, IDs/s vs the layout's cap (4,096,000/s for twitter; target >= 95%),
//      with the default `wait` policy and with `--on-exhausted borrow`.
//   4. Resident memory of the server at full load (target < 100 MB): the largest VmRSS
//      sampled from /proc during the runs.
//
// Options: --duration S (per run, default 8), --rounds N (default 3), --connections C
// (default 64), --no-write (do not touch docs/benchmarks.md).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : Number(args[i + 1]);
};
const DURATION = opt('duration', 8);
const ROUNDS = opt('rounds', 3);
const CONNECTIONS = opt('connections', 64);
const WRITE = !args.includes('--no-write');
const CAP = 4_096_000;
const BIN = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const WRK = '/usr/bin/wrk';

if (!existsSync(BIN)) {
  console.error('bench:service: build first (npm run build): packages/server/dist/cli/main.js is missing');
  process.exit(1);
}
if (!existsSync(WRK)) {
  console.error('bench:service: wrk is missing; install the Debian package: apt-get install -y wrk');
  process.exit(1);
}

const children = new Set();
const cleanup = () => { for (const c of children) try { c.kill('SIGKILL'); } catch { /* gone */ } };
process.on('exit', cleanup);
process.on('SIGINT', () => { cleanup(); process.exit(130); });

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/** The bare ceiling: node:http answering a constant ID-shaped JSON body. */
const BARE_SOURCE = `
const http = require('node:http');
const body = '{"id":"1859214170478923776"}';
http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

async function startBare() {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', BARE_SOURCE, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('bare server did not start in 10 s')), 10_000);
    child.stdout.once('data', () => { clearTimeout(t); resolve(); });
  });
  return { port, pid: child.pid, stop: () => stop(child) };
}

async function startFlurry(extra = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-bench-'));
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--allow-root', '--registry', `file:${dir}`, ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  const port = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('flurry serve did not become ready in 20 s')), 20_000);
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      for (const line of buf.split('\n')) {
        try {
          const l = JSON.parse(line);
          if (l.msg === 'ready') { clearTimeout(t); resolve(l.port); }
        } catch { /* partial line */ }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`flurry serve exited with ${code}`)));
  });
  return { port, pid: child.pid, stop: async () => { await stop(child); rmSync(dir, { recursive: true, force: true }); } };
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => { clearTimeout(t); children.delete(child); resolve(); });
    child.kill('SIGTERM');
  });
}

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Runs wrk and returns requests/s, p50/p99 latency (ms), and the peak RSS of `pid`. */
async function wrk(port, pathAndQuery, { connections = CONNECTIONS, duration = DURATION, pid } = {}) {
  let peak = 0;
  const sampler = pid ? setInterval(() => { const r = rssMb(pid); if (r > peak) peak = r; }, 200) : undefined;
  const out = await new Promise((resolve, reject) => {
    const child = spawn(WRK, ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', `http://127.0.0.1:${port}${pathAndQuery}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const t = setTimeout(() => child.kill('SIGKILL'), (duration + 30) * 1000);
    child.once('exit', (code) => { clearTimeout(t); children.delete(child); code === 0 ? resolve(text) : reject(new Error(`wrk failed (${code}): ${text}`)); });
  });
  if (sampler) clearInterval(sampler);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const lat = (p) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(out)?.[1] ?? '';
  return { rps, p50: lat(50), p99: lat(99), peakRssMb: peak, non2xx, errors, raw: out };
}

/** autocannon at a constant overall rate from its own process; returns p50/p99/p999 (ms) and the rate achieved. */
function constantRate(port, pathAndQuery, rate, connections = 16, duration = DURATION) {
  const script = `
    const autocannon = require('autocannon');
    autocannon({ url: 'http://127.0.0.1:${port}${pathAndQuery}', connections: ${connections}, overallRate: ${Math.round(rate)}, duration: ${duration} }, (err, r) => {
      if (err) { console.error(String(err)); process.exit(1); }
      process.stdout.write(JSON.stringify({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, p999: r.latency.p99_9 ?? r.latency.p999, max: r.latency.max, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts }));
    });`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', timeout: (duration + 60) * 1000 });
  if (r.status !== 0) throw new Error(`autocannon failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

// ---------------------------------------------------------------------------------------
const bare = await startBare();
const flurry = await startFlurry();
const rows = [];
try {
  // Warm-up (JIT) for both.
  await wrk(bare.port, '/', { duration: 2 });
  await wrk(flurry.port, '/v1/ids/next', { duration: 2 });

  const bareRuns = [];
  const flurryRuns = [];
  for (let i = 0; i < ROUNDS; i++) {
    process.stderr.write(`bench:service: round ${i + 1}/${ROUNDS}\n`);
    bareRuns.push(await wrk(bare.port, '/', { pid: bare.pid }));
    flurryRuns.push(await wrk(flurry.port, '/v1/ids/next', { pid: flurry.pid }));
  }
  const bareRps = median(bareRuns.map((r) => r.rps));
  const flurryRps = median(flurryRuns.map((r) => r.rps));
  const flurryBad = flurryRuns.reduce((a, r) => a + r.non2xx, 0);
  const peakNext = Math.max(...flurryRuns.map((r) => r.peakRssMb));

  process.stderr.write('bench:service: constant rate at half of Flurry\'s rate\n');
  const half = flurryRps / 2;
  const paced = constantRate(flurry.port, '/v1/ids/next', half);
  const pacedBare = constantRate(bare.port, '/', half);

  process.stderr.write('bench:service: batch route, one client\n');
  const batchWait = await wrk(flurry.port, '/v1/ids?count=10000', { connections: 1, pid: flurry.pid });
  await flurry.stop();
  const borrowSrv = await startFlurry(['--on-exhausted', 'borrow']);
  await wrk(borrowSrv.port, '/v1/ids?count=10000', { connections: 1, duration: 2 });
  const batchBorrow = await wrk(borrowSrv.port, '/v1/ids?count=10000', { connections: 1, pid: borrowSrv.pid });
  await borrowSrv.stop();
  const peak = Math.max(peakNext, batchWait.peakRssMb, batchBorrow.peakRssMb);

  const pct = (x) => `${fmt(x * 100, 1)}%`;
  const yes = (ok) => (ok ? 'yes' : '**no**');
  rows.push(['`GET /v1/ids/next` req/s (wrk, 1 thread, ' + CONNECTIONS + ' connections, median of ' + ROUNDS + ')', fmt(flurryRps), `bare node:http ${fmt(bareRps)}`, pct(flurryRps / bareRps), '≥ 85% of bare', yes(flurryRps / bareRps >= 0.85)]);
  rows.push(['p50 / p99 latency at full load (wrk)', `${fmt(median(flurryRuns.map((r) => r.p50)), 2)} / ${fmt(median(flurryRuns.map((r) => r.p99)), 2)} ms`, `bare ${fmt(median(bareRuns.map((r) => r.p50)), 2)} / ${fmt(median(bareRuns.map((r) => r.p99)), 2)} ms`, '', 'saturated: queueing, not a target', '']);
  rows.push([`p99 latency at half rate (autocannon overallRate ${fmt(half)}/s, 16 connections)`, `${fmt(paced.p99, 2)} ms (p50 ${fmt(paced.p50, 2)}, achieved ${fmt(paced.rps)}/s)`, `bare ${fmt(pacedBare.p99, 2)} ms`, '', '< 2 ms', yes(paced.p99 < 2)]);
  rows.push(['`GET /v1/ids?count=10000`, one connection, policy `wait` (IDs/s)', fmt(batchWait.rps * 10_000), `cap ${fmt(CAP)}`, pct((batchWait.rps * 10_000) / CAP), '≥ 95% of cap', yes((batchWait.rps * 10_000) / CAP >= 0.95)]);
  rows.push(['`GET /v1/ids?count=10000`, one connection, `--on-exhausted borrow` (IDs/s)', fmt(batchBorrow.rps * 10_000), `cap ${fmt(CAP)}`, pct((batchBorrow.rps * 10_000) / CAP), '≥ 95% of cap', yes((batchBorrow.rps * 10_000) / CAP >= 0.95)]);
  rows.push(['Resident memory of the server at full load (peak VmRSS)', `${fmt(peak, 1)} MB`, '', '', '< 100 MB', yes(peak < 100)]);
  if (flurryBad > 0) rows.push(['Non-2xx responses during the `/v1/ids/next` runs', fmt(flurryBad), '', '', '0', '**no**']);

  const md = [
    machineLine(),
    `Load generator and servers share the machine's ${(await import('node:os')).cpus().length} cores (wrk with one thread; each server is one Node.js process). ` +
      'The bare server answers a constant ID-shaped JSON body with node:http; Flurry issues a real leased ID per request ' +
      '(twitter layout, file registry, defaults otherwise). wrk2-style constant-rate loading is not packaged, so the half-rate ' +
      'p99 comes from autocannon with `overallRate` (its own process; autocannon counts latency in whole milliseconds, so its ' +
      'p99 is a coarse upper bound). The batch route caps at the layout\'s 4,096 IDs per millisecond: with `wait` the ' +
      'generator sleeps into each next millisecond while the response is being serialized, with `borrow` it issues ' +
      'ahead (up to 1 s) and the serialization overlaps.',
    '',
    table(['Measure', 'Flurry', 'Reference', 'Ratio', 'Target', 'Met'], rows),
    '',
    'Regenerate with `npm run bench:service` (options: `--duration S --rounds N --connections C`).',
  ].join('\n');
  console.log(md);
  if (WRITE) writeSection('Service', md);
} finally {
  await bare.stop();
  await flurry.stop();
}
