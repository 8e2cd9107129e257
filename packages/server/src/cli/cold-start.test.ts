import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '../test-support.js';

const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.js');
const SERVE_ONLY =
  /\/node_modules\/(pino|prom-client|thrift)\/|\/server\/dist\/(service|metrics|openapi|container)\.js|\/server\/dist\/(http|thrift)\//;

/** Every module URL a `flurry` run resolves, recorded by a resolve hook in the child. */
function modulesLoaded(dir: string, argv: string[], env: Record<string, string> = {}): string[] {
  const log = path.join(dir, `modules-${argv[0]}.txt`);
  const hooks = path.join(dir, 'hooks.mjs');
  const register = path.join(dir, 'register.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`,
  );
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, bin, ...argv], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...env },
    timeout: 60_000,
  });
  assert.equal(r.status, 0, `${argv.join(' ')}: ${r.stderr}`);
  return readFileSync(log, 'utf8').trim().split('\n');
}

test('GIVEN the offline commands THEN none loads the service, pino, prom-client or thrift; serve --help does', () => {
  const dir = tempDir('cold');
  try {
    const key = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
    const runs: string[][] = [
      ['layout', 'leaf'],
      ['decode', '1859214170478923776'],
      ['key', 'new'],
      ['public', 'encode', '1859214170478923776', '--key', key],
      ['next', '-n', '1', '--node', 'datacenter=0', '--node', 'worker=3', '--registry', `file:${dir}`],
    ];
    for (const argv of runs) {
      const loaded = modulesLoaded(dir, argv);
      assert.ok(
        loaded.some((u) => u.includes(`/cli/commands/${argv[0]}.js`)),
        `${argv[0]} ran its command module`,
      );
      const extra = loaded.filter((u) => SERVE_ONLY.test(u));
      assert.deepEqual(extra, [], `flurry ${argv[0]} loads only what it uses`);
    }
    // The check can fail: serve does load them.
    const serve = modulesLoaded(dir, ['serve', '--help']);
    assert.ok(
      serve.some((u) => SERVE_ONLY.test(u)),
      'serve loads the service',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
