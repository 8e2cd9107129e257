#!/usr/bin/env node
// `npm run bench:service`: drives the real `flurry serve` process with wrk (Debian's
// package; an open-loop client of its own for the constant-rate run) on loopback and, in the same run, a bare
// node:http server answering a constant body, as the ceiling of this machine. Prints a
// markdown table and rewrites the "Service" section of docs/benchmarks.md.
//
// Figures (issue 4):
//   1. GET /v1/ids/next requests/s vs the bare server (target >= 90%, issue 13), same wrk settings,
//      runs interleaved (bare, flurry, bare, flurry, …), the median of each side.
//   2. p99 latency at half of Flurry's best rate (target < 2 ms): an open-loop client at a
//      constant rate in its own process (wrk2 is not packaged; autocannon's latency
//      histogram has 1 ms resolution).
//   3. The batch route to one client: GET /v1/ids?count=10000 over one keep-alive
//      connection, IDs/s vs the layout's cap (4,096,000/s for twitter; target >= 95%),
//      with the service's default `borrow` policy (steady state) and with `wait`.
//   4. Resident memory of the server at full load (target < 100 MB): the largest VmRSS
//      sampled from /proc during the runs.
//   5. The console (issue 16): first paint, assets, five live streams (benchmarks/console.mjs). 6. memcached `get` vs bare node:net (benchmarks/memcached.mjs).
//
// Options: --duration S (per run, default 8), --rounds N (default 3), --connections C
// (default 64), --no-write (do not touch docs/benchmarks.md).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { consoleBench } from './console.mjs';
import { memcachedBench } from './memcached.mjs';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';
import { median, uuidRow } from './service-uuids.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : Number(args[i + 1]);
};
const DURATION = opt('duration', 5);
const ROUNDS = opt('rounds', 5);
const CONNECTIONS = opt('connections', 64);
const WRITE = !args.includes('--no-write');
const CAP = 4_096_000;
const BIN = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const WRK = '/usr/bin/wrk';

if (!existsSync(BIN)) {
  console.error('bench:service: build first (npm run build): packages/server/dist/cli/main.js is missing');
  process.exit(1);
}
if ((!existsSync(WRK) || !existsSync('/usr/bin/hey')) && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
  // As the test harness does for the engines: install the load generator from Debian's packages.
  console.error('bench:service: installing the load generators from Debian packages (wrk, hey)');
  spawnSync('apt-get', ['install', '-y', '-qq', 'wrk', 'hey'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
if (!existsSync(WRK)) {
  console.error('bench:service: wrk is missing; install the Debian package: apt-get install -y wrk');
  process.exit(1);
}

const children = new Set();
const cleanup = () => {
  for (const c of children)
    try {
      c.kill('SIGKILL');
    } catch {
      /* gone */
    }
};
process.on('exit', cleanup);
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
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
    child.stdout.once('data', () => {
      clearTimeout(t);
      resolve();
    });
  });
  return { port, pid: child.pid, stop: () => stop(child) };
}

