import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout } from '@flurry/core';
import { parseRegistryUrl } from './url.js';
import { openRegistry } from './open-registry.js';
import { freePort } from './testing/harness.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-url-'));
after(() => rmSync(base, { recursive: true, force: true }));

function urlError(fn: () => unknown): FlurryError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof FlurryError);
    assert.equal(e.code, 'FLURRY_E_REGISTRY_URL', e.message);
    return e;
  }
  assert.fail('expected FLURRY_E_REGISTRY_URL');
}

describe('registry URLs', () => {
  test('GIVEN each documented form THEN it parses to its backend', () => {
    assert.deepEqual(parseRegistryUrl('file:'), { kind: 'file', url: 'file:', redacted: 'file:', dir: undefined });
    assert.equal((parseRegistryUrl('file:/var/lib/x') as { dir: string }).dir, '/var/lib/x');
    assert.equal((parseRegistryUrl('file:///var/lib/x') as { dir: string }).dir, '/var/lib/x');
    assert.equal((parseRegistryUrl('file://localhost/var/a%20b') as { dir: string }).dir, '/var/a b');
    assert.equal(parseRegistryUrl('zookeeper://127.0.0.1:2181,127.0.0.1:2182/flurry').kind, 'zookeeper');
    assert.equal(parseRegistryUrl('zookeeper+leaf://h:2181/leaf').kind, 'zookeeper+leaf');
    assert.equal(parseRegistryUrl('etcd://u:p@h1:2379,h2:2379/prefix').kind, 'etcd');
    assert.equal(parseRegistryUrl('rediss://:pw@h:6380/2').kind, 'redis');
    assert.deepEqual(parseRegistryUrl('static:7'), { kind: 'static', url: 'static:7', redacted: 'static:7', slot: 7 });
    assert.equal(parseRegistryUrl('k8s:').kind, 'k8s');
  });

  test('GIVEN a malformed URL THEN FLURRY_E_REGISTRY_URL names it without the password and lists the forms', () => {
    const e = urlError(() => parseRegistryUrl('redis://:hunter2@host:99999/0'));
    assert.ok(!e.message.includes('hunter2'), e.message);
    assert.match(e.message, /redis:\/\/:\*\*\*@host:99999\/0/);
    assert.match(e.message, /static:N/);
    for (const bad of [
      '',
      'nope',
      'sqlite://h/db', // mysql:// and postgres:// are registries now (parseSqlUrl)
      'file:relative/dir',
      'file://otherhost/x',
      'static:-1',
      'static:x',
      'k8s:3',
      'etcd://',
      'redis://h:1:2/0',
    ])
      urlError(() => parseRegistryUrl(bad));
  });

  test('GIVEN file: with a directory THEN openRegistry gives a working file registry', async () => {
    const reg = await openRegistry(`file:${base}/reg`, { cluster: 'u', stateDir: path.join(base, 'state') });
    assert.equal(reg.kind, 'file');
    assert.equal(reg.url, `file:${base}/reg`);
    const lease = await reg.acquire(Layout.from('twitter'));
    assert.deepEqual(lease.node, { datacenter: 0, worker: 0 });
    await reg.close();
  });

  test('GIVEN file: alone THEN the registry lives under the state directory', async () => {
    const reg = await openRegistry('file:', { stateDir: path.join(base, 'st2') });
    assert.equal(reg.url, `file:${path.join(base, 'st2', 'registry')}`);
    await reg.close();
  });

  test('GIVEN an unreachable engine THEN FLURRY_E_REGISTRY_UNREACHABLE names the URL without its password', async () => {
    const port = await freePort();
    for (const url of [`redis://:secret@127.0.0.1:${port}/0`, `etcd://root:secret@127.0.0.1:${port}/x`]) {
      await assert.rejects(openRegistry(url, { connectTimeoutMs: 500 }), (e: FlurryError) => {
        assert.equal(e.code, 'FLURRY_E_REGISTRY_UNREACHABLE', e.message);
        assert.ok(!e.message.includes('secret'), e.message);
        assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
        return true;
      });
    }
  });

  test('GIVEN bad options THEN openRegistry rejects with FLURRY_E_REGISTRY_OPTION before connecting', async () => {
    await assert.rejects(
      openRegistry('file:', { cluster: 'no/slash' }),
      (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_OPTION',
    );
  });

  test('GIVEN an engine whose client library is not installed THEN FLURRY_E_REGISTRY_CLIENT_MISSING names the npm package', () => {
    // A child process in which the packages cannot be resolved, as on a machine without them.
    const hook = `export async function resolve(spec, ctx, next) {
      if (['ioredis', 'etcd3', 'node-zookeeper-client'].includes(spec)) {
        const e = new Error("Cannot find package '" + spec + "' imported from " + ctx.parentURL); e.code = 'ERR_MODULE_NOT_FOUND'; throw e;
      }
      return next(spec, ctx);
    }`;
    const here = path.dirname(fileURLToPath(import.meta.url));
    const script = `
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const { openRegistry } = await import(${JSON.stringify(path.join(here, 'open-registry.js'))});
      const out = [];
      for (const url of ['redis://:pw@127.0.0.1:1/0', 'etcd://127.0.0.1:1/x', 'zookeeper://127.0.0.1:1/x']) {
        try { await openRegistry(url); out.push('opened'); } catch (e) { out.push({ code: e.code, message: e.message }); }
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: here,
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { code: string; message: string }[];
    assert.deepEqual(
      out.map((o) => o.code),
      ['FLURRY_E_REGISTRY_CLIENT_MISSING', 'FLURRY_E_REGISTRY_CLIENT_MISSING', 'FLURRY_E_REGISTRY_CLIENT_MISSING'],
    );
    assert.match(out[0].message, /npm install ioredis@6(\s|$)/);
    assert.ok(!out[0].message.includes(':pw@'), out[0].message);
    assert.match(out[1].message, /npm install etcd3@1(\s|$)/);
    assert.match(out[2].message, /npm install node-zookeeper-client@1(\s|$)/);
  });
});
