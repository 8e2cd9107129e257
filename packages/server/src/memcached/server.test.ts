// The memcached endpoint over raw sockets (in this process, 127.0.0.1, a real file:
// registry): what katsubushi's protocol answers, malformed input, SASL PLAIN, refusals while
// no lease is held, bounded buffering, the idle timeout and the metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { loadServeConfig } from '../config/index.js';
import { createServiceCore, type ServiceCore } from '../service-core.js';
import { leaseGenerator, startMemcached, type ServiceLogger } from '../service.js';
import { tempDir } from '../test-support.js';
import { startMemcachedServer, type MemcachedServer } from './server.js';
import { CMD } from './session.js';
import { RawConnection, binaryRequest, idsOf } from '../testing/memcached.js';

const TOKEN = 'memcached-test-token-0123456789';
const quiet: ServiceLogger = { info() {}, warn() {}, error() {}, debug() {}, child: () => quiet };

interface Fixture {
  core: ServiceCore;
  mc: MemcachedServer;
  port: number;
  lease: () => Promise<void>;
}

/** A service core with its memcached endpoint; `lease()` attaches a leased generator. */
async function withEndpoint(args: string[], fn: (f: Fixture) => Promise<void>, leased = true): Promise<void> {
  const dir = tempDir('memcached');
  const config = loadServeConfig(
    ['--port', '0', '--memcached-port', '0', '--registry', `file:${path.join(dir, 'reg')}`, ...args],
    {},
  );
  const core = createServiceCore(config, quiet);
  const mc = await startMemcached(config, core, quiet);
  assert.ok(mc);
  const lease = async (): Promise<void> => {
    await leaseGenerator(config, core, 0, quiet, { stateDir: path.join(dir, 'state') });
  };
  try {
    if (leased) await lease();
    await fn({ core, mc, port: mc.port, lease });
  } finally {
    await mc.close();
    await core.issuer.leased?.close().catch(() => undefined);
    await core.registry?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertIncreasingUnique(ids: bigint[]): void {
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `id ${i} (${ids[i]}) after ${ids[i - 1]}`);
}

test('GIVEN the text protocol WHEN get, get with several keys, gets THEN each key gets a fresh increasing ID in katsubushi\'s "VALUE KEY 0 LEN" form', async () => {
  await withEndpoint([], async ({ port }) => {
    const c = await RawConnection.open(port);
    const [one] = await c.text('get anything\r\n');
    assert.match(one, /^VALUE anything 0 (\d+)\r\n(\d+)\r\nEND\r\n$/);
    const [, len, id] = /^VALUE anything 0 (\d+)\r\n(\d+)\r\n/.exec(one) ?? [];
    assert.equal(Number(len), id.length);
    const [three] = await c.text('get a b c\r\n');
    assert.match(three, /^VALUE a 0 \d+\r\n\d+\r\nVALUE b 0 \d+\r\n\d+\r\nVALUE c 0 \d+\r\n\d+\r\nEND\r\n$/);
    const [cas] = await c.text('gets x y\r\n');
    assert.match(cas, /^VALUE x 0 \d+ (\d+)\r\n\1\r\nVALUE y 0 \d+ (\d+)\r\n\2\r\nEND\r\n$/);
    const [upper] = await c.text('GET Up\r\n');
    assert.match(upper, /^VALUE Up 0 \d+\r\n\d+\r\nEND\r\n$/);
    // One-key gets take a fast path that reuses the last key's string while its bytes repeat:
    // keys of one length that differ, a repeated key, a latin1 byte, several lines in one chunk.
    const keys = ['ab', 'ac', 'ac', 'ab', 'k\xe9y', 'id'];
    const piped = await c.text(Buffer.from(keys.map((k) => `get ${k}\r\n`).join(''), 'latin1'), keys.length);
    assert.deepEqual(
      piped
        .join('')
        .match(/^VALUE (\S+) /gm)
        ?.map((v) => v.slice(6, -1)),
      keys,
    );
    const ids = idsOf([one, three, cas, upper, ...piped]);
    assert.equal(ids.length, 7 + keys.length);
    assertIncreasingUnique(ids);
    c.close();
  });
});

test("GIVEN the text protocol WHEN stats, version, quit THEN stats carries katsubushi's fields with the counts, version answers, quit closes the connection", async () => {
  await withEndpoint([], async ({ port }) => {
    const c = await RawConnection.open(port);
    await c.text('get a b\r\nget c\r\n', 2);
    const [stats] = await c.text('stats\r\n');
    const fields = Object.fromEntries([...stats.matchAll(/^STAT (\S+) (\S+)\r\n/gm)].map((m) => [m[1], m[2]]));
    for (const k of ['pid', 'uptime', 'time', 'version', 'curr_connections', 'total_connections', 'ids_issued'])
      assert.ok(k in fields, `stats has ${k}: ${stats}`);
    assert.equal(fields.pid, String(process.pid));
    assert.equal(fields.cmd_get, '3');
    assert.equal(fields.get_hits, '3');
    assert.equal(fields.get_misses, '0');
    assert.equal(fields.curr_connections, '1');
    assert.ok(Number(fields.ids_issued) >= 3);
    assert.match(stats, /END\r\n$/);
    const [version] = await c.text('version\r\n');
    assert.match(version, /^VERSION \d+\.\d+\.\d+\r\n$/);
    c.send('quit\r\nget never\r\n');
    assert.equal(await c.closedByServer(), true);
    assert.equal(c.peek(), '', 'nothing answered after quit');
  });
});

test('GIVEN malformed text lines THEN unknown commands get ERROR, long lines and bad keys CLIENT_ERROR, and the next request on the same connection works', async () => {
  await withEndpoint([], async ({ port }) => {
    const c = await RawConnection.open(port);
    const ok = async (): Promise<void> => assert.match((await c.text('get next\r\n'))[0], /^VALUE next 0 \d+\r\n/);
    assert.deepEqual(await c.text('foo bar\r\n'), ['ERROR\r\n']);
    await ok();
    assert.deepEqual(await c.text('\r\n'), ['ERROR\r\n']);
    assert.deepEqual(await c.text('get\r\n'), ['ERROR\r\n']);
    await ok();
    // A storage command: its data block is skipped, one ERROR, the connection stays in step.
    assert.deepEqual(await c.text('set k 0 0 5\r\nhello\r\n'), ['ERROR\r\n']);
    await ok();
    const [longKey] = await c.text(`get ${'k'.repeat(251)}\r\n`);
    assert.match(longKey, /^CLIENT_ERROR bad key 1: it has 251 bytes/);
    await ok();
    const [ctl] = await c.text('get a b\x01c\r\n');
    assert.match(ctl, /^CLIENT_ERROR bad key 2: it holds the control character 0x01/);
    await ok();
    // A line over 2,048 bytes, in one piece and arriving in pieces.
    const [long] = await c.text(`get ${'x '.repeat(1100)}\r\n`);
    assert.match(long, /^CLIENT_ERROR line too long: a command line is at most 2048 bytes/);
    await ok();
    c.send(`get ${'y'.repeat(1500)}`);
    await new Promise((r) => setTimeout(r, 30));
    c.send('z'.repeat(3000));
    await new Promise((r) => setTimeout(r, 30));
    const [split] = await c.text(`${'w'.repeat(100)}\r\n`);
    assert.match(split, /^CLIENT_ERROR line too long/);
    await ok();
    // Exactly 2,048 bytes is accepted: 2048 = "get " + 8 keys of 250 + 7 spaces + 37 more.
    const line = `get ${Array.from({ length: 8 }, () => 'k'.repeat(250)).join(' ')} ${'m'.repeat(36)}`;
    assert.equal(line.length, 2048);
    const [edge] = await c.text(line + '\r\n');
    assert.equal(idsOf([edge]).length, 9);
    await ok();
    c.close();
  });
});

test('GIVEN the binary protocol WHEN GET, GETK, GETQ, VERSION, NOOP, STAT THEN they answer as katsubushi and memcached do, opaque echoed', async () => {
  await withEndpoint([], async ({ port }) => {
    const c = await RawConnection.open(port);
    const [get] = await c.binary(binaryRequest(0x00, 'id', { opaque: 0xdeadbeef }));
    assert.equal(get.magic, 0x81);
    assert.equal(get.opcode, 0x00);
    assert.equal(get.status, 0);
    assert.equal(get.opaque, 0xdeadbeef);
    assert.deepEqual([...get.extras], [0, 0, 0, 0], '4-byte flags, 0');
    assert.equal(get.key, '', 'GET does not echo the key');
    assert.match(get.value, /^\d+$/);
    const [getk, getq] = await c.binary(
      Buffer.concat([binaryRequest(0x0c, 'kk', { opaque: 2 }), binaryRequest(0x09, 'q', { opaque: 3 })]),
      2,
    );
    assert.equal(getk.key, 'kk');
    assert.equal(getk.opaque, 2);
    assert.equal(getq.opcode, 0x09);
    assertIncreasingUnique([get, getk, getq].map((r) => BigInt(r.value)));
    const [version, noop] = await c.binary(Buffer.concat([binaryRequest(0x0b), binaryRequest(0x0a)]), 2);
    assert.match(version.value, /^\d+\.\d+\.\d+$/);
    assert.equal(noop.status, 0);
    const stats = await c.binary(binaryRequest(0x10), 13);
    assert.equal(stats[12].key, '', 'an empty response ends the stats');
    assert.equal(Object.fromEntries(stats.map((s) => [s.key, s.value])).get_hits, '3');
    c.close();
  });
});

test('GIVEN malformed binary requests THEN unknown opcodes, bad keys and oversized bodies get error statuses and the connection stays usable; a wrong magic closes it', async () => {
  await withEndpoint([], async ({ port }) => {
    const c = await RawConnection.open(port);
    const get = async (): Promise<void> => {
      const [r] = await c.binary(binaryRequest(0x00, 'ok'));
      assert.equal(r.status, 0);
      assert.match(r.value, /^\d+$/);
    };
    await get(); // the first byte chose the binary protocol
    const [unknown] = await c.binary(binaryRequest(0x01, 'k', { value: 'v', extras: Buffer.alloc(8) }));
    assert.equal(unknown.status, 0x0081);
    await get();
    const [empty] = await c.binary(binaryRequest(0x00, ''));
    assert.equal(empty.status, 0x0004);
    const [long] = await c.binary(binaryRequest(0x00, 'k'.repeat(251)));
    assert.equal(long.status, 0x0004);
    await get();
    const [big] = await c.binary(binaryRequest(0x00, 'k', { value: Buffer.alloc(100_000) }));
    assert.equal(big.status, 0x0003);
    await get();
    const [inconsistent] = await c.binary(binaryRequest(0x00, 'kkkk', { bodyLength: 2, value: '' }).subarray(0, 26));
    assert.equal(inconsistent.status, 0x0004);
    await get();
    c.send(binaryRequest(0x00, 'k', { magic: 0x42 }));
    assert.equal(await c.closedByServer(), true);
  });
});

test('GIVEN a token WHEN a client has not authenticated THEN text get/stats and binary GET are refused; SASL PLAIN with the token opens the binary protocol, a wrong password does not', async () => {
  await withEndpoint(['--token', TOKEN], async ({ port }) => {
    const t = await RawConnection.open(port);
    const [refused] = await t.text('get a\r\n');
    assert.match(refused, /^CLIENT_ERROR FLURRY_E_UNAUTHORIZED .*SASL PLAIN/);
    assert.match((await t.text('stats\r\n'))[0], /^CLIENT_ERROR FLURRY_E_UNAUTHORIZED/);
    assert.match((await t.text('version\r\n'))[0], /^VERSION /);
    t.close();

    const b = await RawConnection.open(port);
    const [before] = await b.binary(binaryRequest(0x00, 'a'));
    assert.equal(before.status, 0x0020);
    assert.match(before.value, /FLURRY_E_UNAUTHORIZED/);
    const [mechs] = await b.binary(binaryRequest(0x20));
    assert.equal(mechs.value, 'PLAIN');
    const [wrong] = await b.binary(binaryRequest(0x21, 'PLAIN', { value: `\0user\0${TOKEN}x` }));
    assert.equal(wrong.status, 0x0020);
    assert.equal((await b.binary(binaryRequest(0x00, 'a')))[0].status, 0x0020);
    const [mech] = await b.binary(binaryRequest(0x21, 'CRAM-MD5', { value: 'x' }));
    assert.equal(mech.status, 0x0020);
    const [ok] = await b.binary(binaryRequest(0x21, 'PLAIN', { value: `\0any-user\0${TOKEN}` }));
    assert.equal(ok.status, 0);
    assert.equal(ok.value, 'Authenticated');
    const [id] = await b.binary(binaryRequest(0x00, 'a'));
    assert.equal(id.status, 0);
    assert.match(id.value, /^\d+$/);
    b.close();
  });
});

test('GIVEN no token WHEN a client sends SASL requests THEN they are unknown commands, as on a memcached without SASL', async () => {
  await withEndpoint([], async ({ port }) => {
    const b = await RawConnection.open(port);
    const [r] = await b.binary(binaryRequest(0x21, 'PLAIN', { value: '\0u\0p' }));
    assert.equal(r.status, 0x0081);
    b.close();
  });
});

test('GIVEN no lease yet, then a lease, then the lease released THEN get answers SERVER_ERROR with the code, then IDs, then SERVER_ERROR again: never a stale ID', async () => {
  await withEndpoint(
    [],
    async ({ core, port, lease, mc }) => {
      const c = await RawConnection.open(port);
      const b = await RawConnection.open(port);
      const [before] = await c.text('get a b\r\n');
      assert.match(before, /^SERVER_ERROR FLURRY_E_UNAVAILABLE .*no node-ID lease/);
      assert.equal(before.split('\r\n').length, 2, 'one line, no VALUE');
      await b.binary(binaryRequest(0x0a));
      const [bBefore] = await b.binary(binaryRequest(0x00, 'a'));
      assert.equal(bBefore.status, 0x0086);
      assert.match(bBefore.value, /^FLURRY_E_UNAVAILABLE /);
      await lease();
      const ids = idsOf(await c.text('get a b\r\n'));
      assert.equal(ids.length, 2);
      await core.issuer.leased?.close();
      const [after] = await c.text('get a\r\n');
      assert.match(after, /^SERVER_ERROR FLURRY_E_\w+ /);
      const [bAfter] = await b.binary(binaryRequest(0x00, 'a'));
      assert.equal(bAfter.status, 0x0086);
      assert.equal(mc.counters.getMisses, 5);
      c.close();
      b.close();
    },
    false,
  );
});

test('GIVEN a client that pipelines gets and never reads THEN the endpoint stops reading from it (bounded memory), and answers all once the client reads', async () => {
  await withEndpoint([], async ({ mc, port }) => {
    const requests = 1_000_000;
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.pause(); // never read
    socket.write(Buffer.alloc(requests * 7, 'get a\r\n'));
    await new Promise((r) => setTimeout(r, 1_500));
    const stuck = mc.counters.getHits;
    await new Promise((r) => setTimeout(r, 500));
    // What is answered is bounded by the kernel's socket buffers and the 64 KiB high-water
    // mark, not by what the client sent: the endpoint stopped reading.
    assert.equal(mc.counters.getHits, stuck, 'no request is answered while the replies are backed up');
    assert.ok(stuck < requests / 2, `answered ${stuck} of ${requests} while nobody read`);
    const read = mc.counters.bytesRead;
    assert.ok(read < (requests * 7) / 2, `read ${read} of ${requests * 7} bytes while the replies were backed up`);
    let received = 0;
    const perReply = Buffer.byteLength('VALUE a 0 19\r\n1234567890123456789\r\nEND\r\n');
    const all = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        received += d.length;
        if (received >= requests * perReply) resolve();
      }),
    );
    socket.resume();
    await all;
    assert.equal(received, requests * perReply);
    assert.equal(mc.counters.getHits, requests);
    socket.destroy();
  });
});

