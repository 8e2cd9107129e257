import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, ManualClock } from '@flurry/core';
import { createClient } from './client.js';
import { resolveOptions, type ClientOptions } from './options.js';

const ok = ['http://127.0.0.1:8080'];

test('GIVEN only servers THEN the defaults are 10,000 IDs, low water 3,000, 5 s max age, adaptive, 2 s timeout, round-robin', () => {
  const s = resolveOptions({ servers: ok });
  assert.deepEqual(s.prefetch, { size: 10_000, lowWater: 3_000, maxAgeMs: 5_000, adaptive: true, maxBatch: 10_000 });
  assert.equal(s.timeoutMs, 2_000);
  assert.equal(s.strategy, 'round-robin');
  assert.deepEqual(s.backoff, { initialMs: 100, maxMs: 10_000 });
  assert.equal(resolveOptions({ servers: ok, prefetch: { size: 100 } }).prefetch.lowWater, 30);
  assert.equal(resolveOptions({ servers: ok, prefetch: { size: 1 } }).prefetch.lowWater, 0);
  assert.equal(resolveOptions({ servers: ok, prefetch: { maxAgeMs: Infinity } }).prefetch.maxAgeMs, Infinity);
  assert.equal(resolveOptions({ servers: ['https://ids.example.com/flurry/'] }).servers[0].pathname, '/flurry/');
});

test('GIVEN servers as one URL string THEN it is a list of that one URL; an array keeps working (issue 24)', () => {
  const one = resolveOptions({ servers: 'http://127.0.0.1:8080' });
  assert.deepEqual(
    one.servers.map((u) => u.href),
    ['http://127.0.0.1:8080/'],
  );
  assert.deepEqual(
    resolveOptions({ servers: ['http://10.0.0.1:8080', 'https://ids.example.com/flurry'] }).servers.map((u) => u.href),
    ['http://10.0.0.1:8080/', 'https://ids.example.com/flurry'],
  );
  const client = createClient({ servers: 'https://ids.example.com/flurry/' });
  assert.equal(client.stats().servers[0].url, 'https://ids.example.com/flurry');
  void client.close();
});

