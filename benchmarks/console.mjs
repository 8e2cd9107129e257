// The console's figures (issue 16), measured by `npm run bench:service` in the same run as
// the service's (benchmarks/service.mjs calls consoleBench with its running `flurry serve`
// and its wrk runner), or alone: `node benchmarks/console.mjs [--rounds N] [--duration S]`.
//   1. First paint of the page on loopback (target < 300 ms): Debian's chromium through
//      playwright-core, a fresh browser context (empty cache) per load, the page's own
//      performance timing (first-contentful-paint), the median of the loads after one warm-up.
//   2. The page's assets, compressed (target < 150 kB): the HTML and every file it names,
//      fetched with Accept-Encoding: br (and gzip), the bytes on the wire summed.
//   3. Five consoles with live streams open cost < 2% of GET /v1/ids/next throughput: wrk
//      runs interleaved without and with five open /v1/events streams (read by plain HTTP
//      clients, as EventSource reads them: the browsers' own rendering runs on the operators'
//      machines, not the service's), the median of each side.
// Writes the "Console" section of docs/benchmarks.md (unless --no-write).
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function get(port, pathAndQuery, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: pathAndQuery, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Bytes on the wire of the page and every asset it names, with one Accept-Encoding. */
async function pageBytes(port, encoding) {
  const html = await get(port, '/', { 'accept-encoding': encoding });
  const plain = (await get(port, '/')).body.toString('utf8');
  const names = [...new Set([...plain.matchAll(/\/console\/assets\/[\w.-]+/g)].map((m) => m[0]))];
  const modules = [];
  let total = html.body.length;
  for (const name of names) {
    const r = await get(port, name, { 'accept-encoding': encoding });
    total += r.body.length;
    if (name.endsWith('.js')) modules.push(name);
  }
  // Module imports (app.js → api.js, …) are versioned too; count each file once.
  const seen = new Set(names);
  for (let i = 0; i < modules.length; i++) {
    const src = (await get(port, modules[i])).body.toString('utf8');
    for (const m of src.matchAll(/from '\.\/([\w.-]+\.js)'/g)) {
      const p = `/console/assets/${m[1]}`;
      if (seen.has(p)) continue;
      seen.add(p);
      modules.push(p);
      total += (await get(port, p, { 'accept-encoding': encoding })).body.length;
    }
  }
  return { total, files: seen.size + 1 };
}

/** First contentful paint (ms) of `loads` cold loads after one warm-up. */
async function firstPaint(port, loads) {
  const { launchChromium } = await import(
    pathToFileURL(path.join(root, 'packages/server/dist/testing/browser.js')).href
  );
  const browser = await launchChromium();
  const paints = [];
  try {
    for (let i = 0; i <= loads; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load' });
      await page.waitForFunction("performance.getEntriesByName('first-contentful-paint').length > 0");
      const fcp = await page.evaluate("performance.getEntriesByName('first-contentful-paint')[0].startTime");
      if (i > 0) paints.push(fcp);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  return paints;
}

/** CPU time (ms) the process `pid` has used so far (user + system, from /proc). */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // fields 14 and 15, at USER_HZ = 100
}

/** CPU ms per second the idle service spends, with `n` streams open, over `seconds`. */
async function idleCpu(port, pid, n, seconds) {
  const streams = n > 0 ? openStreams(port, n) : null;
  await new Promise((r) => setTimeout(r, 1500));
  const c0 = cpuMs(pid);
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const perSec = (cpuMs(pid) - c0) / ((Date.now() - t0) / 1000);
  streams?.close();
  return perSec;
}

/** Opens `n` SSE streams on /v1/events and reads them; returns { frames(), close() }. */
function openStreams(port, n) {
  let frames = 0;
  const reqs = [];
  for (let i = 0; i < n; i++) {
    const req = request({ host: '127.0.0.1', port, path: '/v1/events', headers: { accept: 'text/event-stream' } });
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (d) => (frames += (d.match(/^event: /gm) ?? []).length));
      res.on('error', () => undefined);
    });
    req.on('error', () => undefined);
    req.end();
    reqs.push(req);
  }
  return { frames: () => frames, close: () => reqs.forEach((r) => r.destroy()) };
}

/**
 * Measures the console's figures against a running service; prints and writes them.
 * `wrk(port, path, opts)` → { rps } is service.mjs's runner.
 */
