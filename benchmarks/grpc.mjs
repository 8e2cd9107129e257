#!/usr/bin/env node
// `npm run bench:grpc`: the gRPC port of the real `flurry serve --grpc-port` on loopback,
// against, in the same run, a bare server of the same library (Connect's Node adapter on
// node:http2) answering a constant NextIdResponse: the ceiling of this machine for that
// library. Prints a markdown table and rewrites the "gRPC" section of docs/benchmarks.md.
//
// Figures (issue 27):
//   1. NextId unary calls/s over gRPC (HTTP/2, cleartext) vs the bare server (target >= 0.85x):
//      a load client in its own process keeps C calls in flight over S connections with
//      pre-encoded gRPC frames (no client library cost), runs interleaved (bare, flurry, …),
//      the median of each side.
//   2. StreamIds to one client: IDs/s vs the layout's cap (4,096,000/s for twitter; target
//      >= 95%), over `--stream-seconds` of one stream (the default borrow policy lends at most
//      1 s ahead, so a long run measures the steady state).
//   3. Resident memory of flurry serve, every protocol on, during the runs (VmRSS).
//
// Options: --duration S (per unary run, default 5), --rounds N (default 3), --connections S
// (default 4), --inflight C (default 64), --stream-seconds S (default 10), --no-write.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLIENT_SOURCE as MEMCACHED_CLIENT } from './memcached.mjs';
import { fmt, machineLine, root, table, writeSection } from './report.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : Number(args[i + 1]);
};
const DURATION = opt('duration', 5);
const ROUNDS = opt('rounds', 3);
const SESSIONS = opt('connections', 4);
const INFLIGHT = opt('inflight', 64);
const STREAM_SECONDS = opt('stream-seconds', 10);
const WRITE = !args.includes('--no-write');
const CAP = 4_096_000;
const BIN = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const children = new Set();

// The bare server: the same library (connect-node on node:http2), one constant answer.
const BARE_SOURCE = `
import http2 from 'node:http2';
import { connectNodeAdapter } from ${JSON.stringify(pathToFileURL(path.join(root, 'packages/server/node_modules/@connectrpc/connect-node/dist/esm/index.js')).href)};
import { IdService } from ${JSON.stringify(pathToFileURL(path.join(root, 'packages/server/dist/grpc/gen-proto/flurry/v1/id_service_pb.js')).href)};
const reply = { id: 1859214170478923776n, idString: '1859214170478923776' };
const routes = (router) => router.service(IdService, { nextId: () => reply });
const s = http2.createServer({ settings: { maxConcurrentStreams: 1000 } }, connectNodeAdapter({ routes }));
s.on('connection', (socket) => socket.setNoDelay(true));
s.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: s.address().port })));
`;

// The floor under both: node:http2's stream API answering a constant gRPC NextIdResponse
// frame, no library (flurry serve answers gRPC NextId this way too, packages/server/src/grpc/unary.ts).
const RAW_SOURCE = `
import http2 from 'node:http2';
const id = 1859214170478923776n, text = id.toString();
const msg = Buffer.alloc(16 + text.length);
msg.writeUInt32BE(11 + text.length, 1); msg[5] = 9; msg.writeBigUInt64LE(id, 6); msg[14] = 0x12; msg[15] = text.length; msg.write(text, 16, 'latin1');
const s = http2.createServer({ settings: { maxConcurrentStreams: 1000 } });
s.on('stream', (stream) => {
  stream.on('error', () => {});
  stream.on('data', () => {});
  stream.on('end', () => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(msg);
  });
});
s.on('connection', (socket) => socket.setNoDelay(true));
s.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: s.address().port })));
`;