async function startFlurry(extra = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-bench-'));
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', '0', '--allow-root', '--registry', `file:${dir}`, ...extra],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
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
          if (l.msg === 'ready') {
            clearTimeout(t);
            resolve(l.port);
          }
        } catch {
          /* partial line */
        }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`flurry serve exited with ${code}`)));
  });
  return {
    port,
    pid: child.pid,
    stop: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(t);
      children.delete(child);
      resolve();
    });
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
  const sampler = pid
    ? setInterval(() => {
        const r = rssMb(pid);
        if (r > peak) peak = r;
      }, 200)
    : undefined;
  const out = await new Promise((resolve, reject) => {
    const child = spawn(
      WRK,
      ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', `http://127.0.0.1:${port}${pathAndQuery}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const t = setTimeout(() => child.kill('SIGKILL'), (duration + 30) * 1000);
    child.once('exit', (code) => {
      clearTimeout(t);
      children.delete(child);
      code === 0 ? resolve(text) : reject(new Error(`wrk failed (${code}): ${text}`));
    });
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

/**
 * An open-loop (wrk2-style) client in its own process: `connections` keep-alive sockets,
 * requests due at a constant `rate`, sent by a 1 ms timer round-robin; a request due while
 * its socket is still busy waits for it. Latency runs from when the request was due (or,
 * when the socket was idle, from when it was written: the timer's own lag is the client's,
 * not the server's) to the last byte of the response. Returns p50/p99/p99.9/max in ms.
 */
const PACED_SOURCE = `
const net = require('node:net');
const [port, path, rate, conns, seconds] = process.argv.slice(1).map((x, i) => (i === 1 ? x : Number(x)));
const req = Buffer.from('GET ' + path + ' HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n');
const total = Math.floor(rate * seconds);
const lat = new Float64Array(total);
let done = 0, sent = 0, bad = 0;
const sockets = [];
function finish() {
  const l = Array.from(lat.subarray(0, done)).sort((a, b) => a - b);
  const q = (p) => l[Math.min(l.length - 1, Math.floor(p * l.length))];
  process.stdout.write(JSON.stringify({ rps: done / seconds, p50: q(0.5), p99: q(0.99), p999: q(0.999), max: l[l.length - 1], sent, done, bad }));
  process.exit(0);
}
for (let c = 0; c < conns; c++) {
  const s = net.connect({ host: '127.0.0.1', port, noDelay: true });
  const st = { s, busy: false, since: 0, queue: [], buf: '' };
  s.setEncoding('latin1');
  s.on('data', (d) => {
    st.buf += d;
    for (;;) {
      const h = st.buf.indexOf('\\r\\n\\r\\n');
      if (h === -1) return;
      const m = /content-length: *(\\d+)/i.exec(st.buf.slice(0, h));
      const end = h + 4 + (m ? Number(m[1]) : 0);
      if (st.buf.length < end) return;
      if (!st.buf.startsWith('HTTP/1.1 200')) bad++;
      st.buf = st.buf.slice(end);
      lat[done++] = performance.now() - st.since;
      if (done === total) finish();
      st.busy = false;
      if (st.queue.length) { st.since = st.queue.shift(); st.busy = true; s.write(req); }
    }
  });
  s.on('error', (e) => { console.error(String(e)); process.exit(1); });
  sockets.push(st);
}
let next = 0;
setTimeout(() => {
  const t0 = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - t0) * rate) / 1000));
    while (sent < due) {
      const st = sockets[next++ % conns];
      const dueAt = t0 + (sent * 1000) / rate;
      sent++;
      if (st.busy) st.queue.push(dueAt);
      else { st.busy = true; st.since = now; st.s.write(req); }
    }
    if (sent >= total) clearInterval(timer);
  }, 1);
  setTimeout(() => finish(), seconds * 1000 + 5000);
}, 300);
`;

function constantRate(port, pathAndQuery, rate, connections = 16, duration = DURATION) {
  const r = spawnSync(
    process.execPath,
    ['-e', PACED_SOURCE, String(port), pathAndQuery, String(Math.round(rate)), String(connections), String(duration)],
    {
      encoding: 'utf8',
      timeout: (duration + 30) * 1000,
    },
  );
  if (r.status !== 0) throw new Error(`paced client failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const HEY = '/usr/bin/hey';
/**
 * The same half rate through `hey` (Debian's package, Go): 16 workers, each limited to
 * rate/16 requests per second, latency from each request's write to its response (0.1 ms
 * resolution). Unlike the paced client it does not charge a late start to the server, so
 * the two rows bracket the truth. Median p99 of `rounds` runs.
 */
function heyRate(port, pathAndQuery, rate, rounds = 3, connections = 16, duration = DURATION) {
  const runs = [];
  for (let i = 0; i < rounds; i++) {
    const r = spawnSync(
      HEY,
      [
        '-z',
        `${duration}s`,
        '-c',
        String(connections),
        '-q',
        String(Math.max(1, Math.round(rate / connections))),
        `http://127.0.0.1:${port}${pathAndQuery}`,
      ],
      {
        encoding: 'utf8',
        timeout: (duration + 30) * 1000,
      },
    );
    const pick = (re) => Number((re.exec(r.stdout) ?? [])[1]);
    const p50 = pick(/50%+ in ([\d.]+) secs/) * 1000;
    const p99 = pick(/99%+ in ([\d.]+) secs/) * 1000;
    const rps = pick(/Requests\/sec:\s+([\d.]+)/);
    if (r.status !== 0 || !Number.isFinite(p99)) throw new Error(`hey failed: ${r.stderr || r.stdout}`);
    runs.push({ p50, p99, rps });
  }
  runs.sort((a, b) => a.p99 - b.p99);
  return runs[Math.floor(runs.length / 2)];
}

/** How far (ms) the server's newest ID runs ahead of the wall clock (its borrowed credit), via one `/v1/ids/next`. */
async function leadMs(port) {
  const { request } = await import('node:http');
  const body = await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/v1/ids/next', agent: false }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    })
      .on('error', reject)
      .end();
  });
  const id = BigInt(JSON.parse(body).id);
  return Number(id >> 22n) + 1288834974657 - Date.now();
}

