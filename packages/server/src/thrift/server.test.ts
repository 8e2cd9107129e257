import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createRequire } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';
import thrift from 'thrift';
import fc from 'fast-check';
import { Generator, Layout, ManualClock, FlurryError } from '@flurry/core';
import { startThriftServer, type ThriftServer } from './server.js';

// The client is the Thrift 0.17 compiler's output for packages/server/thrift/snowflake.thrift.
const require = createRequire(import.meta.url);
type Call = (cb: (err: unknown, res: unknown) => void) => void;
interface SnowflakeClient {
  get_worker_id(cb: (err: unknown, res: unknown) => void): void;
  get_datacenter_id(cb: (err: unknown, res: unknown) => void): void;
  get_timestamp(cb: (err: unknown, res: unknown) => void): void;
  get_id(ua: string, cb: (err: unknown, res: unknown) => void): void;
}
const Snowflake = require('../../thrift/gen-nodejs/Snowflake.js') as thrift.TClientConstructor<SnowflakeClient>;
const ttypes = require('../../thrift/gen-nodejs/snowflake_types.js') as {
  InvalidUserAgentError: new () => Error;
  InvalidSystemClock: new () => Error;
};

function connect(port: number): Promise<{ client: SnowflakeClient; end: () => void }> {
  return new Promise((resolve, reject) => {
    const conn = thrift.createConnection('127.0.0.1', port, {
      transport: thrift.TFramedTransport,
      protocol: thrift.TBinaryProtocol,
      max_attempts: 0,
      connect_timeout: 2_000,
    });
    conn.once('error', reject);
    conn.once('connect', () => {
      conn.off('error', reject);
      conn.on('error', () => {});
      resolve({ client: thrift.createClient(Snowflake, conn), end: () => conn.end() });
    });
  });
}

function call(fn: Call): Promise<bigint> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Thrift call timed out after 5 s')), 5_000);
    fn((err, res) => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- forwards the Thrift client's error unchanged
      if (err) reject(err);
      else resolve((res as thrift.Int64).buffer.readBigInt64BE((res as { offset?: number }).offset ?? 0));
    });
  });
}

const twitter = Layout.from('twitter');

async function withServer(
  opts: Partial<Parameters<typeof startThriftServer>[0]>,
  body: (server: ThriftServer, gen: Generator) => Promise<void>,
): Promise<void> {
  const gen = new Generator({ layout: twitter, node: { datacenter: 3, worker: 17 } });
  const server = await startThriftServer({
    host: '127.0.0.1',
    port: 0,
    generator: gen,
    layout: twitter,
    node: gen.node,
    ...opts,
  });
  try {
    await body(server, gen);
  } finally {
    await server.close();
    gen.close();
  }
}

/** Sends raw bytes; resolves with what came back once the server closes the socket (or after `waitMs`). */
function rawExchange(
  port: number,
  bytes: Uint8Array,
  waitMs = 1_000,
): Promise<{ closedByServer: boolean; received: Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1');
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ closedByServer, received: Buffer.concat(chunks) });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => socket.write(bytes));
  });
}

/** A framed, strict binary-protocol CALL with an empty argument struct. */
function frameCall(name: string, seqid = 1, type = 1): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const body = Buffer.alloc(4 + 4 + nameBytes.length + 4 + 1);
  let o = body.writeInt32BE(0x80010000 | type | 0, 0);
  o = body.writeInt32BE(nameBytes.length, o);
  o += nameBytes.copy(body, o);
  o = body.writeInt32BE(seqid, o);
  body.writeUInt8(0, o); // field STOP
  const frame = Buffer.alloc(4 + body.length);
  frame.writeInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

test('GIVEN a Thrift server for node {datacenter:3, worker:17} WHEN a Snowflake client built from the IDL asks for the node and the time THEN it answers 17, 3 and the current Unix ms', async () => {
  await withServer({}, async (server) => {
    const { client, end } = await connect(server.port);
    try {
      assert.equal(await call((cb) => client.get_worker_id(cb)), 17n);
      assert.equal(await call((cb) => client.get_datacenter_id(cb)), 3n);
      const before = BigInt(Date.now());
      const ts = await call((cb) => client.get_timestamp(cb));
      const after = BigInt(Date.now());
      assert.ok(ts >= before && ts <= after, `timestamp ${ts} outside [${before}, ${after}]`);
    } finally {
      end();
    }
  });
});

