// Small helpers shared by the torture scenarios: paths, bounded sleeps and polls, temp dirs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Repository root.
 * @example path.join(root, 'docs');
 */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * Built package entry points (the suite has no build step of its own).
 * @example const { Layout } = await import(dist.core);
 */
export const dist = {
  core: path.join(root, 'packages/core/dist/index.js'),
  coordination: path.join(root, 'packages/coordination/dist/index.js'),
  testing: path.join(root, 'packages/coordination/dist/testing/index.js'),
  holder: path.join(root, 'packages/coordination/dist/conformance/holder.js'),
  zookeeperTiming: path.join(root, 'packages/coordination/dist/drivers/zookeeper-timing.js'),
  serverCli: path.join(root, 'packages/server/dist/cli/main.js'),
  client: path.join(root, 'packages/client/dist/index.js'),
};
/**
 * Path of a torture child script.
 * @example childScript('load.mjs');
 */
export const childScript = (name) => path.join(root, 'torture', 'children', name);

/**
 * Resolves after `ms` milliseconds.
 * @example await sleep(100);
 */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `fn` every `everyMs` until it returns truthy or `timeoutMs` passes (returns the last value).
 * @example await pollUntil(async () => (await get('/readyz')) === 200, 30_000, 100);
 */
export async function pollUntil(fn, timeoutMs, everyMs = 25) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v || performance.now() >= until) return v;
    await sleep(everyMs);
  }
}

const made = new Set();
/**
 * A fresh temporary directory, removed by `removeTempDirs()` (called at exit).
 * @example const dir = tempDir('fleet'); // /tmp/flurry-torture-fleet-XXXX
 */
export function tempDir(prefix) {
  const d = mkdtempSync(path.join(tmpdir(), `flurry-torture-${prefix}-`));
  made.add(d);
  return d;
}
/**
 * Removes one temporary directory now (big ID files), unless TORTURE_KEEP is set.
 * @example removeTempDir(dir);
 */
export function removeTempDir(d) {
  if (process.env.TORTURE_KEEP || !made.has(d)) return;
  try {
    rmSync(d, { recursive: true, force: true });
  } catch {
    /* best effort */
  }
  made.delete(d);
}

/**
 * Removes every temporary directory made by `tempDir` (kept when TORTURE_KEEP is set).
 * @example process.on('exit', removeTempDirs);
 */
export function removeTempDirs() {
  if (process.env.TORTURE_KEEP) {
    if (made.size) process.stderr.write(`torture: TORTURE_KEEP set, keeping ${[...made].join(' ')}\n`);
    made.clear();
    return;
  }
  for (const d of made) {
    try {
      rmSync(d, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
  made.clear();
}
process.on('exit', removeTempDirs);

/**
 * The error of a bounded run that took longer than its bound.
 * @example try { await within(10, 'x', () => sleep(50), TimeLimit); } catch (e) { e instanceof TimeLimit; }
 */
export class TimeLimit extends Error {}

/**
 * Runs `fn` with a time bound; rejects with `what` (a `TimeLimit`, or an `ErrorClass`) when it
 * takes longer.
 * @example await within(60_000, 'scenario fleet', () => run(ctx));
 */
export async function within(ms, what, fn, ErrorClass = TimeLimit) {
  let timer;
  try {
    return await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new ErrorClass(`${what}: did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

let seq = 0;
/**
 * A cluster name of its own for each use, so scenarios never see each other's leases.
 * @example clusterName('fleet'); // 'fleet-1234-lq3k2-1'
 */
export function clusterName(prefix) {
  seq += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${seq}`.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 64);
}