// The load client: INFLIGHT NextId calls in flight over SESSIONS connections for DURATION s.
const LOAD_SOURCE = `
const http2 = require('node:http2');
const [port, sessions, inflight, seconds] = process.argv.slice(1).map(Number);
const body = Buffer.from([0, 0, 0, 0, 0]);
const headers = { ':method': 'POST', ':path': '/flurry.v1.IdService/NextId', 'content-type': 'application/grpc', te: 'trailers' };
let ok = 0, failed = 0, stop = false;
const net = require('node:net');
const conns = Array.from({ length: sessions }, () => http2.connect('http://127.0.0.1:' + port, { createConnection: () => net.connect({ port, host: '127.0.0.1', noDelay: true }) }));
function one(c) {
  if (stop) return;
  const r = c.request(headers);
  r.on('trailers', (t) => { if (t['grpc-status'] === '0') ok++; else failed++; });
  r.on('data', () => {});
  r.on('error', () => { failed++; });
  r.on('close', () => one(c));
  r.end(body);
}
let warm = true;
for (let i = 0; i < inflight; i++) one(conns[i % sessions]);
setTimeout(() => { warm = false; ok = 0; failed = 0; const t0 = process.hrtime.bigint(); console.log(JSON.stringify({ phase: 'start' }));
  setTimeout(() => { stop = true; const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(JSON.stringify({ rps: ok / s, failed })); conns.forEach((c) => c.destroy()); process.exit(0); }, seconds * 1000);
}, 1000);
`;

// HTTP load for the every-protocol phase: C keep-alive GET /v1/ids/next in flight for S s.
const HTTP_SOURCE = `
const http = require('node:http');
const [port, inflight, seconds] = process.argv.slice(1).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: inflight });
let ok = 0, stop = false;
function one() {
  if (stop) return;
  http.get({ host: '127.0.0.1', port, path: '/v1/ids/next', agent }, (res) => {
    res.resume();
    res.on('end', () => { if (res.statusCode === 200) ok++; one(); });
  }).on('error', () => setTimeout(one, 10));
}
for (let i = 0; i < inflight; i++) one();
setTimeout(() => { stop = true; process.stdout.write(JSON.stringify({ rps: ok / seconds })); process.exit(0); }, seconds * 1000);
`;

function stop(child) {
  children.delete(child);
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((r) => {
    child.once('exit', r);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

function firstJson(child, pick, what) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not start in 30 s`)), 30_000);
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      for (const line of buf.split('\n')) {
        try {
          const v = pick(JSON.parse(line));
          if (v !== undefined) {
            clearTimeout(t);
            resolve(v);
          }
        } catch {
          /* partial line */
        }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

async function startBare(source = BARE_SOURCE) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  const port = await firstJson(child, (l) => l.port, 'the bare server');
  return { port, pid: child.pid, stop: () => stop(child) };
}

async function startFlurry() {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-bench-grpc-'));
  const child = spawn(
    process.execPath,
    // Every protocol on (HTTP, gRPC with Connect and gRPC-Web, memcached, Thrift): the memory figure is for all of them.
    [
      BIN,
      'serve',
      '--port',
      '0',
      '--grpc-port',
      '0',
      '--memcached-port',
      '0',
      '--thrift-port',
      '0',
      '--allow-root',
      '--registry',
      `file:${dir}`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.add(child);
  const ready = await firstJson(child, (l) => (l.msg === 'ready' ? l : undefined), 'flurry serve');
  return {
    port: ready.grpcPort,
    ports: ready,
    pid: child.pid,
    stop: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * One unary run against the server `pid` listens on: calls/s on the wall clock, and calls per
 * CPU-second of the server (its user + system time over the same window), the figure that
 * stays comparable on a machine shared with other work.
 */
function unary(port, pid) {
  const child = spawn(
    process.execPath,
    ['-e', LOAD_SOURCE, String(port), String(SESSIONS), String(INFLIGHT), String(DURATION)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.add(child);
  return new Promise((resolve, reject) => {
    let cpu0 = 0;
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const l = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (l.phase === 'start') cpu0 = cpuSeconds(pid);
        else {
          const cpu = cpuSeconds(pid) - cpu0;
          children.delete(child);
          resolve({ ...l, perCpuSecond: (l.rps * DURATION) / cpu, cpu });
        }
      }
    });
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`the load client exited with ${code}`))));
  });
}

/** One StreamIds call (chunk 4096, no limit) read for `seconds`: IDs/s counted from the gRPC frames. */
function stream(port, seconds) {
  return new Promise((resolve, reject) => {
    const c = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 4 * 1024 * 1024 } });
    c.on('error', reject);
    c.on('connect', () => {
      c.setLocalWindowSize(16 * 1024 * 1024);
    });
    // StreamIdsRequest{chunk: 4096}: field 1 varint.
    const msg = Buffer.from([0x08, 0x80, 0x20]);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, msg.length]), msg]);
    const r = c.request({
      ':method': 'POST',
      ':path': '/flurry.v1.IdService/StreamIds',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let bytes = 0;
    let t0 = 0n;
    r.on('data', (d) => {
      if (t0 === 0n) t0 = process.hrtime.bigint();
      bytes += d.length;
    });
    r.on('error', () => undefined);
    r.end(frame);
    setTimeout(() => {
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      r.close();
      c.destroy();
      // Each message: 5 bytes of gRPC framing, 1 tag byte, 2 length bytes, 4096 IDs of 8 bytes.
      resolve((bytes * (4096 / (4096 * 8 + 8))) / s);
    }, seconds * 1000);
  });
}

/** A load client in its own process; resolves to its last JSON line. */
function client(source, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', source, ...args.map(String)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) => {
      children.delete(child);
      if (code !== 0) reject(new Error(`a load client exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)));
    });
  });
}