export async function consoleBench({
  port,
  pid,
  wrk,
  rounds = 5,
  duration = 5,
  write = true,
  how = 'npm run bench:service',
}) {
  process.stderr.write('bench:service: console (first paint, assets, five live streams)\n');
  const br = await pageBytes(port, 'br');
  const gz = await pageBytes(port, 'gzip');
  const raw = await pageBytes(port, 'identity');
  const paints = await firstPaint(port, 5);
  const fcp = median(paints);

  const idle0s = [];
  const idle5s = [];
  for (let i = 0; i < 3; i++) {
    idle0s.push(await idleCpu(port, pid, 0, 5));
    idle5s.push(await idleCpu(port, pid, 5, 5));
  }
  const idle0 = median(idle0s);
  const idle5 = median(idle5s);
  const without = [];
  const withStreams = [];
  let frames = 0;
  for (let i = 0; i < rounds; i++) {
    without.push((await wrk(port, '/v1/ids/next', { duration, pid })).rps);
    const streams = openStreams(port, 5);
    await new Promise((r) => setTimeout(r, 1500));
    const f0 = streams.frames();
    withStreams.push((await wrk(port, '/v1/ids/next', { duration, pid })).rps);
    frames += streams.frames() - f0;
    streams.close();
  }
  const a = median(without);
  const b = median(withStreams);
  const cost = 1 - b / a;
  const yes = (ok) => (ok ? 'yes' : '**no**');
  const rows = [
    [
      `First contentful paint of the page on loopback (chromium, cold context, median of ${paints.length} loads: ${paints.map((p) => fmt(p)).join(', ')} ms)`,
      `${fmt(fcp)} ms`,
      '< 300 ms',
      yes(fcp < 300),
    ],
    [
      `The page and its assets on the wire (${br.files} files, brotli; gzip ${fmt(gz.total / 1024, 1)} kB; uncompressed ${fmt(raw.total / 1024, 1)} kB)`,
      `${fmt(br.total / 1024, 1)} kB`,
      '< 150 kB',
      yes(br.total < 150 * 1024),
    ],
    [
      `\`GET /v1/ids/next\` req/s with five live \`/v1/events\` streams vs none (median of ${rounds} interleaved wrk runs each: ${fmt(b)} vs ${fmt(a)}; ${fmt(frames / Math.max(1, rounds * duration * 5), 1)} frames/s per stream during the runs)`,
      `${fmt(cost * 100, 1)}% cost${cost < 0 ? ' (within noise: faster with the streams)' : ''}`,
      '< 2%',
      cost < -0.02 ? 'inconclusive (noise; see the next row)' : yes(cost < 0.02),
    ],
    [
      `The streams' own cost, measured without load: the idle service's CPU with five streams open vs none (/proc, median of 3 interleaved 5 s windows each: ${fmt(idle5, 1)} vs ${fmt(idle0, 1)} ms per second)`,
      `${fmt(idle5 - idle0, 1)} ms CPU per second (${fmt((idle5 - idle0) / 10, 2)}% of a core)`,
      '< 2% of the service',
      yes(idle5 - idle0 < 20),
    ],
  ];
  const md = [
    machineLine() +
      ` Load average at the end of the run: ${fmt((await import('node:os')).loadavg()[0], 1)} (other processes share the cores).`,
    `This table: \`${how}\`. \`npm run bench:service\` measures it in the same run as the Service section, against the same ` +
      '`flurry serve` (twitter layout, file registry). ' +
      "First paint is the page's own `first-contentful-paint` in Debian's chromium (headless, through playwright-core), each load in a fresh " +
      'browser context so nothing comes from the cache. The five streams are read by plain HTTP clients in the benchmark process, ' +
      "as EventSource reads them: the browsers' rendering runs on the operators' machines, not the service's. On this shared " +
      '2-core machine wrk, the streams and the server compete for the same cores with other work, and run-to-run noise is larger ' +
      "than the effect, so the difference of the medians is shown beside a direct measure: the service's own CPU time (from " +
      '/proc) while idle with five streams open and with none; against a service that spends a whole core issuing IDs, that ' +
      'difference is the share of throughput the streams can take.',
    '',
    table(['Measure', 'Flurry', 'Target', 'Met'], rows),
    '',
    'Regenerate with `npm run bench:service` (or `node benchmarks/console.mjs` for this section alone).',
  ].join('\n');
  console.log(md);
  if (write) writeSection('Console', md);
  return rows;
}

// Alone: start a service, use wrk as service.mjs does.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const args = process.argv.slice(2);
  const opt = (name, def) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : def);
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-bench-console-'));
  const bin = path.join(root, 'packages/server/dist/cli/main.js');
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--allow-root', '--registry', `file:${dir}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /"msg":"ready".*?"port":(\d+)|"port":(\d+).*?"msg":"ready"/.exec(buf);
      if (m) resolve(Number(m[1] ?? m[2]));
    });
    child.once('exit', (code) => reject(new Error(`flurry serve exited with ${code}`)));
  });
  const wrk = (p, q, { duration }) =>
    new Promise((resolve, reject) => {
      const w = spawn('/usr/bin/wrk', ['-t1', '-c64', `-d${duration}s`, `http://127.0.0.1:${p}${q}`]);
      let out = '';
      w.stdout.on('data', (d) => (out += d));
      w.once('exit', (code) =>
        code === 0 ? resolve({ rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]) }) : reject(new Error(out)),
      );
    });
  try {
    await consoleBench({
      port,
      pid: child.pid,
      wrk,
      rounds: opt('rounds', 3),
      duration: opt('duration', 4),
      write: !args.includes('--no-write'),
      how: `node benchmarks/console.mjs ${args.filter((a) => a !== '--no-write').join(' ')}`.trim(),
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}
