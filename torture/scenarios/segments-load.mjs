// The load and the checks of the segments scenario (segments.mjs): one sequential HTTP worker per server and
// key, so each worker sees its server's numbers in the order the server issued them; every number is recorded
// under the server *instance* (a restarted server is a new instance) that issued it.
import http from 'node:http';
import { sleep } from '../lib/util.mjs';

/**
 * One GET on a keep-alive agent: `{ status, body, retryAfter }`; status 0 on a network error or the deadline.
 * @example const r = await get(agent, 8080, '/v1/sequences/order/next', 10_000);
 */
export function get(agent, port, path, timeoutMs, accept = 'application/json') {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent, timeout: timeoutMs, headers: { accept } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, retryAfter: Number(res.headers['retry-after'] ?? 0) }),
      );
      res.on('error', () => resolve({ status: 0, body: '', retryAfter: 0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '', retryAfter: 0 }));
  });
}

/** The numbers of one answer (JSON next, JSON batch, or Leaf's bare text), as bigints; throws on a bad body. */
function numbersOf(kind, body, key) {
  if (kind === 'leaf') {
    if (!/^[0-9]+$/.test(body)) throw new Error(`Leaf endpoint answered ${JSON.stringify(body.slice(0, 80))}`);
    return [BigInt(body)];
  }
  const d = JSON.parse(body);
  if (d.key !== key) throw new Error(`answer for key ${d.key}, asked ${key}: ${body.slice(0, 300)}`);
  return kind === 'batch' ? d.values.map((v) => BigInt(v)) : [BigInt(d.value)];
}

/**
 * Draws numbers from every server for every key until stopped.
 * @example const load = new SegmentLoad(servers, ['a', 'b'], { timeoutMs: 10_000 }); load.start(); await load.stop();
 */
export class SegmentLoad {
  /** `servers[i]` is `{ port, instance }`: the instance name changes when the server is restarted. */
  constructor(servers, keys, { timeoutMs, batch = 7 }) {
    this.servers = servers;
    this.keys = keys;
    this.timeoutMs = timeoutMs;
    this.batch = batch;
    this.running = false;
    this.workers = [];
    /** instance → key → bigint[] in issue order. */
    this.streams = new Map();
    /** `${server}/${key}` → times (performance.now()) of answers with numbers. */
    this.okTimes = new Map();
    this.statuses = {};
    this.refusals = {};
    this.errors = [];
    this.requests = 0;
    this.agents = servers.map(() => new http.Agent({ keepAlive: true, maxSockets: keys.length }));
  }

  start() {
    this.running = true;
    for (let i = 0; i < this.servers.length; i++) for (const key of this.keys) this.workers.push(this.worker(i, key));
  }

  async stop() {
    this.running = false;
    await Promise.all(this.workers);
    for (const a of this.agents) a.destroy();
  }

  async worker(i, key) {
    let n = 0;
    while (this.running) {
      const s = this.servers[i];
      const instance = s.instance;
      const kind = n % 10 === 9 ? 'leaf' : n % 4 === 3 ? 'batch' : 'next';
      n++;
      const path =
        kind === 'leaf'
          ? `/api/segment/get/${key}`
          : kind === 'batch'
            ? `/v1/sequences/${key}?count=${this.batch}`
            : `/v1/sequences/${key}/next`;
      this.requests++;
      const r = await get(this.agents[i], s.port, path, this.timeoutMs, kind === 'leaf' ? 'text/plain' : undefined);
      this.statuses[r.status] = (this.statuses[r.status] ?? 0) + 1;
      if (r.status === 200) {
        let values;
        try {
          values = numbersOf(kind, r.body, key);
        } catch (e) {
          this.errors.push(`${instance} ${path}: ${e.message}`);
          continue;
        }
        if (!this.streams.has(instance)) this.streams.set(instance, new Map());
        const m = this.streams.get(instance);
        if (!m.has(key)) m.set(key, []);
        const list = m.get(key);
        for (const v of values) list.push(v);
        const tk = `${i}/${key}`;
        if (!this.okTimes.has(tk)) this.okTimes.set(tk, []);
        this.okTimes.get(tk).push(performance.now());
        continue;
      }
      if (r.status === 0) {
        await sleep(25); // server down or restarting
        continue;
      }
      let code = `HTTP_${r.status}`;
      try {
        code = JSON.parse(r.body).error.code;
      } catch {
        /* not a Flurry error body */
      }
      this.refusals[code] = (this.refusals[code] ?? 0) + 1;
      if (r.status >= 500 && r.status !== 503)
        this.errors.push(`${instance} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
      if (r.status === 503 && !(r.retryAfter >= 1)) this.errors.push(`${instance} ${path}: 503 without Retry-After`);
      await sleep(Math.min(Math.max(r.retryAfter, 0) * 1000, 100));
    }
  }

  /** The first answer with numbers from server `i` (every key, or `key`) at or after `t`; Infinity when none. */
  firstOkAfter(t, i, key) {
    const keys = key === undefined ? this.keys : [key];
    let worst = 0;
    for (const k of keys) {
      const times = this.okTimes.get(`${i}/${k}`) ?? [];
      const first = times.find((x) => x >= t);
      if (first === undefined) return Infinity;
      worst = Math.max(worst, first);
    }
    return worst;
  }

  /** Answers with numbers from server `i` in `[from, to)` (every key). */
  okBetween(i, from, to) {
    let n = 0;
    for (const k of this.keys) for (const x of this.okTimes.get(`${i}/${k}`) ?? []) if (x >= from && x < to) n++;
    return n;
  }
}

/**
 * The safety checks: per key, no number twice across every instance; per instance and key, strictly increasing.
 * Returns per-key figures (numbers, distinct, gaps in the range seen) and the violations found.
 * @example const { perKey, duplicates, decreasing } = checkStreams(load.streams, keys, extra);
 */
export function checkStreams(streams, keys, extra = new Map()) {
  const perKey = {};
  let duplicates = 0;
  let decreasing = 0;
  const examples = [];
  for (const key of keys) {
    const owner = new Map();
    let count = 0;
    let min = null;
    let max = null;
    const all = [...streams.entries(), ...extra.entries()];
    for (const [instance, m] of all) {
      const list = m.get(key) ?? [];
      for (let j = 0; j < list.length; j++) {
        const v = list[j];
        count++;
        if (j > 0 && v <= list[j - 1]) {
          decreasing++;
          if (examples.length < 5) examples.push(`${key}: ${instance} issued ${v} after ${list[j - 1]}`);
        }
        const prev = owner.get(v);
        if (prev !== undefined) {
          duplicates++;
          if (examples.length < 5) examples.push(`${key}: ${v} issued by ${prev} and by ${instance}`);
        } else owner.set(v, instance);
        if (min === null || v < min) min = v;
        if (max === null || v > max) max = v;
      }
    }
    const distinct = owner.size;
    const span = min === null ? 0n : max - min + 1n;
    perKey[key] = { numbers: count, distinct, min: String(min), max: String(max), gaps: Number(span) - distinct };
  }
  return { perKey, duplicates, decreasing, examples };
}
