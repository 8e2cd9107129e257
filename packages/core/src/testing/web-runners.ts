/**
 * Runners for the shared core suite where `@flurry/core` is bundled rather than loaded from `dist`: Cloudflare's
 * workerd (from npm) and Chromium (Debian's, through playwright-core). esbuild bundles the suite with the
 * `default` condition, so `#platform` and `#claims` resolve to `platform/web.ts` and `generator/memory-claims.ts`;
 * the bundle may import no `node:` module (esbuild fails on one). Test-only (not in the package's files).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SuiteResult } from './shared-suite.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** What the workerd test's frozen-clock request reports for one generator. */
export interface FrozenRun {
  /** The generator's options besides layout and node. */
  readonly options: Record<string, unknown>;
  /** IDs issued before the end or the error. */
  readonly count: number;
  /** Whether they are strictly increasing (hence unique). */
  readonly increasing: boolean;
  /** Distinct IDs. */
  readonly distinct: number;
  /** The coded error, or ''. */
  readonly code: string;
  /** Whether the system clock's wall and monotonic time read the request's start after the run (time frozen). */
  readonly frozen: boolean;
  /** Whether `Date.now()` and `performance.now()` work again after the request's run. */
  readonly restored: boolean;
  /** `systemClock.nonBlocking` there. */
  readonly nonBlocking: boolean | null;
}

/** The worker: `/suite` runs the shared suite, `/frozen` issues 10,000 IDs on the system clock, frozen within the request. */
const WORKER = `
import { runSharedSuite } from './shared-suite.js';
import { Generator } from '../generator/generator.js';
import { systemClock } from '../clock.js';

// As the Workers runtime in production does (Date.now() and performance.now() stand still between I/O; the
// workerd from npm lets them move), time is frozen for the request's run: both read the request's start.
function frozenRun(worker, options) {
  const realNow = Date.now;
  const t0 = Date.now();
  const p0 = performance.now();
  Date.now = () => t0;
  Object.defineProperty(performance, 'now', { value: () => p0, configurable: true, writable: true });
  const ids = [];
  let code = '';
  let frozen = false;
  let nonBlocking = null;
  try {
    const gen = new Generator({ layout: 'twitter', node: { datacenter: 1, worker }, ...options });
    nonBlocking = systemClock.nonBlocking ?? null;
    try {
      for (let i = 0; i < 10000; i++) ids.push(gen.next());
    } catch (e) {
      code = e && e.code ? e.code : String(e);
    } finally {
      gen.close();
    }
    frozen = systemClock.now() === t0 && systemClock.monotonic() === p0;
  } finally {
    Date.now = realNow;
    delete performance.now;
  }
  let increasing = true;
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) increasing = false;
  return { options, count: ids.length, increasing, distinct: new Set(ids).size, code, frozen, nonBlocking, restored: typeof performance.now() === 'number' && Date.now() >= t0 };
}

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/suite') return Response.json(await runSharedSuite());
    if (pathname === '/frozen')
      return Response.json([frozenRun(11, {}), frozenRun(12, { maxBorrowMs: 1 }), frozenRun(13, { onExhausted: 'borrow', maxBorrowMs: 0 })]);
    return new Response('not found', { status: 404 });
  },
};
`;

/** The suite (or the worker) bundled for a runtime without Node's modules. */
async function bundle(contents: string, format: 'esm' | 'iife', platform: 'browser' | 'neutral'): Promise<string> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    stdin: { contents, resolveDir: here, sourcefile: 'entry.js', loader: 'js' },
    bundle: true,
    write: false,
    format,
    platform,
    target: 'es2022',
    ...(format === 'iife' ? { globalName: 'flurrySuite' } : {}),
    ...(platform === 'neutral' ? { conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'] } : {}),
    logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Both workers' answers: `plain` (no compatibility flags) and `compat` (`nodejs_compat`). */
export interface WorkerdResults {
  /** The shared suite, per worker. */
  readonly suite: Record<'plain' | 'compat', SuiteResult[]>;
  /** The frozen-clock runs, per worker. */
  readonly frozen: Record<'plain' | 'compat', FrozenRun[]>;
  /** Each frozen request's round trip, ms. */
  readonly frozenMs: Record<'plain' | 'compat', number>;
}

/**
 * Serves the bundled worker with `workerd serve` (two workers: without compatibility flags and with
 * `nodejs_compat`), asks each for `/suite` and `/frozen`, and stops it.
 */
export async function runInWorkerd(bin: string): Promise<WorkerdResults> {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-workerd-'));
  const ports = { plain: await freePort(), compat: await freePort() };
  writeFileSync(path.join(dir, 'worker.js'), await bundle(WORKER, 'esm', 'neutral'));
  writeFileSync(
    path.join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "plain", worker = .plain), (name = "compat", worker = .compat) ],
  sockets = [
    (name = "plain", address = "127.0.0.1:${ports.plain}", http = (), service = "plain"),
    (name = "compat", address = "127.0.0.1:${ports.compat}", http = (), service = "compat"),
  ],
);
const plain :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-09-01",
);
const compat :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = ["nodejs_compat"],
);
`,
  );
  let log = '';
  const child = spawn(bin, ['serve', path.join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const get = async (which: 'plain' | 'compat', route: string): Promise<unknown> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${ports[which]}${route}`);
        const text = await res.text();
        if (!res.ok) throw new Error(`workerd ${which} ${route}: HTTP ${res.status}: ${text}\n${log}`);
        return JSON.parse(text) as unknown;
      } catch (e) {
        if ((e as Error).message.startsWith('workerd')) throw e;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`workerd did not answer ${route} (${(e as Error).message}):\n${log}`, { cause: e });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  try {
    const suite = { plain: [] as SuiteResult[], compat: [] as SuiteResult[] };
    const frozen = { plain: [] as FrozenRun[], compat: [] as FrozenRun[] };
    const frozenMs = { plain: 0, compat: 0 };
    for (const which of ['plain', 'compat'] as const) {
      suite[which] = (await get(which, '/suite')) as SuiteResult[];
      const t0 = performance.now();
      frozen[which] = (await get(which, '/frozen')) as FrozenRun[];
      frozenMs[which] = performance.now() - t0;
    }
    return { suite, frozen, frozenMs };
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Debian's Chromium, as the console's browser tests use it. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Runs the bundled suite in a page of headless Chromium (its main thread: no `Atomics.wait`, no
 * `SharedArrayBuffer`, no Node.js).
 */
export async function runInChromium(): Promise<{ results: SuiteResult[]; userAgent: string }> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`the browser run needs Debian's "chromium" package at ${CHROMIUM_PATH} (apt-get install chromium)`);
  const code = await bundle(`export { runSharedSuite } from './shared-suite.js';`, 'iife', 'browser');
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Root (CI, containers) cannot use chromium's sandbox; the page is our own.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-first-run', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addScriptTag({ content: code });
    const results = await page.evaluate(() =>
      (
        globalThis as unknown as { flurrySuite: { runSharedSuite(): Promise<SuiteResult[]> } }
      ).flurrySuite.runSharedSuite(),
    );
    if (errors.length) throw new Error(`errors in the page: ${errors.join('; ')}`);
    return {
      results,
      userAgent: await page.evaluate(
        () => (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent,
      ),
    };
  } finally {
    await browser.close();
  }
}
