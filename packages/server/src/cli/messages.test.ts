import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tempDir } from '../test-support.js';
import { runCli } from './main.js';

/** Runs the CLI in this process with captured output (the same code path as the bin). */
async function inProcess(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stderr = '';
  out.resume();
  err.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await runCli({ argv, env: { TZ: 'UTC', ...env }, stdout: out, stderr: err });
  return { code, stderr };
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