test('GIVEN a valid user agent THEN get_id returns an ID of this node; GIVEN an invalid one THEN InvalidUserAgentError and the connection keeps working', async () => {
  await withServer({}, async (server) => {
    const { client, end } = await connect(server.port);
    try {
      const id = await call((cb) => client.get_id('my-service-2', cb));
      const d = twitter.decode(id);
      assert.deepEqual({ ...d.fields }, { datacenter: 3, worker: 17 });
      assert.ok(Math.abs(d.unixMs - Date.now()) < 5_000);
      for (const bad of ['', '1abc', '-abc', 'a b', 'ab_c', 'abc\n', 'ünïcode', 'a.b']) {
        await assert.rejects(
          call((cb) => client.get_id(bad, cb)),
          (err: unknown) => err instanceof ttypes.InvalidUserAgentError && /must match/.test(err.message),
          `user agent ${JSON.stringify(bad)} must be rejected`,
        );
      }
      for (const good of ['a', 'Z', 'a-1', 'Web-Frontend-01', 'x'.repeat(1_000)]) {
        assert.equal(typeof (await call((cb) => client.get_id(good, cb))), 'bigint');
      }
    } finally {
      end();
    }
  });
});

test('GIVEN 8 concurrent clients making 400 pipelined get_id calls each THEN all 3,200 IDs are distinct and each client sees them increasing', async () => {
  await withServer({}, async (server) => {
    const conns = await Promise.all(Array.from({ length: 8 }, () => connect(server.port)));
    try {
      const perClient = await Promise.all(
        conns.map(({ client }) =>
          Promise.all(Array.from({ length: 400 }, () => call((cb) => client.get_id('load', cb)))),
        ),
      );
      const all = new Set(perClient.flat());
      assert.equal(all.size, 8 * 400);
      for (const ids of perClient) for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
    } finally {
      for (const c of conns) c.end();
    }
  });
});

test('GIVEN garbage bytes, an oversized frame length, a bad protocol version and a truncated call THEN only that connection is closed and the server keeps answering', async () => {
  await withServer({}, async (server) => {
    const cases: Buffer[] = [
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), // frame length 0x47455420 > 64 KiB
      Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3]), // negative frame length
      (() => {
        const f = frameCall('get_id');
        f.writeInt32BE(0x7f010000, 4); // bad version
        return f;
      })(),
      (() => {
        const f = frameCall('get_id');
        return Buffer.concat([Buffer.from([0, 0, 0, 6]), f.subarray(4, 10)]); // header cut inside the name
      })(),
      frameCall('get_id', 1, 2), // a REPLY sent to the server
      Buffer.concat([Buffer.from([0, 0, 0, 4]), Buffer.from([0x80, 0x01, 0x00, 0x01])]), // header without name
    ];
    for (const bytes of cases) {
      const r = await rawExchange(server.port, bytes);
      assert.equal(
        r.closedByServer,
        true,
        `server must close a connection that sent ${bytes.toString('hex').slice(0, 40)}`,
      );
    }
    const { client, end } = await connect(server.port);
    try {
      assert.equal(typeof (await call((cb) => client.get_id('still-alive', cb))), 'bigint');
    } finally {
      end();
    }
  });
});

test('GIVEN 60 random byte strings (fast-check) on their own connections THEN the server never crashes and still issues IDs afterwards', async () => {
  await withServer({}, async (server) => {
    const samples = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 300 }), { numRuns: 60, seed: 4242 });
    // Half of them get a plausible frame-length prefix so they reach the message parser.
    const inputs = samples.map((b, i) => {
      if (i % 2 === 0) return b;
      const f = Buffer.alloc(4 + b.length);
      f.writeInt32BE(b.length, 0);
      Buffer.from(b).copy(f, 4);
      return f;
    });
    await Promise.all(inputs.map((b) => rawExchange(server.port, b, 300)));
    const { client, end } = await connect(server.port);
    try {
      assert.equal(typeof (await call((cb) => client.get_id('after-fuzz', cb))), 'bigint');
    } finally {
      end();
    }
  });
});

