#!/usr/bin/env node
// `node benchmarks/workers.mjs --workers 1,2,4,8,16 --duration S`: `flurry serve --workers N`
// against a bare node:http server and a bare node:cluster server of the same worker count,
// measured in the same run with the same load generator. Needs only Node and the repository
// (built: npm run build); starts everything itself (a file: registry in a temp directory).
//
// Load: K client processes (--clients, default: a quarter of the cores, at least 1), C
// keep-alive connections in all (--connections, default 64), each with P pipelined GET
// /v1/ids/next in flight (--pipeline, default 8; HTTP/1.1 pipelining keeps the load
// generator's cost per request far below the servers', so that the servers, not the
// clients, are what saturates) (the bare servers answer a constant body of the same shape). Every ID
// answered is kept: duplicates are counted across all answers, and per connection (one
// connection is served by one worker) the IDs of each node must increase.
//
// Prints one JSON line per configuration: workers, cores, reqPerSec, duplicates, decreases
// (per-worker order), perWorker (requests answered by each node), bareHttpReqPerSec,
// bareClusterReqPerSec, vsBareCluster, vsWorkers1, errors. Figures for a 16-core machine:
// --workers 16 >= 8x --workers 1 and >= 0.9x the bare node:cluster server of 16 workers.
import { spawn } from 'node:child_process';
import cluster from 'node:cluster';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import { connect, createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(SELF), '..');
const BIN = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : args[i + 1];
};

// ---- roles: a bare server (plain or cluster), or a load client -------------------------
if (args[0] === '--bare') {
  const n = Number(args[1]);
  const port = Number(args[2]);
  const body = JSON.stringify({ id: '2126093742191415296' });
  const serve = () =>
    http
      .createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      })
      .listen(port, '127.0.0.1', () => process.send?.('listening') ?? console.log('listening'));
  if (n === 0 || cluster.isWorker) serve();
  else {
    let up = 0;
    for (let i = 0; i < n; i++)
      cluster.fork().on('message', (m) => {
        if (m === 'listening' && ++up === n) console.log('listening');
      });
    process.on('SIGTERM', () => {
      for (const w of Object.values(cluster.workers)) w?.process.kill('SIGTERM');
      process.exit(0);
    });
  }
} else if (args[0] === '--client') {
  const { port, connections, pipeline, durationMs, out } = JSON.parse(args[1]);
  const ids = [];
  let decreases = 0;
  let errors = 0;
  let requests = 0;
  const until = performance.now() + durationMs;
  const REQ = 'GET /v1/ids/next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
  // One keep-alive connection with `pipeline` requests in flight (HTTP/1.1 pipelining: a
  // connection is served by one worker, in order), parsed by hand: the load generator must
  // cost far less per request than the servers it measures.
  const loop = () =>
    new Promise((resolve) => {
      const last = new Map();
      let buf = '';
      let inFlight = 0;
      const sock = connect(port, '127.0.0.1', () => {
        inFlight = pipeline;
        sock.write(REQ.repeat(pipeline));
      });
      sock.setEncoding('latin1');
      sock.on('data', (d) => {
        buf += d;
        let more = 0;
        for (;;) {
          const h = buf.indexOf('\r\n\r\n');
          if (h < 0) break;
          const m = /content-length: *(\d+)/i.exec(buf.slice(0, h));
          const end = h + 4 + (m ? Number(m[1]) : 0);
          if (buf.length < end) break;
          const ok = buf.startsWith('HTTP/1.1 200');
          const body = buf.slice(h + 4, end);
          buf = buf.slice(end);
          requests++;
          inFlight--;
          if (performance.now() < until) more++;
          if (!ok) {
            errors++;
            continue;
          }
          const at = body.indexOf('"id":"') + 6;
          const id = BigInt(body.slice(at, body.indexOf('"', at)));
          const key = (id >> 12n) & 1023n; // twitter: the node field, above the 12-bit sequence
          const prev = last.get(key);
          if (prev !== undefined && id <= prev) decreases++;
          last.set(key, id);
          ids.push(id);
        }
        if (more) {
          inFlight += more;
          sock.write(REQ.repeat(more));
        } else if (inFlight === 0) sock.end();
      });
      sock.on('error', () => {
        errors += inFlight;
        inFlight = 0;
      });
      sock.on('close', resolve);
    });
  await Promise.all(Array.from({ length: connections }, () => loop()));
  writeFileSync(out, Buffer.from(BigUint64Array.from(ids).buffer));
  process.send({ requests, errors, decreases });
  process.exit(0);
} else {
  await main();
}

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

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function get(port, p) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve({ status: res.statusCode, body: b }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
  });
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await done;
  clearTimeout(t);
}

/** Starts a bare server (0: plain node:http, N: node:cluster of N workers); resolves once listening. */
async function bare(n) {
  const port = await freePort();
  const child = spawn(process.execPath, [SELF, '--bare', String(n), String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('listening') && resolve());
    child.once('exit', (c) => reject(new Error(`bare server exited ${c}`)));
  });
  return { port, child };
}