test('GIVEN bad configuration THEN createClient throws FLURRY_E_CLIENT_CONFIG naming the option', () => {
  const bad: Array<[unknown, RegExp]> = [
    [undefined, /options object/],
    [{}, /servers must hold at least one URL/],
    [{ servers: [] }, /servers must hold at least one URL/],
    [{ servers: '' }, /^servers "" is not a URL/],
    [{ servers: 'ftp://127.0.0.1' }, /^servers "ftp:\/\/127.0.0.1" must use http: or https:/],
    [{ servers: ['127.0.0.1:8080'] }, /servers\[0\].*http: or https:|servers\[0\].*not a URL/],
    [{ servers: ['not a url'] }, /servers\[0\] "not a url" is not a URL/],
    [{ servers: ['ftp://127.0.0.1'] }, /http: or https:/],
    [{ servers: ['http://127.0.0.1:8080/?x=1'] }, /query/],
    [{ servers: ['http://u:p@127.0.0.1:8080'] }, /credentials/],
    [{ servers: [ok[0], ok[0] + '/'] }, /listed twice/],
    [{ servers: [42] }, /servers\[0\] must be a URL string/],
    [{ servers: ok, prefetch: { size: -1 } }, /prefetch.size must be an integer from 1 to 1000000; got -1/],
    [{ servers: ok, prefetch: { size: 0 } }, /prefetch.size/],
    [{ servers: ok, prefetch: { size: 1.5 } }, /prefetch.size/],
    [{ servers: ok, prefetch: { lowWater: -1 } }, /prefetch.lowWater/],
    [
      { servers: ok, prefetch: { size: 100, lowWater: 100 } },
      /prefetch.lowWater must be an integer from 0 to prefetch.size − 1 \(99\); got 100/,
    ],
    [{ servers: ok, prefetch: { size: 100, lowWater: 500 } }, /prefetch.lowWater/],
    [{ servers: ok, prefetch: { maxAgeMs: 0 } }, /prefetch.maxAgeMs/],
    [{ servers: ok, prefetch: { maxAgeMs: -5 } }, /prefetch.maxAgeMs/],
    [{ servers: ok, prefetch: { maxAgeMs: NaN } }, /prefetch.maxAgeMs/],
    [{ servers: ok, prefetch: { maxBatch: 10_001 } }, /prefetch.maxBatch/],
    [{ servers: ok, prefetch: { adaptive: 'yes' } }, /prefetch.adaptive/],
    [{ servers: ok, prefetch: { sise: 5 } }, /options\.prefetch has the unknown option "sise"; did you mean "size"\?/],
    [{ servers: ok, backoff: { maxMS: 5 } }, /options\.backoff has the unknown option "maxMS"; did you mean "maxMs"\?/],
    [{ servers: ok, timeoutMs: 0 }, /timeoutMs/],
    [{ servers: ok, timeoutMs: -100 }, /timeoutMs/],
    [{ servers: ok, strategy: 'random' }, /strategy must be "round-robin" or "least-latency"/],
    [{ servers: ok, token: '' }, /token/],
    [{ servers: ok, token: 'with space' }, /token/],
    [{ servers: ok, token: 'a\r\nX-Evil: 1' }, /token/],
    [{ servers: ok, backoff: { initialMs: 500, maxMs: 100 } }, /backoff.maxMs/],
    [{ servers: ok, clock: {} }, /clock/],
    [{ servers: ok, server: ok }, /^createClient options has the unknown option "server"; did you mean "servers"\?/],
  ];
  for (const [opts, msg] of bad) {
    assert.throws(
      () => createClient(opts as ClientOptions),
      (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_CLIENT_CONFIG' && msg.test(e.message),
      JSON.stringify(opts),
    );
  }
});

test('GIVEN a valid configuration THEN createClient sends nothing and close() is idempotent; calls after close reject with FLURRY_E_CLIENT_CLOSED', async () => {
  // Port 9 (discard) on loopback: nothing listens; the client must not even try before the first call.
  const client = createClient({ servers: ['http://127.0.0.1:9'], clock: new ManualClock() });
  assert.equal(client.stats().requests, 0);
  await client.close();
  await client.close();
  for (const p of [client.next(), client.nextString(), client.batch(3), client.decode(1n)]) {
    await assert.rejects(p, (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_CLIENT_CLOSED');
  }
  assert.equal(client.tryNext(), undefined);
});

test('GIVEN docs/client.md THEN its option table gives the bounds the code enforces', async () => {
  const { readFileSync } = await import('node:fs');
  const path = (await import('node:path')).default;
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
  const rows = readFileSync(path.join(root, 'docs', 'client.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  const row = (name: string): string =>
    rows.find((l) => l.startsWith(`| \`${name}\` |`)) ?? assert.fail(`no row for ${name}`);
  const bounds = (o: ClientOptions): { min: number; max: number } => {
    try {
      resolveOptions(o);
    } catch (e) {
      assert.ok(e instanceof FlurryError);
      return { min: e.details.min as number, max: e.details.max as number };
    }
    return assert.fail('accepted');
  };
  const n = (x: number): string => x.toLocaleString('en-US');
  for (const [name, o] of [
    ['timeoutMs', { servers: ok, timeoutMs: 0 }],
    ['prefetch.size', { servers: ok, prefetch: { size: 0 } }],
    ['prefetch.maxBatch', { servers: ok, prefetch: { maxBatch: 0 } }],
  ] as const) {
    const b = bounds(o);
    assert.ok(
      row(name).includes(`| ${n(b.min)} – ${n(b.max)} |`),
      `${name}: ${n(b.min)} – ${n(b.max)} in ${row(name)}`,
    );
  }
  const initial = bounds({ servers: ok, backoff: { initialMs: 0 } });
  const max = bounds({ servers: ok, backoff: { maxMs: 0 } });
  assert.ok(row('backoff').includes(`\`initialMs\` ${n(initial.min)} – ${n(initial.max)}`), row('backoff'));
  assert.ok(row('backoff').includes(`\`maxMs\` \`initialMs\` – ${n(max.max)}`), row('backoff'));
  assert.ok(row('backoff').includes('maxMs: max(10_000, initialMs)'), row('backoff'));
  assert.equal(resolveOptions({ servers: ok, backoff: { initialMs: 20_000 } }).backoff.maxMs, 20_000);
});