test('GIVEN an unknown method name THEN the reply is a TApplicationException UNKNOWN_METHOD with the same seqid and the connection stays open', async () => {
  await withServer({}, async (server) => {
    const r = await rawExchange(
      server.port,
      Buffer.concat([frameCall('get_everything', 77), frameCall('get_worker_id', 78)]),
      500,
    );
    const input = new thrift.TBinaryProtocol(new thrift.TFramedTransport(r.received.subarray(4)));
    const head = input.readMessageBegin();
    assert.equal(head.fname, 'get_everything');
    assert.equal(head.mtype, thrift.Thrift.MessageType.EXCEPTION);
    assert.equal(head.rseqid, 77);
    const ex = new thrift.Thrift.TApplicationException();
    ex.read(input);
    assert.equal((ex as unknown as { type: number }).type, thrift.Thrift.TApplicationExceptionType.UNKNOWN_METHOD);
    // The second call on the same connection was answered.
    assert.ok(r.received.length > r.received.readInt32BE(0) + 4, 'second reply present');
    assert.equal(r.closedByServer, false);
  });
});

test('GIVEN a layout without a datacenter field THEN get_datacenter_id is 0 and get_worker_id is the node field', async () => {
  const layout = Layout.parse('timestamp:41,machine:10,sequence:12', { epoch: '2020-01-01T00:00:00Z' });
  const gen = new Generator({ layout, node: { machine: 513 } });
  const server = await startThriftServer({ port: 0, generator: gen, layout, node: () => gen.node });
  const { client, end } = await connect(server.port);
  try {
    assert.equal(await call((cb) => client.get_datacenter_id(cb)), 0n);
    assert.equal(await call((cb) => client.get_worker_id(cb)), 513n);
    assert.equal(layout.decode(await call((cb) => client.get_id('a', cb))).fields.machine, 513);
  } finally {
    end();
    await server.close();
    gen.close();
  }
});

test('GIVEN a generator whose clock stepped back with the throw policy THEN get_id answers InvalidSystemClock naming the FLURRY_E code', async () => {
  const clock = new ManualClock(Date.UTC(2025, 5, 1));
  const gen = new Generator({ layout: twitter, node: { datacenter: 1, worker: 2 }, clock, onClockBackwards: 'throw' });
  const server = await startThriftServer({ port: 0, generator: gen, layout: twitter, node: gen.node, clock });
  const { client, end } = await connect(server.port);
  try {
    await call((cb) => client.get_id('a', cb));
    clock.stepWall(-5_000);
    await assert.rejects(
      call((cb) => client.get_id('a', cb)),
      (err: unknown) => err instanceof ttypes.InvalidSystemClock && /FLURRY_E_CLOCK_BACKWARDS/.test(err.message),
    );
    assert.equal(await call((cb) => client.get_timestamp(cb)), BigInt(clock.now()));
  } finally {
    end();
    await server.close();
    gen.close();
  }
});

test('GIVEN bad options THEN startThriftServer rejects with FLURRY_E_INVALID_OPTION; GIVEN a busy port THEN it rejects with EADDRINUSE', async () => {
  const gen = new Generator({ layout: twitter, node: { datacenter: 0, worker: 9 } });
  try {
    for (const bad of [
      { port: -1 },
      { port: 70_000 },
      { port: 1.5 },
      { maxFrameBytes: 10 },
      { generator: {} as never },
    ]) {
      await assert.rejects(
        startThriftServer({ port: 0, generator: gen, layout: twitter, node: gen.node, ...bad }),
        (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_INVALID_OPTION',
      );
    }
    const first = await startThriftServer({ port: 0, generator: gen, layout: twitter, node: gen.node });
    try {
      await assert.rejects(
        startThriftServer({ port: first.port, generator: gen, layout: twitter, node: gen.node }),
        /EADDRINUSE/,
      );
    } finally {
      await first.close();
    }
  } finally {
    gen.close();
  }
});

test('GIVEN close() while a client is connected THEN close resolves and the port is free again', async () => {
  const gen = new Generator({ layout: twitter, node: { datacenter: 0, worker: 10 } });
  const server = await startThriftServer({ port: 0, generator: gen, layout: twitter, node: gen.node });
  const { client } = await connect(server.port);
  await call((cb) => client.get_id('a', cb));
  const t0 = Date.now();
  await server.close();
  assert.ok(Date.now() - t0 < 3_000);
  await delay(10);
  const again = await startThriftServer({ port: server.port, generator: gen, layout: twitter, node: gen.node });
  await again.close();
  gen.close();
});
