/**
 * The console's data routes in-process (a real `file:` registry through the harness of
 * in-process.ts): `/v1/status` and `/v1/cluster` shapes, the token (header everywhere,
 * `?token=` only on `/v1/events`), 405 for other methods, the event stream's frames, its cap
 * of 64 streams, and its end when the service closes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './in-process.js';
import { inject, type InjectResponse } from './inject.js';
import type { ClusterBody, StatusBody } from '../console/types.js';

const TOKEN = 'console-token-0123456789';

/** Frames of an SSE body: `{ event, data }` (comments and `retry:` lines dropped). */
function frames(body: string): Array<{ event: string; data: unknown }> {
  return body
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
      return event && data ? { event, data: JSON.parse(data) as unknown } : undefined;
    })
    .filter((f): f is { event: string; data: unknown } => f !== undefined);
}

test('GIVEN a running service WHEN GET /v1/status THEN the contract fields are there with their types', async () => {
  const svc = await inProcess(['--layout', 'twitter', '--cluster', 'orders']);
  try {
    for (let i = 0; i < 20; i++) assert.equal((await svc.get('/v1/ids/next')).status, 200);
    svc.core.console.data['rates'].sample();
    const res = await svc.get('/v1/status');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'], /application\/json/);
    const b = JSON.parse(res.body) as StatusBody;
    assert.equal(typeof b.now, 'number');
    assert.equal(typeof b.version, 'string');
    assert.equal(b.pid, process.pid);
    assert.ok(b.uptimeMs >= 0 && b.startedAt <= b.now);
    assert.equal(b.layout.name, 'twitter');
    assert.equal(b.layout.totalBits, 63);
    assert.deepEqual(
      b.layout.fields.map((f) => [f.name, f.bits, f.shift]),
      [
        ['timestamp', 41, 22],
        ['datacenter', 5, 17],
        ['worker', 5, 12],
        ['sequence', 12, 0],
      ],
    );
    assert.equal(b.layout.endOfLifeMs, svc.core.layout.expiresAt.getTime());
    assert.ok(b.lease);
    assert.equal(b.lease.kind, 'file');
    assert.equal(b.lease.cluster, 'orders');
    assert.deepEqual(b.lease.node, { datacenter: 0, worker: b.lease.slot });
    assert.equal(typeof b.lease.deadlineMs, 'number');
    assert.equal(b.lease.fenced, false);
    assert.equal(typeof b.lease.lastRenewalAt, 'number');
    assert.equal(b.generator.issued, '20');
    assert.equal(typeof b.generator.idsPerSecond, 'number');
    assert.equal(b.generator.exhaustions, 0);
    assert.equal(b.generator.clockBackwards, 0);
    assert.ok(b.generator.borrowMs >= 0);
    assert.deepEqual(b.refusals, {});
    const next = b.routes.find((r) => r.name === 'ids_next');
    assert.ok(next && next.requests === 20, JSON.stringify(next));
    assert.ok(next.p99Ms !== null && next.p99Ms > 0);
    assert.ok(b.routes.some((r) => r.name === 'status'));
    assert.equal(b.sequences, null);
    const c = await svc.get('/v1/cluster');
    assert.equal(c.status, 200, c.body);
    const cluster = JSON.parse(c.body) as ClusterBody;
    assert.equal(cluster.kind, 'file');
    assert.equal(cluster.cluster, 'orders');
    assert.equal(cluster.holders.length, 1);
    const [me] = cluster.holders;
    assert.deepEqual([me.self, me.state, me.pid, me.slot], [true, 'live', process.pid, b.lease.slot]);
    assert.deepEqual(me.node, b.lease.node);
    assert.ok(me.clockOffsetMs !== null && Math.abs(me.clockOffsetMs) <= 5, `own offset ${me.clockOffsetMs}`);
  } finally {
    await svc.stop();
  }
});

