// The memcached endpoint of a real `flurry serve --memcached-port 0` process, driven by
// clients that others wrote: Debian's libmemcached-tools (memccat, text and binary, SASL),
// Debian's python3-pymemcache (text) and npm's memjs (binary, SASL). Then random bytes on the
// port: the process survives, stays ready and keeps issuing fresh IDs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { ensureDebianPackage } from '@flurry/coordination/testing';
import { httpGet, startFlurry, type FlurryProcess } from '../test-support.js';

const TOKEN = 'memcached-clients-token-0123456789';
/** Debian's python, where apt installs python3-pymemcache (`python3` on PATH may be another one). */
const PYTHON = '/usr/bin/python3';

interface MemjsClient {
  get(key: string): Promise<{ value: Buffer | null; flags: Buffer | null }>;
  set(key: string, value: string, options: object): Promise<boolean>;
  stats(callback: (err: Error | null, server: string, stats: Record<string, string>) => void): void;
  close(): void;
}
const memjs = createRequire(import.meta.url)('memjs') as {
  Client: { create(servers: string, options: Record<string, unknown>): MemjsClient };
};

/** memccat: Debian 12+ names libmemcached-awesome's tool `memccat`, older releases `memcat`. */
function memcat(): string {
  const found = ['/usr/bin/memccat', '/usr/bin/memcat'].find((p) => existsSync(p));
  if (found) return found;
  ensureDebianPackage('libmemcached-tools', '/usr/bin/memccat');
  return '/usr/bin/memccat';
}

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 20_000, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

function assertIncreasingUnique(ids: bigint[], what: string): void {
  assert.equal(new Set(ids).size, ids.length, `${what}: unique`);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `${what}: id ${i} increases`);
}

async function withFlurry(env: Record<string, string>, fn: (svc: FlurryProcess, port: number) => Promise<void>) {
  const svc = await startFlurry({ args: ['--memcached-port', '0'], env });
  try {
    const port = svc.memcachedPort;
    assert.ok(typeof port === 'number' && port > 0, 'the ready line names the memcached port');
    await fn(svc, port);
  } finally {
    await svc.stop();
  }
}

test('GIVEN flurry serve --memcached-port 0 WHEN memccat (libmemcached-tools) gets keys over the text and the binary protocol THEN every key prints a fresh, increasing, unique ID', async () => {
  const bin = memcat();
  await withFlurry({}, async (_svc, port) => {
    const ids: bigint[] = [];
    for (const binary of [false, true, false, true]) {
      const r = await run(bin, [...(binary ? ['--binary'] : []), `--servers=127.0.0.1:${port}`, 'a', 'b', 'c']);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines.length, 3, r.stdout);
      for (const l of lines) {
        assert.match(l, /^\d+$/);
        ids.push(BigInt(l));
      }
    }
    assertIncreasingUnique(ids, 'memccat');
  });
});

test('GIVEN a token WHEN memccat authenticates with SASL PLAIN (binary) THEN it gets IDs; a wrong password and the unauthenticated text protocol are refused', async () => {
  const bin = memcat();
  await withFlurry({ FLURRY_TOKEN: TOKEN }, async (_svc, port) => {
    const server = `--servers=127.0.0.1:${port}`;
    const ok = await run(bin, ['--binary', '--username', 'any', '--password', TOKEN, server, 'k']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^\d+\n$/);
    const wrong = await run(bin, ['--binary', '--username', 'any', '--password', `${TOKEN}x`, server, 'k']);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /AUTHENTICATION FAILURE/);
    const text = await run(bin, [server, 'k']);
    assert.notEqual(text.code, 0);
    assert.doesNotMatch(text.stdout, /\d{10}/);
  });
});

