// The memcached endpoint's figure (issue 27), measured by `npm run bench:service` in the same
// run as the service's (benchmarks/service.mjs calls memcachedBench), or alone:
// `node benchmarks/memcached.mjs [--rounds N] [--duration S] [--connections 1,4,64] [--no-write]`.
//
// `get id` requests/s of `flurry serve --memcached-port` (a fresh leased ID per request) vs a
// bare node:net server answering a constant `VALUE` block to every line (target >= 90%), runs
// in pairs whose order alternates (bare, flurry | flurry, bare | …): the ratio is the median
// over the rounds of each pair's flurry/bare (this VM's loopback speed shifts by 20% between
// runs now and then; a pair shares the moment, two medians may not), beside each side's
// median. Each pair is printed to stderr as a JSON line. The load is
// katsubushi's own benchmark shape (benchmark.pl: Cache::Memcached::Fast, `get("id")` in a
// closed loop, 1 and 4 concurrent clients, 10 s): here a client process of its own with N
// connections, one request outstanding on each. katsubushi's published figure, 21,915/s with
// 4 clients (its benchmark.pl, 2015), is printed beside for reference: another machine and
// another decade, not a target. Writes the "memcached" section of docs/benchmarks.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const KATSUBUSHI = { rps: 21_915, clients: 4, serial: 9_741 };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

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

/** The bare ceiling: node:net answering a constant VALUE block to every line it reads. */
const BARE_SOURCE = `
const net = require('node:net');
const reply = Buffer.from('VALUE id 0 19\\r\\n1859214170478923776\\r\\nEND\\r\\n');
net.createServer((s) => {
  s.setNoDelay(true);
  s.on('error', () => {});
  s.on('data', (d) => {
    let n = 0;
    for (let i = d.indexOf(10); i !== -1; i = d.indexOf(10, i + 1)) n++;
    if (n === 1) s.write(reply);
    else if (n > 1) s.write(Buffer.concat(Array(n).fill(reply)));
  });
}).listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

/**
 * The load: \`conns\` connections, each sending \`get id\` and the next one when \`END\` comes
 * back (closed loop, as katsubushi's benchmark.pl). One second of warm-up, then counts for
 * \`seconds\`. Prints {rps, bad}.
 */
export const CLIENT_SOURCE = `
const net = require('node:net');
const [port, conns, seconds] = process.argv.slice(1).map(Number);
const req = Buffer.from('get id\\r\\n');
let counting = false, done = 0, bad = 0;
for (let c = 0; c < conns; c++) {
  const s = net.connect({ host: '127.0.0.1', port, noDelay: true }, () => s.write(req));
  let tail = '';
  s.setEncoding('latin1');
  s.on('data', (d) => {
    const text = tail + d;
    let n = 0, end = 0;
    for (let i = text.indexOf('END\\r\\n'); i !== -1; i = text.indexOf('END\\r\\n', i + 5)) { n++; end = i + 5; }
    if (text.indexOf('ERROR') !== -1) bad++;
    tail = text.slice(Math.max(end, text.length - 4));
    if (counting) done += n;
    for (let k = 0; k < n; k++) s.write(req);
  });
  s.on('error', (e) => { console.error(String(e)); process.exit(1); });
}
setTimeout(() => {
  counting = true;
  setTimeout(() => { process.stdout.write(JSON.stringify({ rps: done / seconds, bad })); process.exit(0); }, seconds * 1000);
}, 1000);
`;

function load(port, conns, seconds) {
  const r = spawnSync(process.execPath, ['-e', CLIENT_SOURCE, String(port), String(conns), String(seconds)], {
    encoding: 'utf8',
    timeout: (seconds + 30) * 1000,
  });
  if (r.status !== 0) throw new Error(`memcached load client failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function startBare() {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', BARE_SOURCE, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('bare memcached server did not start in 10 s')), 10_000);
    child.stdout.once('data', () => {
      clearTimeout(t);
      resolve();
    });
  });
  return { port, pid: child.pid, stop: () => stop(child) };
}

async function startFlurry() {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-bench-memcached-'));
  const bin = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--port', '0', '--memcached-port', '0', '--allow-root', '--registry', `file:${dir}`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('flurry serve did not become ready in 20 s')), 20_000);
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const line of lines) {
        try {
          const l = JSON.parse(line);
          if (l.msg === 'ready') {
            clearTimeout(t);
            resolve(l.memcachedPort);
          }
        } catch {
          /* not JSON */
        }
      }
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

