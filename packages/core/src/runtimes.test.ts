// Issue 29, part 1 (in part): @flurry/core unchanged in other runtimes. The shared suite
// (runtimes/shared-suite.ts) runs here in Node.js, and in Bun and Deno installed from npm
// (pinned, into a cache outside the repository, once); in Deno also with no permissions at
// all, where /dev/urandom cannot be read (random bytes come from Web Crypto) and os.tmpdir()
// is refused (node claims fall back to memory). See docs/runtimes.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runSharedSuite, type SuiteResult } from './runtimes/shared-suite.js';

/** The runtimes' npm packages (each ships its binary), pinned. */
const RUNTIMES = { bun: '1.4.5', deno: '2.9.6' } as const;
const cache =
  process.env.FLURRY_RUNTIMES_DIR ??
  path.join(homedir(), '.cache', 'flurry-runtimes', Object.entries(RUNTIMES).flat().join('-'));
const suite = pathToFileURL(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'runtimes', 'shared-suite.js'),
).href;

/** Installs the pinned runtimes from npm into the cache when missing; the path of `name`'s binary. */
function runtime(name: keyof typeof RUNTIMES): string {
  const bin = path.join(cache, 'node_modules', '.bin', name);
  if (!existsSync(bin)) {
    mkdirSync(cache, { recursive: true });
    writeFileSync(path.join(cache, 'package.json'), '{"name":"flurry-runtimes","private":true}\n');
    execFileSync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        ...Object.entries(RUNTIMES).map(([n, v]) => `${n}@${v}`),
      ],
      { cwd: cache, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 },
    );
  }
  assert.ok(existsSync(bin), `npm installed ${name} into ${cache}`);
  return bin;
}

function runIn(bin: string, args: string[]): Promise<SuiteResult[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-runtime-'));
  const entry = path.join(dir, 'entry.mjs');
  writeFileSync(
    entry,
    `import { runSharedSuite } from ${JSON.stringify(suite)};\nconsole.log(JSON.stringify(await runSharedSuite()));\n`,
  );
  return new Promise<SuiteResult[]>((resolve, reject) => {
    execFile(
      bin,
      [...args, entry],
      { cwd: dir, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      (err, out, errOut) => {
        rmSync(dir, { recursive: true, force: true });
        if (err) reject(new Error(`${path.basename(bin)} ${args.join(' ')}: ${err.message}\n${errOut}`));
        else resolve(JSON.parse(out.trim().split('\n').pop() ?? '[]') as SuiteResult[]);
      },
    );
  });
}

function allPass(results: SuiteResult[], where: string): void {
  assert.deepEqual(
    results.map((r) => r.name),
    ['generator', 'layouts', 'codecs', 'publicIds', 'random', 'frozenClock'],
    `${where}: every check ran`,
  );
  assert.deepEqual(
    results.filter((r) => !r.ok),
    [],
    `${where}: every check passes`,
  );
}

test('GIVEN Node.js THEN the shared core suite passes', async () => {
  allPass(await runSharedSuite(), `node ${process.version}`);
});

test('GIVEN Bun from npm THEN the shared core suite passes unchanged', async () => {
  allPass(await runIn(runtime('bun'), []), `bun ${RUNTIMES.bun}`);
});

test('GIVEN Deno from npm THEN the shared core suite passes unchanged, with every permission and with none', async () => {
  const deno = runtime('deno');
  allPass(await runIn(deno, ['run', '--allow-all']), `deno ${RUNTIMES.deno} --allow-all`);
  // No permissions: /dev/urandom unreadable (Web Crypto instead), os.tmpdir() refused (claims in memory).
  allPass(await runIn(deno, ['run', '--no-prompt']), `deno ${RUNTIMES.deno} with no permissions`);
});
