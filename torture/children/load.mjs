#!/usr/bin/env node
// A torture child: load on `flurry serve` instances.
// - mode `client`: through @flurry/client (`createClient`): `next()` and `batch()` from
//   `concurrency` loops; every ID handed out goes to `<out>`; every rejected call is
//   counted by code (with two of three servers up, none should be).
// - mode `raw`: one sequential loop per server on `GET /v1/ids?count=N`, no failover; the
//   IDs of server i go to `<out>.<i>` in the order the server issued them; statuses and
//   error codes are counted.
// Usage: node load.mjs '<json: { mode, servers, out, durationMs, concurrency, count }>'
import http from 'node:http';
import { openSync, writeSync, closeSync } from 'node:fs';

const cfg = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
setTimeout(() => {
  say({ ev: 'error', where: 'lifetime', message: 'load lifetime bound exceeded' });
  process.exit(3);
}, cfg.durationMs + 30_000).unref();
const mono = () => performance.now();
const until = mono() + cfg.durationMs;
const errors = {};
const count = (k) => (errors[k] = (errors[k] ?? 0) + 1);
let maxStallMs = 0;
let ok = 0;
let invalid = 0;
const invalidExamples = [];

class Sink {
  constructor(file) {
    this.fd = openSync(file, 'a');
    this.buf = new BigUint64Array(8192);
    this.n = 0;
  }
  push(id) {
    this.buf[this.n++] = id;
    if (this.n === this.buf.length) this.flush();
  }
  flush() {
    if (this.n) writeSync(this.fd, new Uint8Array(this.buf.buffer), 0, this.n * 8);
    this.n = 0;
  }
  close() {
    this.flush();
    closeSync(this.fd);
  }
}

function check(id) {
  if (typeof id !== 'bigint' || id <= 0n || id >= 1n << 64n) {
    invalid++;
    if (invalidExamples.length < 5) invalidExamples.push(String(id));
    return false;
  }
  return true;
}

if (cfg.mode === 'client') {
  const { createClient } = await import(new URL('../../packages/client/dist/index.js', import.meta.url).href);
  const client = createClient({
    servers: cfg.servers,
    timeoutMs: 1_000,
    backoff: { initialMs: 50, maxMs: 1_000 },
    ...(cfg.clientOptions ?? {}),
  });
  const sink = new Sink(cfg.out);
  let round = 0;
  const loop = async () => {
    while (mono() < until) {
      const t0 = mono();
      try {
        if (++round % 10 === 0) {
          const ids = await client.batch(50);
          for (const id of ids) if (check(id)) sink.push(id);
          ok += ids.length;
        } else {
          const id = await client.next();
          if (check(id)) sink.push(id);
          ok++;
        }
      } catch (e) {
        count(e?.code ?? `UNCODED:${e?.message ?? e}`.slice(0, 120));
        await new Promise((r) => setTimeout(r, 5));
      }
      const ms = mono() - t0;
      if (ms > maxStallMs) maxStallMs = ms;
    }
  };
  await Promise.all(Array.from({ length: cfg.concurrency ?? 8 }, loop));
  sink.close();
  let stats;
  try {
    stats = client.stats();
  } catch {}
  await Promise.race([client.close(), new Promise((r) => setTimeout(r, 3_000))]);
  say({ ev: 'done', ok, errors, maxStallMs, invalid, invalidExamples, stats });
  process.exit(0);
}

// raw mode
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const statuses = {};
function get(base, path) {
  return new Promise((resolve) => {
    const u = new URL(path, base);
    const req = http.get(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, agent, timeout: 2_000 },
      (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
        res.on('error', (e) => resolve({ status: 0, error: e.code ?? e.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, error: e.code ?? e.message }));
  });
}
const serverErrors = [];
await Promise.all(
  cfg.servers.map(async (base, i) => {
    const sink = new Sink(`${cfg.out}.${i}`);
    while (mono() < until) {
      const t0 = mono();
      const r = await get(base, `/v1/ids?count=${cfg.count ?? 100}`);
      const ms = mono() - t0;
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 200) {
        if (ms > maxStallMs) maxStallMs = ms;
        let ids = [];
        try {
          ids = JSON.parse(r.body).ids;
        } catch {
          count('bad JSON on 200');
        }
        for (const s of ids) {
          let id;
          try {
            id = BigInt(s);
          } catch {
            id = s;
          }
          if (check(id)) sink.push(id);
          ok++;
        }
      } else {
        let code = r.error ? `connection: ${r.error}` : `HTTP ${r.status}`;
        try {
          code = JSON.parse(r.body).error.code ?? code;
        } catch {}
        count(code);
        if (r.status >= 500 && r.status !== 503)
          serverErrors.push({ base, status: r.status, body: (r.body ?? '').slice(0, 300) });
        if (r.status === 503 && !r.headers?.['retry-after']) count('503 without Retry-After');
        await new Promise((res) => setTimeout(res, 20));
      }
    }
    sink.close();
  }),
);
agent.destroy();
say({
  ev: 'done',
  ok,
  errors,
  statuses,
  serverErrors: serverErrors.slice(0, 10),
  serverErrorCount: serverErrors.length,
  maxStallMs,
  invalid,
  invalidExamples,
});
process.exit(0);