test('GIVEN pymemcache (python3-pymemcache) WHEN it gets, gets many, gets with CAS, sends malformed lines on its socket THEN IDs are fresh and increasing, ERROR/CLIENT_ERROR come back and the same connection keeps working', async () => {
  ensureDebianPackage('python3-pymemcache', '/usr/lib/python3/dist-packages/pymemcache/__init__.py');
  await withFlurry({}, async (_svc, port) => {
    const script = `
import json, sys
from pymemcache.client.base import Client, _readline
c = Client(('127.0.0.1', ${port}), connect_timeout=5, timeout=5)
ids = [int(c.get('a'))]
many = c.get_many(['k1', 'k2', 'k3'])
ids += [int(many[k]) for k in ['k1', 'k2', 'k3']]
value, cas = c.gets('g')
ids.append(int(value))
sock = c.sock
out = {'cas_is_id': cas == value}
buf = b''
for name, line in [('unknown', b'bogus\\r\\n'), ('bad_key', b'get ' + b'x' * 300 + b'\\r\\n'), ('long', b'get ' + b'y ' * 1500 + b'\\r\\n')]:
    sock.sendall(line)
    buf, reply = _readline(sock, buf)
    out[name] = reply.decode()
    ids.append(int(c.get('after_' + name)))
out['same_socket'] = c.sock is sock
out['version'] = c.version().decode()
out['stats'] = {k.decode(): (v.decode() if isinstance(v, bytes) else v) for k, v in c.stats().items()}
out['ids'] = [str(i) for i in ids]
print(json.dumps(out))
`;
    const r = await run(PYTHON, ['-c', script]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      cas_is_id: boolean;
      unknown: string;
      bad_key: string;
      long: string;
      same_socket: boolean;
      version: string;
      stats: Record<string, unknown>;
      ids: string[];
    };
    assert.equal(out.unknown, 'ERROR');
    assert.match(out.bad_key, /^CLIENT_ERROR bad key 1/);
    assert.match(out.long, /^CLIENT_ERROR line too long/);
    assert.equal(out.same_socket, true, 'the client kept its connection');
    assert.equal(out.cas_is_id, true);
    assert.match(out.version, /^\d+\.\d+\.\d+$/);
    assert.equal(Number(out.stats.get_hits), 8);
    assert.equal(out.ids.length, 8);
    assertIncreasingUnique(out.ids.map(BigInt), 'pymemcache');
  });
});

test('GIVEN memjs (binary protocol) WHEN it gets keys, with and without the token THEN IDs are fresh and increasing; SASL PLAIN with the token works, a wrong one is refused', async () => {
  await withFlurry({}, async (_svc, port) => {
    const client = memjs.Client.create(`127.0.0.1:${port}`, { retries: 0, timeout: 5 });
    try {
      const ids: bigint[] = [];
      for (let i = 0; i < 50; i++) {
        const { value, flags } = await client.get(`key-${i}`);
        assert.ok(value, 'a value for any key');
        assert.deepEqual([...(flags ?? [])], [0, 0, 0, 0]);
        ids.push(BigInt(value.toString()));
      }
      assertIncreasingUnique(ids, 'memjs');
      // A command Flurry does not serve: an error status, and the connection keeps working.
      await assert.rejects(client.set('k', 'v', {}), /Unknown command|MemJS SET/);
      const next = BigInt((await client.get('next')).value?.toString() ?? '0');
      assert.ok(next > ids[ids.length - 1]);
      const stats = await new Promise<Record<string, string>>((resolve, reject) =>
        client.stats((err, _server, s) => (err ? reject(err) : resolve(s))),
      );
      assert.equal(stats.get_hits, '51');
      assert.match(stats.version, /^\d+\.\d+\.\d+$/);
    } finally {
      client.close();
    }
  });
  await withFlurry({ FLURRY_TOKEN: TOKEN }, async (_svc, port) => {
    const good = memjs.Client.create(`127.0.0.1:${port}`, { username: 'u', password: TOKEN, retries: 0, timeout: 5 });
    const bad = memjs.Client.create(`127.0.0.1:${port}`, {
      username: 'u',
      password: `${TOKEN}x`,
      retries: 0,
      timeout: 2,
    });
    try {
      const a = BigInt((await good.get('a')).value?.toString() ?? '0');
      const b = BigInt((await good.get('b')).value?.toString() ?? '0');
      assert.ok(a > 0n && b > a);
      await assert.rejects(bad.get('a'));
    } finally {
      good.close();
      bad.close();
    }
  });
});

test('GIVEN random bytes on the memcached port (text and binary framing) THEN flurry serve never crashes, stays ready, and the next clients get fresh IDs', async () => {
  await withFlurry({}, async (svc, port) => {
    const client = memjs.Client.create(`127.0.0.1:${port}`, { retries: 0, timeout: 5 });
    try {
      const before = BigInt((await client.get('before')).value?.toString() ?? '0');
      for (let i = 0; i < 300; i++) {
        await new Promise<void>((resolve) => {
          const s = connect({ host: '127.0.0.1', port }, () => {
            const junk = randomBytes(1 + ((i * 7919) % 9000));
            if (i % 3 === 0) junk[0] = 0x80;
            if (i % 3 === 1) junk.write('get ', 0, 'latin1');
            s.write(junk);
            if (i % 4 === 0) s.write('\r\nget a b\r\n');
            setTimeout(() => s.destroy(), 3);
          });
          s.on('error', () => undefined);
          s.on('close', () => resolve());
        });
      }
      assert.equal(svc.process.exitCode, null, 'still running');
      assert.equal((await httpGet(svc.port, '/readyz')).status, 200);
      const after = BigInt((await client.get('after')).value?.toString() ?? '0');
      assert.ok(after > before, 'a fresh, later ID after the fuzzing');
    } finally {
      client.close();
    }
  });
});