/** Starts `flurry serve --workers n`; resolves once every worker is ready. */
async function flurry(n, dir) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--port',
      String(port),
      '--workers',
      String(n),
      '--registry',
      `file:${dir}`,
      '--log-level',
      'warn',
      '--allow-root',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  for (let i = 0; i < 600; i++) {
    const r = await get(port, '/readyz');
    if (r.status === 200 && (n === 1 || JSON.parse(r.body).workers?.ready === n)) return { port, child };
    if (child.exitCode !== null) throw new Error(`flurry serve --workers ${n} exited ${child.exitCode}`);
    await sleep(100);
  }
  throw new Error(`flurry serve --workers ${n} did not become ready`);
}

/** Drives `port` with the clients; returns req/s and, for Flurry, the ID checks. */
async function load(port, o, dir, check) {
  const per = Math.max(1, Math.floor(o.connections / o.clients));
  const clients = Array.from({ length: o.clients }, (_, i) => {
    const out = path.join(dir, `ids-${port}-${i}.bin`);
    const child = spawn(
      process.execPath,
      [
        SELF,
        '--client',
        JSON.stringify({ port, connections: per, pipeline: o.pipeline, durationMs: o.durationMs, out }),
      ],
      {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    return new Promise((resolve) => {
      let msg;
      child.on('message', (m) => (msg = m));
      child.on('exit', () => resolve({ ...msg, out }));
    });
  });
  const t0 = performance.now();
  const results = await Promise.all(clients);
  const seconds = (performance.now() - t0) / 1000;
  const requests = results.reduce((a, r) => a + (r.requests ?? 0), 0);
  const errors = results.reduce((a, r) => a + (r.errors ?? 0), 0);
  const okRequests = requests - errors;
  const figures = { reqPerSec: Math.round(okRequests / Math.min(seconds, o.durationMs / 1000)), errors };
  if (check) {
    const parts = results.map((r) => new BigUint64Array(new Uint8Array(readFileSync(r.out)).buffer));
    const all = new BigUint64Array(parts.reduce((a, p) => a + p.length, 0));
    let at = 0;
    for (const p of parts) all.set(p, (at += p.length) - p.length);
    all.sort();
    let duplicates = 0;
    const perWorker = new Map();
    for (let i = 0; i < all.length; i++) {
      if (i > 0 && all[i] === all[i - 1]) duplicates++;
      const node = Number((all[i] >> 12n) & 1023n);
      perWorker.set(node, (perWorker.get(node) ?? 0) + 1);
    }
    Object.assign(figures, {
      ids: all.length,
      duplicates,
      decreases: results.reduce((a, r) => a + (r.decreases ?? 0), 0),
      perWorker: Object.fromEntries([...perWorker].sort((a, b) => a[0] - b[0])),
    });
  }
  for (const r of results) rmSync(r.out, { force: true });
  return figures;
}

async function main() {
  if (!existsSync(BIN)) {
    console.error('workers bench: build first (npm run build): packages/server/dist/cli/main.js is missing');
    process.exit(1);
  }
  const cores = availableParallelism();
  const list = String(opt('workers', '1,2,4,8,16')).split(',').map(Number);
  const o = {
    durationMs: Number(opt('duration', 5)) * 1000,
    connections: Number(opt('connections', 64)),
    clients: Number(opt('clients', Math.max(1, Math.floor(cores / 4)))),
    pipeline: Number(opt('pipeline', 8)),
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-workers-bench-'));
  const children = new Set();
  process.on('exit', () => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const measure = async (start, check) => {
    const s = await start();
    children.add(s.child);
    try {
      return await load(s.port, o, dir, check);
    } finally {
      await stop(s.child);
      children.delete(s.child);
    }
  };
  const bareHttp = await measure(() => bare(0), false);
  let one;
  for (const n of list) {
    const bareCluster = await measure(() => bare(n), false);
    const reg = mkdtempSync(path.join(dir, 'reg-'));
    const f = await measure(() => flurry(n, reg), true);
    if (n === 1) one = f.reqPerSec;
    console.log(
      JSON.stringify({
        bench: 'workers',
        workers: n,
        cores,
        durationS: o.durationMs / 1000,
        connections: o.connections,
        clients: o.clients,
        pipeline: o.pipeline,
        reqPerSec: f.reqPerSec,
        ids: f.ids,
        duplicates: f.duplicates,
        decreases: f.decreases,
        perWorkerOrder: f.decreases === 0 ? 'increasing' : 'DECREASING',
        perWorker: f.perWorker,
        errors: f.errors,
        bareHttpReqPerSec: bareHttp.reqPerSec,
        bareClusterReqPerSec: bareCluster.reqPerSec,
        vsBareCluster: Number((f.reqPerSec / bareCluster.reqPerSec).toFixed(3)),
        vsWorkers1: one ? Number((f.reqPerSec / one).toFixed(3)) : null,
      }),
    );
  }
}