test('GIVEN --token WHEN the data routes are called THEN 401 without it, ?token= only on /v1/events, and 405 for other methods', async () => {
  const svc = await inProcess(['--token', TOKEN]);
  try {
    for (const path of ['/v1/status', '/v1/cluster', '/v1/events']) {
      const r = await svc.get(path);
      assert.equal(r.status, 401, path);
      assert.match(r.body, /FLURRY_E_UNAUTHORIZED/);
      assert.equal((await svc.get(path, { Authorization: 'Bearer wrong-token-000000000' })).status, 401);
    }
    assert.equal((await svc.get('/v1/status', { Authorization: `Bearer ${TOKEN}` })).status, 200);
    assert.equal((await svc.get(`/v1/status?token=${TOKEN}`)).status, 401, '?token= is refused on /v1/status');
    assert.equal((await svc.get(`/v1/cluster?token=${TOKEN}`)).status, 401, '?token= is refused on /v1/cluster');
    assert.equal((await svc.get('/v1/events?token=wrong-token-000000000')).status, 401);
    const stream = svc.get(`/v1/events?token=${encodeURIComponent(TOKEN)}`);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(svc.core.console.streams.size, 1, 'the stream opened with ?token=');
    svc.core.console.streams.close();
    const got = await stream;
    assert.equal(got.status, 200);
    assert.match(got.headers['content-type'], /^text\/event-stream/);
    for (const [path, method] of [
      ['/v1/status', 'POST'],
      ['/v1/cluster', 'DELETE'],
      ['/v1/events', 'POST'],
      ['/v1/events', 'HEAD'],
    ] as const) {
      const r = await svc.get(path, { Authorization: `Bearer ${TOKEN}` }, method);
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.ok(r.headers['allow'], 'Allow header');
    }
    assert.equal((await svc.get('/v1/status', { Authorization: `Bearer ${TOKEN}` }, 'HEAD')).status, 200);
  } finally {
    await svc.stop();
  }
});

test('GIVEN an open stream THEN it gets status and cluster (or cluster-error) frames at once and every period, and ends when the service closes', async () => {
  const svc = await inProcess([]);
  try {
    const t0 = Date.now();
    const stream = svc.get('/v1/events', {}, 'GET');
    await new Promise((r) => setTimeout(r, 1300));
    svc.core.console.streams.close();
    const res: InjectResponse = await stream;
    const closedIn = Date.now() - t0;
    const fs = frames(res.body);
    const statuses = fs.filter((f) => f.event === 'status');
    const clusters = fs.filter((f) => f.event === 'cluster' || f.event === 'cluster-error');
    console.log(`# ${statuses.length} status and ${clusters.length} cluster frames in ${closedIn} ms`);
    assert.ok(statuses.length >= 2, `a frame at once and one after 1 s: ${res.body.slice(0, 300)}`);
    assert.ok(clusters.length >= 2);
    assert.equal((statuses[0].data as StatusBody).pid, process.pid);
    assert.match(res.body, /retry: 2000\n\n/); // (the body is still chunk-encoded here)
    assert.equal(svc.core.console.streams.size, 0);
    // After close, new streams are refused.
    const again = await svc.get('/v1/events');
    assert.equal(again.status, 503);
    assert.equal(again.headers['retry-after'], '1');
  } finally {
    await svc.stop();
  }
});

test('GIVEN 64 open streams WHEN a 65th is opened THEN it gets 503 with Retry-After; a stream whose client leaves is dropped', async () => {
  const svc = await inProcess([]);
  try {
    const open = Array.from({ length: 64 }, () => svc.get('/v1/events'));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(svc.core.console.streams.size, 64);
    const extra = await svc.get('/v1/events');
    assert.equal(extra.status, 503);
    assert.equal(extra.headers['retry-after'], '1');
    assert.match(extra.body, /64 event streams/);
    svc.core.console.streams.close();
    const done = await Promise.all(open);
    assert.ok(done.every((r) => r.status === 200 && r.body.includes('event: status')));
    assert.equal(svc.core.console.streams.size, 0);
  } finally {
    await svc.stop();
  }
});

test('GIVEN a stream WHEN its client disconnects THEN it is dropped and the timer stops', async () => {
  const svc = await inProcess([]);
  try {
    let res: import('node:http').ServerResponse | undefined;
    const handler: typeof svc.handler = (req, r) => {
      res = r;
      svc.handler(req, r);
    };
    const pending = inject(handler, { url: '/v1/events', timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(svc.core.console.streams.size, 1);
    res!.destroy(); // the client went away
    await pending;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(svc.core.console.streams.size, 0);
    assert.equal(svc.core.console.streams['timer'], undefined, 'no timer left');
  } finally {
    await svc.stop();
  }
});
