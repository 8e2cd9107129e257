import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tempDir } from '../test-support.js';
import { runCli } from './main.js';

/** Runs the CLI in this process with captured output (the same code path as the bin). */
async function inProcess(
  argv: string[],
  env: Record<string, string> = {},
  now?: () => number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  err.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await runCli({ argv, env: { TZ: 'UTC', ...env }, stdout: out, stderr: err, ...(now ? { now } : {}) });
  return { code, stdout, stderr };
}

function codeOf(stderr: string): string {
  const m = /^flurry: (FLURRY_E_[A-Z_]+): /.exec(stderr);
  assert.ok(m, `a coded line: ${stderr}`);
  return m[1];
}

test('GIVEN the same mistake in serve and in next or layout THEN both exit 2 with the same code and no code inside the message', async () => {
  const dir = tempDir('messages');
  try {
    const env = { FLURRY_REGISTRY: `file:${dir}`, FLURRY_ALLOW_ROOT: '1' };
    const mistakes: string[][] = [
      ['--layout', 'leaf', '--fields', 'timestamp:41,sequence:12'],
      ['--layout', 'nope'],
      ['--fields', 'timestamp:37,server:20,sequence:16'],
      ['--fields', 'timestamp:41,worker:0,sequence:12'],
      ['--fields', 'timestamp:41,sequence:12', '--unit', '5ms'],
      ['--fields', 'timestamp:41,sequence:12', '--epoch', '2999-01-01T00:00:00Z'],
      ['--epoch', '1960-01-01'],
      ['--node', 'worker=99'],
      ['--node', 'planet=1'],
      ['--registry', 'gopher://127.0.0.1:1'],
      ['--cluster', 'bad cluster!'],
    ];
    for (const m of mistakes) {
      const serve = await inProcess(['serve', ...m], env);
      const next = await inProcess(['next', ...m], env);
      assert.equal(serve.code, 2, `serve ${m.join(' ')}: ${serve.stderr}`);
      assert.equal(next.code, 2, `next ${m.join(' ')}: ${next.stderr}`);
      assert.equal(
        codeOf(serve.stderr),
        codeOf(next.stderr),
        `serve and next ${m.join(' ')}:\n${serve.stderr}${next.stderr}`,
      );
      for (const r of [serve, next]) {
        assert.equal(r.stderr.match(/FLURRY_E_/g)?.length, 1, `one code, none nested: ${r.stderr}`);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      }
      if (!m.includes('--node') && !m.includes('--registry') && !m.includes('--cluster')) {
        const layout = await inProcess(['layout', ...m]);
        assert.equal(codeOf(layout.stderr), codeOf(serve.stderr), `serve and layout ${m.join(' ')}: ${layout.stderr}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN serve --lease-renew-ms the TTL does not allow THEN the message states the range in serve terms, not the registry option', async () => {
  const r = await inProcess(['serve', '--lease-ttl-ms', '1000', '--lease-renew-ms', '900'], { FLURRY_ALLOW_ROOT: '1' });
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^flurry: FLURRY_E_CONFIG: invalid setting leaseRenewMs: "900" \(from --lease-renew-ms\): with these lease settings it must be from 10 to 400 ms; allowed: an integer from 10 to \(TTL - margin\) \/ 2 \(ms\)\. /,
  );
  assert.doesNotMatch(r.stderr, /REGISTRY_OPTION|renewIntervalMs/);
});

test('GIVEN an epoch before 1970 THEN every command says it is a valid date but too early, with the allowed range', async () => {
  for (const argv of [
    ['layout', '--epoch', '1960-01-01'],
    ['decode', '1', '--epoch', '1960-01-01'],
    ['serve', '--epoch', '1960-01-01'],
  ]) {
    const r = await inProcess(argv, { FLURRY_ALLOW_ROOT: '1' });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(codeOf(r.stderr), 'FLURRY_E_LAYOUT_EPOCH');
    assert.match(r.stderr, /valid date but before 1970/);
    assert.match(r.stderr, /from 1970-01-01T00:00:00Z to now/);
    assert.doesNotMatch(r.stderr, /not a valid date/);
  }
});

test('GIVEN public decode without any key THEN the message names --key, FLURRY_PUBLIC_KEY and FLURRY_PUBLIC_KEY_FILE', async () => {
  const r = await inProcess(['public', 'decode', '2bX3abcdefghijkl'], { FLURRY_PUBLIC_KEY: '' });
  assert.equal(r.code, 2);
  assert.equal(codeOf(r.stderr), 'FLURRY_E_PUBLIC_KEY_INVALID');
  assert.match(r.stderr, /--key/);
  assert.match(r.stderr, /FLURRY_PUBLIC_KEY\b/);
  assert.match(r.stderr, /FLURRY_PUBLIC_KEY_FILE/);
});

test('GIVEN a layout whose end of life is past THEN layout warns loudly, and next and serve refuse it before leasing', async () => {
  const dead = ['--fields', 'timestamp:4,worker:5,sequence:1', '--epoch', '2025-01-01T00:00:00Z'];
  const shown = await inProcess(['layout', ...dead]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(
    shown.stdout,
    /End of life: +2025-01-01T00:00:00\.016Z +\*\* ALREADY PAST: this layout cannot issue IDs \*\*/,
  );
  assert.match(
    shown.stderr,
    /^flurry: warning: the end of life of layout custom .* is already past: .*2025-01-01T00:00:00\.016Z/,
  );
  const json = await inProcess(['layout', '--json', ...dead]);
  assert.equal(
    (JSON.parse(json.stdout) as { expiresAt: string }).expiresAt,
    '2025-01-01T00:00:00.016Z',
    'stdout stays JSON',
  );
  assert.match(json.stderr, /already past/);
  // With the clock inside the layout's 16 ms of life it is not past, only (much) less than a year from it.
  const alive = await inProcess(['layout', ...dead], {}, () => Date.UTC(2025, 0, 1) + 5);
  assert.doesNotMatch(alive.stderr, /already past/);
  assert.match(alive.stderr, /^flurry: warning: layout custom .* in 0 s \(less than a year\)/);
  assert.doesNotMatch(alive.stdout, /ALREADY PAST/);

  const dir = tempDir('expired');
  try {
    const env = { FLURRY_REGISTRY: `file:${dir}`, FLURRY_ALLOW_ROOT: '1' };
    for (const command of ['next', 'serve']) {
      const r = await inProcess([command, ...dead], env);
      assert.equal(r.code, 2, `${command}: ${r.stderr}`);
      assert.equal(codeOf(r.stderr), 'FLURRY_E_LAYOUT_EXPIRED', r.stderr);
      assert.match(
        r.stderr,
        /already past: its 4-bit timestamp field in 1ms units ran out at 2025-01-01T00:00:00\.016Z/,
      );
      assert.equal(r.stdout, '');
    }
    assert.deepEqual(readdirSync(dir), [], 'nothing was leased');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN each preset THEN flurry layout prints a "Signed 64-bit until:" line and --json carries maxTick, as docs/layouts.md says', async () => {
  const expected: Record<string, string> = {
    twitter: 'always (63 bits)',
    leaf: 'always (63 bits)',
    discord: '2084-09-06T15:47:35.552Z',
    sonyflake: 'always (63 bits)',
    instagram: '2046-06-27T17:00:49.497Z',
    js53: 'always (53 bits)',
  };
  for (const [preset, until] of Object.entries(expected)) {
    const r = await inProcess(['layout', preset]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(`Signed 64-bit until:  ${until}\n`), `${preset}: ${r.stdout}`);
    const info = JSON.parse((await inProcess(['layout', preset, '--json'])).stdout) as {
      maxTick: number;
      fields: Array<{ name: string; bits: number }>;
    };
    const ts = info.fields.find((f) => f.name === 'timestamp');
    assert.equal(info.maxTick, 2 ** (ts?.bits ?? 0) - 1, preset);
  }
});