test('GIVEN an idle timeout THEN an idle connection is closed and a busy one is not', async () => {
  await withEndpoint(['--memcached-idle-timeout-ms', '1000'], async ({ port }) => {
    const idle = await RawConnection.open(port);
    const busy = await RawConnection.open(port);
    const until = Date.now() + 1_600;
    while (Date.now() < until) {
      await busy.text('get a\r\n');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(idle.ended, true, 'idle connection closed');
    assert.equal(busy.ended, false);
    busy.close();
  });
});

test('GIVEN random bytes on many connections THEN the endpoint never crashes and still answers get with fresh IDs', async () => {
  await withEndpoint([], async ({ port }) => {
    const before = idsOf(await (await RawConnection.open(port)).text('get a\r\n'));
    for (let i = 0; i < 200; i++) {
      const c = await RawConnection.open(port);
      const junk = randomBytes(1 + (i % 7) * 1000);
      if (i % 3 === 0) junk[0] = 0x80; // binary framing with garbage
      c.send(junk);
      if (i % 5 === 0) c.send('\r\nget a\r\n');
      await new Promise((r) => setTimeout(r, 2));
      c.close();
    }
    const c = await RawConnection.open(port);
    const after = idsOf(await c.text('get a b\r\n'));
    assert.equal(after.length, 2);
    assert.ok(after[0] > before[0]);
    c.close();
  });
});

test('GIVEN memcached requests THEN the metrics count them under protocol="memcached" by command and outcome, and HTTP metrics keep their names', async () => {
  await withEndpoint([], async ({ core, port }) => {
    const c = await RawConnection.open(port);
    await c.text('get a\r\nget b c\r\nfoo\r\nversion\r\n', 4);
    c.close();
    const text = await core.metrics.text();
    assert.match(text, /^flurry_protocol_requests_total\{protocol="memcached",command="get",outcome="ok"\} 2$/m);
    assert.match(text, /^flurry_protocol_requests_total\{protocol="memcached",command="unknown",outcome="error"\} 1$/m);
    assert.match(text, /^flurry_protocol_requests_total\{protocol="memcached",command="version",outcome="ok"\} 1$/m);
    assert.match(text, /^flurry_protocol_request_duration_seconds_count\{protocol="memcached",command="get"\} 2$/m);
    assert.match(text, /^# TYPE flurry_http_requests_total counter$/m);
    assert.deepEqual(core.metrics.protocols.totals('memcached').get, { ok: 2, error: 0 });
    // One read in 16 per connection is timed (the first included); every request is counted.
    const d = await RawConnection.open(port);
    for (let i = 0; i < 32; i++) await d.text('get one\r\n');
    d.close();
    const after = await core.metrics.text();
    assert.match(after, /^flurry_protocol_requests_total\{protocol="memcached",command="get",outcome="ok"\} 34$/m);
    assert.match(after, /^flurry_protocol_request_duration_seconds_count\{protocol="memcached",command="get"\} 4$/m);
  });
});

test('GIVEN a recorder without count() THEN every memcached request is timed', async () => {
  const seen: number[] = [];
  const mc = await startMemcachedServer({
    port: 0,
    ids: { nextString: () => '7' },
    recorder: { request: (command, ok, seconds) => seen.push(ok && seconds >= 0 ? command : -1) },
  });
  try {
    const c = await RawConnection.open(mc.port);
    for (let i = 0; i < 20; i++) await c.text('get k\r\n');
    c.close();
    assert.deepEqual(seen, Array(20).fill(CMD.get));
  } finally {
    await mc.close();
  }
});