// ---------------------------------------------------------------------------------------
const loadBefore = (await import('node:os')).loadavg()[0];
const bare = await startBare();
const flurry = await startFlurry();
const rows = [];
try {
  // Warm-up (JIT) for both.
  await wrk(bare.port, '/', { duration: 2 }); // JIT warm-up
  await wrk(flurry.port, '/v1/ids/next', { duration: 2 });
  await wrk(flurry.port, '/v1/uuids/next', { duration: 2 });

  const bareRuns = [];
  const flurryRuns = [];
  const uuidRuns = [];
  for (let i = 0; i < ROUNDS; i++) {
    process.stderr.write(`bench:service: round ${i + 1}/${ROUNDS}\n`);
    bareRuns.push(await wrk(bare.port, '/', { pid: bare.pid }));
    flurryRuns.push(await wrk(flurry.port, '/v1/ids/next', { pid: flurry.pid }));
    uuidRuns.push(await wrk(flurry.port, '/v1/uuids/next', { pid: flurry.pid }));
  }
  const bareRps = median(bareRuns.map((r) => r.rps));
  const flurryRps = median(flurryRuns.map((r) => r.rps));
  const bareBest = Math.max(...bareRuns.map((r) => r.rps));
  const flurryBest = Math.max(...flurryRuns.map((r) => r.rps));
  const flurryBad = flurryRuns.reduce((a, r) => a + r.non2xx, 0);
  const peakNext = Math.max(...flurryRuns.map((r) => r.peakRssMb));

  await consoleBench({ port: flurry.port, pid: flurry.pid, wrk, rounds: ROUNDS, duration: DURATION, write: WRITE });
  process.stderr.write("bench:service: constant rate at half of Flurry's rate\n");
  const half = flurryBest / 2;
  const paced = constantRate(flurry.port, '/v1/ids/next', half);
  const pacedBare = constantRate(bare.port, '/', half);
  const heyed = existsSync(HEY) ? heyRate(flurry.port, '/v1/ids/next', half) : null;
  const heyedBare = existsSync(HEY) ? heyRate(bare.port, '/', half) : null;

  process.stderr.write('bench:service: batch route, one client\n');
  await wrk(flurry.port, '/v1/ids?count=10000', { connections: 1, duration: 2 });
  const leadBefore = await leadMs(flurry.port);
  const batchBorrow = await wrk(flurry.port, '/v1/ids?count=10000', { connections: 1, pid: flurry.pid });
  const leadAfter = await leadMs(flurry.port);
  // IDs that came from running further ahead of the clock during the run are credit, not rate.
  const borrowedPerSec = (Math.max(0, leadAfter - leadBefore) * 4096) / DURATION;
  const batchBorrowNet = batchBorrow.rps * 10_000 - borrowedPerSec;
  await flurry.stop();
  const waitSrv = await startFlurry(['--on-exhausted', 'wait']);
  await wrk(waitSrv.port, '/v1/ids?count=10000', { connections: 1, duration: 2 });
  const batchWait = await wrk(waitSrv.port, '/v1/ids?count=10000', { connections: 1, pid: waitSrv.pid });
  await waitSrv.stop();
  const peak = Math.max(peakNext, batchWait.peakRssMb, batchBorrow.peakRssMb);

  const pct = (x) => `${fmt(x * 100, 1)}%`;
  const yes = (ok) => (ok ? 'yes' : '**no**');
  rows.push([
    `\`GET /v1/ids/next\` req/s, median of ${ROUNDS} interleaved runs (wrk, 1 thread, ${CONNECTIONS} connections)`,
    fmt(flurryRps),
    `bare node:http ${fmt(bareRps)}`,
    pct(flurryRps / bareRps),
    '≥ 90% of bare',
    yes(flurryRps / bareRps >= 0.9),
  ]);
  rows.push([
    `\`GET /v1/ids/next\` req/s, best of ${ROUNDS} (the machine's capacity with the least interference)`,
    fmt(flurryBest),
    `bare node:http ${fmt(bareBest)}`,
    pct(flurryBest / bareBest),
    '≥ 90% of bare',
    yes(flurryBest / bareBest >= 0.9),
  ]);
  rows.push(uuidRow(flurryRuns, uuidRuns, ROUNDS, CONNECTIONS));
  rows.push([
    'p50 / p99 latency at full load (wrk)',
    `${fmt(median(flurryRuns.map((r) => r.p50)), 2)} / ${fmt(median(flurryRuns.map((r) => r.p99)), 2)} ms`,
    `bare ${fmt(median(bareRuns.map((r) => r.p50)), 2)} / ${fmt(median(bareRuns.map((r) => r.p99)), 2)} ms`,
    '',
    'saturated: queueing, not a target',
    '',
  ]);
  rows.push([
    `p99 latency at half of the best rate (open-loop client, ${fmt(half)} req/s, 16 connections)`,
    `${fmt(paced.p99, 2)} ms (p50 ${fmt(paced.p50, 2)}, p99.9 ${fmt(paced.p999, 2)}, ${fmt(paced.rps)} req/s done)`,
    `bare ${fmt(pacedBare.p99, 2)} ms (p50 ${fmt(pacedBare.p50, 2)})`,
    '',
    '< 2 ms',
    yes(paced.p99 < 2),
  ]);
  if (heyed && heyedBare) {
    rows.push([
      `p99 latency at half of the best rate (hey: 16 workers at ${fmt(half / 16)} req/s each, median of 3 runs)`,
      `${fmt(heyed.p99, 2)} ms (p50 ${fmt(heyed.p50, 2)}, ${fmt(heyed.rps)} req/s done)`,
      `bare ${fmt(heyedBare.p99, 2)} ms (p50 ${fmt(heyedBare.p50, 2)}, ${fmt(heyedBare.rps)} req/s)`,
      '',
      '< 2 ms',
      yes(heyed.p99 < 2),
    ]);
  } else
    rows.push([
      'p99 latency at half of the best rate (hey)',
      'not run: install the Debian package hey',
      '',
      '',
      '< 2 ms',
      '',
    ]);
  rows.push([
    `\`GET /v1/ids?count=10000\`, one connection, default policy \`borrow\`, net of credit (IDs/s; delivered ${fmt(batchBorrow.rps * 10_000)}, lead over the clock ${fmt(leadBefore)} → ${fmt(leadAfter)} ms)`,
    fmt(batchBorrowNet),
    `cap ${fmt(CAP)}`,
    pct(batchBorrowNet / CAP),
    '≥ 95% of cap',
    yes(batchBorrowNet / CAP >= 0.95),
  ]);
  rows.push([
    '`GET /v1/ids?count=10000`, one connection, `--on-exhausted wait` (IDs/s)',
    fmt(batchWait.rps * 10_000),
    `cap ${fmt(CAP)}`,
    pct((batchWait.rps * 10_000) / CAP),
    '(no target)',
    '',
  ]);
  const peakBare = Math.max(...bareRuns.map((r) => r.peakRssMb));
  rows.push([
    'Resident memory of the server at full load (peak VmRSS over every run)',
    `${fmt(peak, 1)} MB`,
    `bare node:http ${fmt(peakBare, 1)} MB`,
    '',
    '< 100 MB',
    yes(peak < 100),
  ]);
  if (flurryBad > 0)
    rows.push(['Non-2xx responses during the `/v1/ids/next` runs', fmt(flurryBad), '', '', '0', '**no**']);

  const md = [
    machineLine() +
      ` Load average at the start of the run: ${fmt(loadBefore, 1)}, at the end: ${fmt((await import('node:os')).loadavg()[0], 1)} (other processes share the cores).`,
    `Load generator and servers share the machine's ${(await import('node:os')).cpus().length} cores (wrk with one thread; each server is one Node.js process). ` +
      'The bare server answers a constant ID-shaped JSON body with node:http; Flurry issues a real leased ID per request ' +
      '(twitter layout, file registry, defaults otherwise). The machine is shared with other work, so throughput is given as the ' +
      'median and the best of interleaved runs. wrk2 is not packaged and autocannon records latency in whole milliseconds, so the ' +
      'half-rate latency comes from a small open-loop Node.js client in its own process (requests due at a constant rate, ' +
      'latency from when each was due or written to its last byte, 1 ms timer), and, as a second opinion, from `hey` (16 rate-limited ' +
      'workers; latency from each write). On a shared machine these percentiles are ' +
      "dominated by scheduling stalls of whole processes (the bare server's own figures at the same rate are in the Reference " +
      'column); the < 2 ms target needs a run on an otherwise idle machine. ' +
      "The batch route caps at the layout's 4,096 IDs per millisecond. The service's default `borrow` issues up to 1 s ahead " +
      'of the wall clock when a tick runs out, so writing a response overlaps the clock; the IDs that came from running further ' +
      "ahead during the run (the growth of the newest ID's lead over the wall clock, 4,096 IDs per ms) are subtracted. With `wait` the generator sleeps into each next millisecond, and the ticks that pass " +
      'between one request and the next are lost to a single sequential client.',
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
console.log('\n' + (await memcachedBench({ rounds: ROUNDS, duration: DURATION, write: WRITE })));
