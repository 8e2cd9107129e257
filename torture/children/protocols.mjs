#!/usr/bin/env node
// A torture child: the service's non-HTTP clients. For each gRPC port, a loop of bounded
// `StreamIds` calls (@grpc/grpc-js, the repository's .proto loaded at run time); for each
// memcached port, one raw socket sending `get` lines and reconnecting whenever the
// connection closes. A SIGKILLed server shows up as UNAVAILABLE calls and closed
// sockets; both loops go on until `durationMs`. The IDs of each port go to
// `<out>.grpc.<i>` / `<out>.mc.<i>` for the scenario's duplicate check.
// Usage: node protocols.mjs '<json: { grpcPorts, memcachedPorts, protoDir, out, durationMs }>'
import net from 'node:net';
import path from 'node:path';
import { openSync, writeSync, closeSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const cfg = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
setTimeout(() => {
  say({ ev: 'error', where: 'lifetime', message: 'protocols lifetime bound exceeded' });
  process.exit(3);
}, cfg.durationMs + 30_000).unref();
const mono = () => performance.now();
const until = mono() + cfg.durationMs;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Bounded in count as well as time: at most this many IDs per port per protocol.
const MAX_IDS = cfg.maxIdsPerPort ?? 2_000_000;

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

const newStats = () => ({ ok: 0, invalid: 0, errors: {}, calls: 0, reconnects: 0, okAfterError: 0 });
const count = (st, k) => (st.errors[k] = (st.errors[k] ?? 0) + 1);
const valid = (id) => typeof id === 'bigint' && id > 0n && id < 1n << 64n;

const def = protoLoader.loadSync(path.join(cfg.protoDir, 'flurry/v1/id_service.proto'), {
  includeDirs: [cfg.protoDir],
  longs: String,
  defaults: true,
});
const IdService = grpc.loadPackageDefinition(def).flurry.v1.IdService;

/** StreamIds calls of at most 1,000 IDs (chunks of 100) on one port until the deadline. */
async function grpcLoop(port, i) {
  const st = newStats();
  const sink = new Sink(`${cfg.out}.grpc.${i}`);
  const client = new IdService(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 500,
  });
  let failed = false;
  while (mono() < until && st.ok < MAX_IDS) {
    st.calls++;
    const got = await new Promise((resolve) => {
      let n = 0;
      const call = client.StreamIds({ chunk: 100, limit: 1_000 }, { deadline: Date.now() + 2_000 });
      call.on('data', (m) => {
        for (const s of m.ids) {
          const id = BigInt(s);
          if (valid(id)) sink.push(id);
          else st.invalid++;
          n++;
        }
      });
      call.on('error', (e) => {
        count(st, grpc.status[e.code] ?? String(e.code));
        resolve(-n - 1);
      });
      call.on('end', () => resolve(n));
    });
    if (got < 0) {
      st.ok += -got - 1;
      failed = true;
      await sleep(50);
    } else {
      st.ok += got;
      if (failed) st.okAfterError++;
      failed = false;
      await sleep(5);
    }
  }
  sink.close();
  client.close();
  return st;
}

/** One socket sending `get a b c d e` (five IDs a round trip), reconnecting when closed. */
async function memcachedLoop(port, i) {
  const st = newStats();
  const sink = new Sink(`${cfg.out}.mc.${i}`);
  let failed = false;
  while (mono() < until && st.ok < MAX_IDS) {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.setNoDelay(true);
    let buf = '';
    let waiter = null;
    let closed = null;
    const wake = () => waiter?.();
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      wake();
    });
    sock.on('error', (e) => (closed ??= e.code ?? e.message));
    sock.on('close', () => {
      closed ??= 'closed';
      wake();
    });
    // One reply: VALUE lines until END, or an error line.
    const reply = () =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ lost: 'timeout' }), 2_000);
        const look = () => {
          const end = buf.indexOf('END\r\n');
          const err = /^(SERVER_ERROR|CLIENT_ERROR|ERROR)[^\r]*\r\n/.exec(buf);
          if (end >= 0) {
            const text = buf.slice(0, end);
            buf = buf.slice(end + 5);
            clearTimeout(timer);
            resolve({ ids: [...text.matchAll(/^VALUE \S+ \d+ \d+\r\n(\d+)\r\n/gm)].map((m) => BigInt(m[1])) });
          } else if (err) {
            buf = buf.slice(err[0].length);
            clearTimeout(timer);
            resolve({ error: err[1] });
          } else if (closed) {
            clearTimeout(timer);
            resolve({ lost: closed });
          } else waiter = look;
        };
        look();
      });
    await new Promise((resolve) => {
      sock.once('connect', resolve);
      sock.once('close', resolve);
    });
    if (closed) {
      count(st, `connection: ${closed}`);
      failed = true;
    }
    while (!closed && mono() < until && st.ok < MAX_IDS) {
      st.calls++;
      sock.write('get a b c d e\r\n');
      const r = await reply();
      if (r.ids) {
        for (const id of r.ids) if (valid(id)) sink.push(id);
        st.ok += r.ids.length;
        if (r.ids.length !== 5) count(st, `short reply (${r.ids.length} of 5)`);
        if (failed) st.okAfterError++;
        failed = false;
      } else if (r.error) {
        // SERVER_ERROR while the restarted server has no lease yet: a refusal, no ID.
        count(st, r.error);
        failed = true;
        await sleep(50);
      } else {
        count(st, `connection: ${r.lost}`);
        failed = true;
        break;
      }
    }
    sock.destroy();
    if (mono() < until && closed) {
      st.reconnects++;
      await sleep(100);
    }
  }
  sink.close();
  return st;
}

const [grpcStats, mcStats] = await Promise.all([
  Promise.all((cfg.grpcPorts ?? []).map(grpcLoop)),
  Promise.all((cfg.memcachedPorts ?? []).map(memcachedLoop)),
]);
say({ ev: 'done', grpc: grpcStats, memcached: mcStats });
process.exit(0);