/**
 * Every protocol loaded at once for DURATION s: gRPC NextId (32 calls in flight), one
 * StreamIds read as fast as it comes, memcached `get` on 4 connections and HTTP
 * `GET /v1/ids/next` (16 in flight); the peak VmRSS of flurry serve over that time.
 */
async function everyProtocol() {
  const f = await startFlurry();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(f.pid))), 200);
  const [grpc, ids, mc, web] = await Promise.all([
    client(LOAD_SOURCE.replace("console.log(JSON.stringify({ phase: 'start' }));", ''), [f.port, 2, 32, DURATION]),
    stream(f.port, DURATION + 1),
    client(MEMCACHED_CLIENT, [f.ports.memcachedPort, 4, DURATION]),
    client(HTTP_SOURCE, [f.ports.port, 16, DURATION + 1]),
  ]);
  clearInterval(sampler);
  await f.stop();
  return { peak, grpc: grpc.rps, ids, memcached: mc.rps, http: web.rps };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const bare = [];
  const flurry = [];
  const raw = [];
  const bareWall = [];
  const flurryWall = [];
  const rawWall = [];
  let rss = 0;
  let streamRss = 0;
  let bareRss = 0;
  let rawRss = 0;
  let failed = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const b = await startBare();
    const bareSampler = setInterval(() => (bareRss = Math.max(bareRss, rssMb(b.pid))), 200);
    const rb = await unary(b.port, b.pid);
    clearInterval(bareSampler);
    bare.push(rb.perCpuSecond);
    bareWall.push(rb.rps);
    await b.stop();
    const w = await startBare(RAW_SOURCE);
    const rawSampler = setInterval(() => (rawRss = Math.max(rawRss, rssMb(w.pid))), 200);
    const rw = await unary(w.port, w.pid);
    clearInterval(rawSampler);
    raw.push(rw.perCpuSecond);
    rawWall.push(rw.rps);
    await w.stop();
    const f = await startFlurry();
    const sampler = setInterval(() => (rss = Math.max(rss, rssMb(f.pid))), 200);
    const r = await unary(f.port, f.pid);
    clearInterval(sampler);
    flurry.push(r.perCpuSecond);
    flurryWall.push(r.rps);
    failed += r.failed;
    await f.stop();
    console.error(
      `round ${i + 1}: bare ${fmt(bareWall[i])}/s (${fmt(bare[i])} per CPU-s), node:http2 ${fmt(rawWall[i])}/s (${fmt(raw[i])} per CPU-s), flurry ${fmt(flurryWall[i])}/s (${fmt(flurry[i])} per CPU-s)`,
    );
  }
  const f = await startFlurry();
  const sampler = setInterval(() => (streamRss = Math.max(streamRss, rssMb(f.pid))), 200);
  const idsPerSecond = await stream(f.port, STREAM_SECONDS);
  clearInterval(sampler);
  await f.stop();
  const all = await everyProtocol();
  const ratio = median(flurry) / median(bare);
  const rawRatio = median(flurry) / median(raw);
  const share = idsPerSecond / CAP;
  const body = [
    machineLine(),
    '',
    `NextId over gRPC (HTTP/2 cleartext): ${INFLIGHT} calls in flight over ${SESSIONS} connections from a load client of pre-encoded frames, ${DURATION} s a run, ${ROUNDS} interleaved rounds, medians; the bare server is Connect's Node adapter on node:http2 answering a constant NextIdResponse, and below both is node:http2's stream API answering a constant frame with no library (flurry serve answers gRPC NextId on that API and leaves every other call to Connect: docs/grpc.md#memory). StreamIds: one call (chunk 4096) read for ${STREAM_SECONDS} s by one client. Every protocol at once: ${DURATION} s of gRPC NextId (32 in flight), one StreamIds, memcached \`get\` on 4 connections and HTTP \`GET /v1/ids/next\` (16 in flight), each client in its own process (Thrift is on but not loaded).`,
    '',
    table(
      ['figure', 'value', 'target', 'met'],
      [
        ['bare Connect server, NextId calls per CPU-second', fmt(median(bare)), '', ''],
        ['flurry serve --grpc-port, NextId calls per CPU-second', fmt(median(flurry)), '', ''],
        ['node:http2 stream API, no library, NextId calls per CPU-second', fmt(median(raw)), '', ''],
        ['flurry / bare (per CPU-second)', fmt(ratio, 2) + 'x', '>= 0.85x', ratio >= 0.85 ? 'yes' : 'no'],
        ['flurry / node:http2 with no library (per CPU-second)', fmt(rawRatio, 2) + 'x', '', ''],
        [
          'bare / node:http2 / flurry NextId calls/s on the wall clock',
          `${fmt(median(bareWall))} / ${fmt(median(rawWall))} / ${fmt(median(flurryWall))}`,
          '',
          '',
        ],
        ['failed calls', String(failed), '0', failed === 0 ? 'yes' : 'no'],
        [
          'StreamIds to one client, IDs/s',
          fmt(idsPerSecond),
          `>= ${fmt(CAP * 0.95)} (95% of ${fmt(CAP)})`,
          share >= 0.95 ? 'yes' : 'no',
        ],
        [
          'largest VmRSS of flurry serve (every protocol on) under unary load, MB (bare Connect server; node:http2)',
          `${fmt(rss, 1)} (${fmt(bareRss, 1)}; ${fmt(rawRss, 1)})`,
          '<= 120',
          rss <= 120 ? 'yes' : 'no',
        ],
        [
          'largest VmRSS of flurry serve while streaming, MB',
          fmt(streamRss, 1),
          '<= 120',
          streamRss <= 120 ? 'yes' : 'no',
        ],
        [
          `largest VmRSS of flurry serve with every protocol loaded at once, MB (gRPC ${fmt(all.grpc)} calls/s, StreamIds ${fmt(all.ids)} IDs/s, memcached ${fmt(all.memcached)} gets/s, HTTP ${fmt(all.http)} requests/s)`,
          fmt(all.peak, 1),
          '<= 120',
          all.peak <= 120 ? 'yes' : 'no',
        ],
      ],
    ),
    '',
    `Rounds (calls per server CPU-second): bare ${bare.map((x) => fmt(x)).join(', ')}; node:http2 ${raw.map((x) => fmt(x)).join(', ')}; flurry ${flurry.map((x) => fmt(x)).join(', ')}. Calls per CPU-second divide the calls answered by the server process's user + system time over the same window (from /proc), so other work on a shared machine does not move them the way it moves calls/s; on an idle machine with a core to spare the two agree.`,
  ].join('\n');
  console.log(body);
  if (WRITE) writeSection('gRPC', body);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of children) await stop(c);
  });
