import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Layout } from '@flurry/core';
import { PassThrough } from 'node:stream';
import { jsonBody, runFlurry, tempDir } from '../test-support.js';
import { runCli } from './main.js';

/** Runs the CLI in this process with captured output (the same code path as the bin). */
async function inProcess(
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  err.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await runCli({ argv, env: { TZ: 'UTC', ...env }, stdout: out, stderr: err });
  return { code, stdout, stderr };
}

const twitter = Layout.from('twitter');

function coded(r: { code: number | null; stderr: string }, code: string): void {
  assert.equal(r.code, 2, `exit code 2 expected; stderr: ${r.stderr}`);
  assert.match(r.stderr, new RegExp(`^flurry: ${code}: .+`), r.stderr);
  assert.ok(!/\n\s+at /.test(r.stderr), `no stack trace: ${r.stderr}`);
}

test('GIVEN two concurrent `flurry next` runs on one file registry THEN their IDs are disjoint, increasing, and a third run prints IDs above both', async () => {
  const dir = tempDir('next');
  try {
    const env = { FLURRY_REGISTRY: `file:${dir}` };
    const [a, b] = await Promise.all([
      runFlurry(['next', '-n', '20000'], env),
      runFlurry(['next', '-n', '20000'], env),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const ia = a.stdout.trim().split('\n').map(BigInt);
    const ib = b.stdout.trim().split('\n').map(BigInt);
    assert.equal(ia.length, 20000);
    assert.equal(ib.length, 20000);
    for (const ids of [ia, ib])
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'strictly increasing');
    const all = new Set([...ia, ...ib]);
    assert.equal(all.size, 40000, 'no ID printed twice');
    const c = await runFlurry(['next', '-n', '5'], env);
    assert.equal(c.code, 0, c.stderr);
    const ic = c.stdout.trim().split('\n').map(BigInt);
    const maxAB = [...all].reduce((m, x) => (x > m ? x : m), 0n);
    for (const id of ic) assert.ok(id > maxAB, `third run's ${id} is above every earlier ID (max ${maxAB})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN --format, --fixed and --node THEN next prints encoded IDs of the pinned node that sort like the IDs', async () => {
  const dir = tempDir('fmt');
  try {
    const r = await runFlurry([
      'next',
      '-n',
      '50',
      '--format',
      'base62',
      '--fixed',
      '--node',
      'datacenter=7',
      '--registry',
      `file:${dir}`,
      '--cluster',
      'c1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 50);
    assert.ok(lines.every((l) => l.length === lines[0].length && /^[0-9A-Za-z]+$/.test(l)));
    assert.deepEqual([...lines].sort(), lines);
    const dec = await runFlurry(['decode', '--format', 'base62', '--json', lines[0]]);
    assert.equal(dec.code, 0, dec.stderr);
    assert.equal(jsonBody<{ fields: Record<string, number> }>(dec.stdout).fields.datacenter, 7);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN IDs THEN decode prints fields, Unix ms and ISO time, honouring layout and epoch', async () => {
  const id = twitter.compose({
    unixMs: Date.UTC(2024, 10, 22, 8, 0, 0, 5),
    sequence: 3,
    node: { datacenter: 1, worker: 7 },
  });
  const text = await inProcess(['decode', id.toString()]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /2024-11-22T08:00:00\.005Z/);
  assert.match(text.stdout, new RegExp(`Unix ms ${Date.UTC(2024, 10, 22, 8, 0, 0, 5)}`));
  assert.match(text.stdout, /datacenter\s+1/);
  assert.match(text.stdout, /worker\s+7/);
  assert.match(text.stdout, /sequence\s+3/);
  const json = await inProcess(['decode', '--json', id.toString(), (id + 1n).toString()]);
  const lines = json.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[0], {
    id: id.toString(),
    unixMs: Date.UTC(2024, 10, 22, 8, 0, 0, 5),
    timestamp: '2024-11-22T08:00:00.005Z',
    fields: { datacenter: 1, worker: 7 },
    sequence: 3,
  });
  const custom = Layout.parse('timestamp:41,worker:10,sequence:12', { epoch: '2020-01-01T00:00:00Z' });
  const cid = custom.compose({ unixMs: Date.UTC(2021, 5, 1), sequence: 0, node: { worker: 9 } });
  const c = await inProcess([
    'decode',
    '--json',
    '--fields',
    'timestamp:41,worker:10,sequence:12',
    '--epoch',
    '2020-01-01T00:00:00Z',
    cid.toString(),
  ]);
  assert.equal(jsonBody<{ timestamp: string }>(c.stdout).timestamp, '2021-06-01T00:00:00.000Z');
  assert.equal(jsonBody<{ fields: Record<string, number> }>(c.stdout).fields.worker, 9);
});

test('GIVEN a preset or a field list THEN layout prints fields, end of life, node count and IDs/s per node', async () => {
  const r = await runFlurry(['layout', 'twitter']);
  assert.equal(r.code, 0, r.stderr);
  for (const s of ['timestamp', 'datacenter', 'worker', 'sequence', 'End of life', '1,024', '4,096,000'])
    assert.ok(r.stdout.includes(s), `${s} in ${r.stdout}`);
  const j = await inProcess([
    'layout',
    '--fields',
    'timestamp:39,sequence:8,machine:16',
    '--epoch',
    '2014-09-01T00:00:00Z',
    '--unit',
    '10ms',
    '--json',
  ]);
  const info = jsonBody<{ nodeCount: number; unit: string }>(j.stdout);
  assert.equal(info.nodeCount, 65536);
  assert.equal(info.unit, '10ms');
  const s = await inProcess(['layout', 'discord']);
  assert.match(s.stdout, /Signed 64-bit until/);
});

test('GIVEN key new and public encode/decode THEN public IDs round-trip and a typo is a coded exit 2', async () => {
  const key = await runFlurry(['key', 'new', '--id', 'B']);
  assert.equal(key.code, 0, key.stderr);
  const k = key.stdout.trim();
  assert.match(k, /^fk1_B_/);
  const ids = ['1859214170478923776', '1859214170478923777'];
  const enc = await runFlurry(['public', 'encode', ...ids], { FLURRY_PUBLIC_KEY: k });
  assert.equal(enc.code, 0, enc.stderr);
  const pubs = enc.stdout.trim().split('\n');
  assert.equal(pubs.length, 2);
  assert.notEqual(pubs[0], pubs[1]);
  for (const p of pubs)
    assert.match(p, /^B[0-9A-Za-z]{15}$/, 'key ID, 11 characters for the 63-bit ID, 3 for the tag, check character');
  const dec = await inProcess(['public', 'decode', '--key', k, ...pubs]);
  assert.equal(dec.code, 0, dec.stderr);
  assert.deepEqual(dec.stdout.trim().split('\n'), ids);
  const p = pubs[0];
  const typo = p.slice(0, -2) + (p.at(-2) === 'x' ? 'y' : 'x') + p.at(-1);
  coded(await inProcess(['public', 'decode', typo], { FLURRY_PUBLIC_KEY: k }), 'FLURRY_E_PUBLIC_ID_CHECKSUM');
  // The same public ID with another key under the same key ID B: refused, never a wrong ID.
  const other = (await inProcess(['key', 'new', '--id', 'B'])).stdout.trim();
  const wrong = await inProcess(['public', 'decode', p], { FLURRY_PUBLIC_KEY: other });
  coded(wrong, 'FLURRY_E_PUBLIC_ID_WRONG_KEY');
  assert.match(wrong.stderr, /decoded with a key that did not issue it.*Check the key for key ID "B"/);
  assert.equal(wrong.stdout, '');
  // The known-answer vector of docs/public-ids.md (the fixed key K, 64-bit discord layout).
  const kat = await inProcess([
    'public',
    'encode',
    '1859214170478923776',
    '--key',
    'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8',
    '--layout',
    'discord',
  ]);
  assert.equal(kat.stdout, 'KCmUJF4zBACyLOHw\n', kat.stderr);
  coded(await inProcess(['public', 'encode', '1'], { FLURRY_PUBLIC_KEY: 'fk1_nope' }), 'FLURRY_E_PUBLIC_KEY_INVALID');
  coded(await inProcess(['public', 'encode', '1'], { FLURRY_PUBLIC_KEY: '' }), 'FLURRY_E_PUBLIC_KEY_INVALID');
});

test('GIVEN bad input to each command THEN exit code 2 with the coded message on stderr', async () => {
  const cases: Array<[string[], string]> = [
    [['nxet'], 'FLURRY_E_USAGE'],
    [['next', '-n', '0'], 'FLURRY_E_USAGE'],
    [['next', '-n', '-1'], 'FLURRY_E_USAGE'],
    [['next', '-n', 'abc'], 'FLURRY_E_USAGE'],
    [['next', '--format', 'base7'], 'FLURRY_E_USAGE'],
    [['next', '--layout', 'nope'], 'FLURRY_E_LAYOUT_UNKNOWN_PRESET'],
    [['next', '--fields', 'timestamp:37,server:20,sequence:16'], 'FLURRY_E_LAYOUT_TOO_WIDE'],
    [['next', '--node', 'worker=32'], 'FLURRY_E_NODE_OUT_OF_RANGE'],
    [['next', '--node', 'planet=1'], 'FLURRY_E_NODE_OUT_OF_RANGE'],
    [['next', '--registry', 'gopher://x'], 'FLURRY_E_REGISTRY_URL'],
    [['decode'], 'FLURRY_E_USAGE'],
    [['decode', '-1'], 'FLURRY_E_ID_NEGATIVE'],
    [['decode', '18446744073709551616'], 'FLURRY_E_ID_TOO_WIDE'],
    [['decode', '12ab'], 'FLURRY_E_ID_MALFORMED'],
    [['decode', '--format', 'hex', 'xyz'], 'FLURRY_E_ID_MALFORMED'],
    [['decode', '--layout', 'js53', '9007199254740992'], 'FLURRY_E_ID_TOO_WIDE'],
    [['layout', '--unit', '7ms', '--fields', 'timestamp:41,sequence:12'], 'FLURRY_E_LAYOUT_UNIT'],
    [['layout', '--epoch', '2999-01-01T00:00:00Z', '--fields', 'timestamp:41,sequence:12'], 'FLURRY_E_LAYOUT_EPOCH'],
    [['layout', 'twitter', 'leaf'], 'FLURRY_E_USAGE'],
    [['key', 'old'], 'FLURRY_E_USAGE'],
    [['public', 'encode', '1'], 'FLURRY_E_PUBLIC_KEY_INVALID'],
    [['serve', '--port', 'abc'], 'FLURRY_E_CONFIG'],
    [['serve', '--bogus'], 'FLURRY_E_USAGE'],
  ];
  for (const [argv, code] of cases) coded(await inProcess(argv, { FLURRY_PUBLIC_KEY: '', FLURRY_REGISTRY: '' }), code);
  // The same through the real process: exit status 2 and the coded line on stderr.
  const [serve, decode, unknown] = await Promise.all([
    runFlurry(['serve', '--port', 'abc'], { FLURRY_ALLOW_ROOT: '1' }),
    runFlurry(['decode', '-1']),
    runFlurry(['nxet']),
  ]);
  coded(serve, 'FLURRY_E_CONFIG');
  assert.match(
    serve.stderr,
    /invalid setting port: "abc" \(from --port\) is not allowed; allowed: an integer from 0 to 65535/,
  );
  coded(decode, 'FLURRY_E_ID_NEGATIVE');
  coded(unknown, 'FLURRY_E_USAGE');
});

test('GIVEN --help on each command THEN usage is printed and the exit code is 0', async () => {
  for (const argv of [
    ['--help'],
    ['next', '--help'],
    ['decode', '--help'],
    ['layout', '--help'],
    ['key', '--help'],
    ['public', '--help'],
    ['serve', '--help'],
  ]) {
    const r = await inProcess(argv);
    assert.equal(r.code, 0, `${argv.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /Usage: flurry/);
  }
  // Every command the CLI runs is listed in flurry --help.
  const main = await inProcess(['--help']);
  for (const c of [
    'serve',
    'next',
    'decode',
    'layout',
    'key',
    'public',
    'range',
    'sql',
    'sequences',
    'registry',
    'status',
  ])
    assert.match(main.stdout, new RegExp(`^  ${c} `, 'm'), `flurry --help lists ${c}`);
  const serve = await runFlurry(['serve', '--help']);
  assert.equal(serve.code, 0);
  assert.match(serve.stdout, /--thrift-port VALUE/);
  assert.match(serve.stdout, /Default: 127\.0\.0\.1/);
  const none = await inProcess([]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Usage: flurry/);
});

test('GIVEN the engine client libraries are not installed (optional peer dependencies) THEN the CLI still loads and an engine registry URL fails with FLURRY_E_REGISTRY_CLIENT_MISSING naming the package to install', async () => {
  // A resolve hook (ES modules) and a patched CommonJS resolver (the bin's bundles require() the clients) make
  // etcd3, ioredis and node-zookeeper-client unresolvable in the child process, as on a machine where only
  // @flurry/server was installed. A static import or require of any of them anywhere in the CLI would crash the
  // process before the coded error.
  const dir = tempDir('no-clients');
  try {
    writeFileSync(
      path.join(dir, 'hook.mjs'),
      `export async function resolve(spec, ctx, next) {
  if (['ioredis', 'etcd3', 'node-zookeeper-client'].includes(spec)) {
    const e = new Error("Cannot find package '" + spec + "' imported from " + ctx.parentURL); e.code = 'ERR_MODULE_NOT_FOUND'; throw e;
  }
  return next(spec, ctx);
}
`,
    );
    writeFileSync(
      path.join(dir, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n",
    );
    writeFileSync(
      path.join(dir, 'hide.cjs'),
      `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (['ioredis', 'etcd3', 'node-zookeeper-client'].includes(request)) {
    const e = new Error("Cannot find module '" + request + "'"); e.code = 'MODULE_NOT_FOUND'; throw e;
  }
  return resolve.call(this, request, ...rest);
};
`,
    );
    const env = {
      NODE_OPTIONS: `--require=${path.join(dir, 'hide.cjs')} --import=${path.join(dir, 'register.mjs')}`,
      FLURRY_ALLOW_ROOT: '1',
    };
    const cases: Array<[string[], string]> = [
      [['next', '--registry', 'redis://:pw@127.0.0.1:1/0'], 'ioredis@6'],
      [['next', '--registry', 'etcd://127.0.0.1:1/flurry'], 'etcd3@1'],
      [['next', '--registry', 'zookeeper://127.0.0.1:1/flurry'], 'node-zookeeper-client@1'],
      [['serve', '--port', '0', '--registry', 'zookeeper+leaf://127.0.0.1:1/flurry'], 'node-zookeeper-client@1'],
    ];
    const results = await Promise.all(cases.map(([argv]) => runFlurry(argv, env)));
    results.forEach((r, i) => {
      const [argv, install] = cases[i];
      assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`); // a missing package: restarting will not help
      assert.match(r.stderr, /^flurry: FLURRY_E_REGISTRY_CLIENT_MISSING: /m, r.stderr);
      assert.ok(r.stderr.includes(`run npm install ${install}\n`), `${argv.join(' ')}: ${r.stderr}`);
      assert.ok(!r.stderr.includes(':pw@'), r.stderr);
      assert.ok(!/\n\s+at /.test(r.stderr), `no stack trace: ${r.stderr}`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN a misspelt FLURRY_* variable THEN flurry serve warns on stderr naming the closest setting, and still starts or fails as before', async () => {
  const help = await runFlurry(['serve', '--help'], { FLURRY_REGSITRY: 'redis://127.0.0.1:6379/0' });
  assert.equal(help.code, 0, help.stderr);
  assert.match(
    help.stderr,
    /^flurry: warning: FLURRY_REGSITRY is not a flurry setting and is ignored; did you mean FLURRY_REGISTRY\?$/m,
  );
  const bad = await runFlurry(['serve', '--port', 'abc'], { FLURRY_LOG_LEVL: 'debug' });
  assert.equal(bad.code, 2, bad.stderr);
  const lines = bad.stderr.trim().split('\n');
  assert.equal(
    lines[0],
    'flurry: warning: FLURRY_LOG_LEVL is not a flurry setting and is ignored; did you mean FLURRY_LOG_LEVEL?',
  );
  assert.match(lines[1], /^flurry: FLURRY_E_CONFIG: invalid setting port/);
  const clean = await runFlurry(['serve', '--help'], { FLURRY_REGISTRY: 'file:', FLURRY_CONFIG: '' });
  assert.doesNotMatch(clean.stderr, /warning/);
});

test('GIVEN a misspelt FLURRY_* variable THEN flurry next and flurry public warn on stderr too, and still do their work', async () => {
  const dir = tempDir('env');
  try {
    const next = await runFlurry(['next', '-n', '2', '--registry', `file:${dir}`], { FLURRY_CLUSTR: 'orders' });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout.trim().split('\n').length, 2, 'two IDs on stdout, the warning on stderr only');
    assert.match(
      next.stderr,
      /^flurry: warning: FLURRY_CLUSTR is not a flurry setting and is ignored; did you mean FLURRY_CLUSTER\?$/m,
    );
    const key = (await runFlurry(['key', 'new'], {})).stdout.trim();
    const pub = await runFlurry(['public', 'encode', '1859214170478923776'], {
      FLURRY_PUBLIC_KEY: key,
      FLURRY_PUBLC_KEY_FILE: '/nonexistent',
    });
    assert.equal(pub.code, 0, pub.stderr);
    assert.match(
      pub.stderr,
      /FLURRY_PUBLC_KEY_FILE is not a flurry setting and is ignored; did you mean FLURRY_PUBLIC_KEY_FILE\?/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