/**
 * Runs the memcached figure and returns its markdown; writes the "memcached" section of
 * docs/benchmarks.md unless `write` is false.
 */
export async function memcachedBench({
  rounds = 5,
  duration = 5,
  connections = [1, 4, 64],
  write = true,
  how = 'npm run bench:service',
} = {}) {
  process.stderr.write('bench:service: memcached get (flurry vs bare node:net)\n');
  const loadBefore = os.loadavg()[0];
  const bare = await startBare();
  const flurry = await startFlurry();
  const rows = [];
  try {
    load(bare.port, 4, 1); // warm-up (JIT)
    load(flurry.port, 4, 1);
    let peak = 0;
    for (const conns of connections) {
      const b = [];
      const f = [];
      let bad = 0;
      for (let i = 0; i < rounds; i++) {
        // The side that runs first alternates (bare, flurry | flurry, bare | …): what one run
        // leaves for the next, or a drift, falls on each side in turn.
        const flurryFirst = i % 2 === 1;
        const r = flurryFirst ? load(flurry.port, conns, duration) : undefined;
        b.push(load(bare.port, conns, duration).rps);
        const fr = r ?? load(flurry.port, conns, duration);
        f.push(fr.rps);
        bad += fr.bad;
        process.stderr.write(
          JSON.stringify({
            bench: 'memcached',
            conns,
            round: i,
            first: flurryFirst ? 'flurry' : 'bare',
            bare: Math.round(b[i]),
            flurry: Math.round(f[i]),
            ratio: Number((f[i] / b[i]).toFixed(3)),
          }) + '\n',
        );
        peak = Math.max(peak, rssMb(flurry.pid));
      }
      const ratio = median(f.map((x, i) => x / b[i]));
      const katsubushi =
        conns === KATSUBUSHI.clients
          ? `katsubushi ${fmt(KATSUBUSHI.rps)}/s (published, 4 clients)`
          : conns === 1
            ? `katsubushi ${fmt(KATSUBUSHI.serial)}/s (published, serial)`
            : '';
      rows.push([
        `\`get id\` req/s, ${conns} connection${conns > 1 ? 's' : ''} (closed loop), median of ${rounds}`,
        fmt(median(f)),
        `bare node:net ${fmt(median(b))}`,
        `${fmt(ratio * 100, 1)}%`,
        '≥ 90% of bare',
        ratio >= 0.9 ? 'yes' : '**no**',
        katsubushi,
      ]);
      if (bad > 0)
        rows.push([`Error replies during the ${conns}-connection runs`, fmt(bad), '', '', '0', '**no**', '']);
    }
    rows.push([
      'Resident memory of flurry serve during the memcached runs (peak VmRSS sampled after each run)',
      `${fmt(peak, 1)} MB`,
      '',
      '',
      '',
      '',
      '',
    ]);
  } finally {
    await bare.stop();
    await flurry.stop();
  }
  const md = [
    machineLine() +
      ` Load average at the start: ${fmt(loadBefore, 1)}, at the end: ${fmt(os.loadavg()[0], 1)} (other processes share the cores).`,
    'katsubushi\'s benchmark shape (its `benchmark.pl`: `get("id")` in a closed loop, 1 and 4 concurrent clients): a load ' +
      'client in its own Node.js process, one request outstanding per connection. `flurry serve --memcached-port` issues a ' +
      'real leased ID per `get` (twitter layout, file registry); the bare server is node:net answering a constant `VALUE` block ' +
      'to every line. Runs in pairs whose order alternates (bare, flurry | flurry, bare | …); the ratio is the median of ' +
      "each pair's flurry/bare, beside each side's median. katsubushi's figures are its published ones (2015, another " +
      'machine), for reference only.',
    '',
    table(['Measure', 'Flurry', 'Reference', 'Ratio', 'Target', 'Met', 'katsubushi'], rows),
    '',
    `Regenerate with \`${how}\` (alone: \`node benchmarks/memcached.mjs [--rounds N] [--duration S]\`).`,
  ].join('\n');
  if (write) writeSection('memcached', md);
  return md;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const opt = (name, def) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : def);
  const md = await memcachedBench({
    rounds: opt('rounds', 5),
    duration: opt('duration', 5),
    ...(args.includes('--connections')
      ? { connections: args[args.indexOf('--connections') + 1].split(',').map(Number) }
      : {}),
    write: !args.includes('--no-write'),
    how: 'node benchmarks/memcached.mjs',
  });
  console.log(md);
}
