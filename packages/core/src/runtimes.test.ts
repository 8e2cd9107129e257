// Issue 29, part 1: @flurry/core unchanged in other runtimes. The shared suite
// (testing/shared-suite.ts) runs here in Node.js, and in Node.js 22, Bun, Deno and Cloudflare's workerd installed from
// npm (pinned, each into its own cache directory outside the repository, once); in Deno also with no
// permissions at all, where /dev/urandom cannot be read (random bytes come from Web Crypto) and os.tmpdir()
// is refused (node claims fall back to memory). workerd and Chromium run a bundle of it (esbuild, the
// `default` condition of `#platform`: Web Crypto, performance.now(), claims in memory, a clock that cannot
// block); in workerd a request also issues 10,000 IDs on the real clock, frozen there within a request.
// See docs/runtimes.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSharedSuite, type SuiteResult } from './testing/shared-suite.js';
import { runInChromium, runInWorkerd, type FrozenRun } from './testing/web-runners.js';

/** The runtimes' npm packages (each ships its binary), pinned. */
const RUNTIMES = { bun: '1.4.5', deno: '2.9.6', workerd: '1.20261117.1', node22: '22.23.3' } as const;
/** The npm package and binary of a runtime whose package is not named after its binary. */
const PACKAGES: Partial<Record<keyof typeof RUNTIMES, { pkg: string; bin: string }>> = {
  node22: { pkg: `node-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`, bin: 'node' },
};
const cacheRoot = process.env.FLURRY_RUNTIMES_DIR ?? path.join(homedir(), '.cache', 'flurry-runtimes');
/** packages/core: its package.json and dist are installed into each run's project. */
const coreRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Installs the pinned runtime from npm into its cache directory when missing; the path of its binary. */
function runtime(name: keyof typeof RUNTIMES): string {
  const cache = path.join(cacheRoot, `${name}-${RUNTIMES[name]}`);
  const { pkg, bin: binName } = PACKAGES[name] ?? { pkg: name, bin: name };
  const bin = path.join(cache, 'node_modules', '.bin', binName);
  if (!existsSync(bin)) {
    mkdirSync(cache, { recursive: true });
    writeFileSync(path.join(cache, 'package.json'), '{"name":"flurry-runtimes","private":true}\n');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `${pkg}@${RUNTIMES[name]}`], {
      cwd: cache,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
    });
  }
  assert.ok(existsSync(bin), `npm installed ${name} into ${cache}`);
  return bin;
}

function runIn(bin: string, args: string[]): Promise<SuiteResult[]> {
  // A project with @flurry/core in its node_modules, as a user installs it (Deno resolves the package's
  // `imports`, `#platform` and `#claims`, only for files of an installed package).
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-runtime-'));
  const installed = path.join(dir, 'node_modules', '@flurry', 'core');
  mkdirSync(installed, { recursive: true });
  cpSync(path.join(coreRoot, 'package.json'), path.join(installed, 'package.json'));
  cpSync(path.join(coreRoot, 'dist'), path.join(installed, 'dist'), {
    recursive: true,
    filter: (f) => !/\.(map|d\.ts)$|\.test\.js$/.test(f),
  });
  writeFileSync(
    path.join(dir, 'package.json'),
    '{"type":"module","private":true,"dependencies":{"@flurry/core":"*"}}\n',
  );
  const entry = path.join(dir, 'entry.mjs');
  writeFileSync(
    entry,
    `import { runSharedSuite } from './node_modules/@flurry/core/dist/testing/shared-suite.js';\n` +
      `console.log(JSON.stringify(await runSharedSuite()));\n`,
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
    ['platform', 'generator', 'layouts', 'codecs', 'publicIds', 'knownAnswers', 'uuids', 'random', 'frozenClock'],
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

test('GIVEN Node.js 22 from npm THEN the shared core suite passes unchanged', async () => {
  const node22 = runtime('node22');
  allPass(await runIn(node22, []), `node ${RUNTIMES.node22}`);
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

test('GIVEN workerd from npm, with and without nodejs_compat THEN the bundled suite passes, and a request issues 10,000 IDs on its frozen clock: unique and increasing, or the coded error', async () => {
  const r = await runInWorkerd(runtime('workerd'));
  for (const which of ['plain', 'compat'] as const) {
    const where = `workerd ${RUNTIMES.workerd}${which === 'compat' ? ' nodejs_compat' : ''}`;
    allPass(r.suite[which], where);
    const [byDefault, borrowOne, noBorrow] = r.frozen[which];
    const clean = (run: FrozenRun) => run.increasing && run.distinct === run.count;
    for (const run of r.frozen[which]) {
      assert.equal(run.frozen, true, `${where}: the system clock stood still in the request`);
      assert.equal(run.nonBlocking, true, `${where}: the system clock cannot block`);
      assert.equal(run.restored, true, `${where}: Date.now() and performance.now() restored after the run`);
      assert.ok(clean(run), `${where} ${JSON.stringify(run.options)}: unique and increasing`);
      assert.ok(
        run.count === 10_000 || run.code === 'FLURRY_E_SEQUENCE_EXHAUSTED',
        `${where}: all, or the coded error`,
      );
    }
    // Default options: the 10,000 borrow 2 ms ahead (within maxBorrowMs 1000) instead of waiting.
    assert.deepEqual([byDefault.count, byDefault.code], [10_000, ''], `${where}: 10,000 IDs by default`);
    // 1 ms of borrowing: 2 ticks of 4,096, then the coded error; none: 1 tick.
    assert.deepEqual(
      [borrowOne.count, borrowOne.code],
      [8192, 'FLURRY_E_SEQUENCE_EXHAUSTED'],
      `${where}: maxBorrowMs 1`,
    );
    assert.deepEqual([noBorrow.count, noBorrow.code], [4096, 'FLURRY_E_SEQUENCE_EXHAUSTED'], `${where}: maxBorrowMs 0`);
    assert.ok(
      r.frozenMs[which] < 2_000,
      `${where}: no spinning (the request took ${Math.round(r.frozenMs[which])} ms)`,
    );
  }
});

test("GIVEN headless Chromium THEN the bundled suite passes on the page's main thread", async () => {
  const { results, userAgent } = await runInChromium();
  allPass(results, userAgent);
});
