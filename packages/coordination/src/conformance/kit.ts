/**
 * What every group of conformance cases shares: the backend, its TTL and margin, a way to
 * spawn holder processes (killed after the suite) and to start many of them at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, type Child, type ChildMessage } from './child.js';
import type { HolderConfig } from './holder.js';
import type { RunningEngine } from '../testing/harness.js';

/** One line a holder printed (`t`: the host's monotonic ms). */
export interface HolderEvent extends ChildMessage {
  t: number;
}

/** A running holder process (`holder.js`). */
export type HolderProcess = Child<HolderEvent>;

const HOLDER_JS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'holder.js');

/** The conformance tests, by name (for {@link ConformanceBackend.skip}). */
export type ConformanceTest =
  'distinct' | 'exhausted' | 'sigkill' | 'sigstop' | 'engine-restart' | 'high-water' | 'no-duplicates';

/** A backend under test. */
export interface ConformanceBackend {
  /** Shown in test names: 'file', 'redis', … */
  readonly name: string;
  /** A registry URL; called once per test (return a fresh directory for `file:`). */
  url(): string;
  /** The engine, for the kill/restart test (d); without it (d) is not run. */
  readonly engine?: RunningEngine;
  /** Lease TTL for the holders (default 1500 ms). */
  readonly ttlMs?: number;
  /** How much earlier than `last renewal start + ttl` a dead holder's ID may be re-granted (default 0; at most the margin). */
  readonly expiryToleranceMs?: number;
  /** Extra time after `kill + ttl` within which a dead holder's ID must be re-granted (default 2000 ms). */
  readonly reclaimSlackMs?: number;
  /** Time after an engine restart within which holders must issue again (default 30 000 ms). */
  readonly recoverWithinMs?: number;
  /** Extra holder settings per holder index (e.g. a distinct `holderAddress` for Leaf). */
  holderConfig?(index: number): Partial<HolderConfig>;
  /** Tests that do not apply, with the reason (printed as the skip message). */
  readonly skip?: Partial<Record<ConformanceTest, string>>;
}

/** The shared parts of one backend's conformance run. */
export interface ConformanceKit {
  readonly backend: ConformanceBackend;
  readonly ttlMs: number;
  readonly marginMs: number;
  /** A temporary directory removed after the suite. */
  readonly work: string;
  spawnHolder: (name: string, cfg: HolderConfig) => HolderProcess;
  /** A fresh cluster name. */
  cluster: () => string;
  /** The holder's first `acquired` or `acquire-failed` event. */
  firstOutcome: (h: HolderProcess, timeoutMs?: number) => Promise<HolderEvent>;
  /** Why a test does not apply to this backend, if it does not. */
  skip: (t: ConformanceTest) => string | undefined;
  stopAll: (hs: HolderProcess[]) => Promise<unknown>;
  /**
   * A start barrier for holders spawned with `startWhenFile: kit.barrier()`: waits until
   * each has started (loaded its modules), then releases them all at once. Resolves with the
   * slowest start-up measured, from which callers derive their bounds.
   */
  startTogether: (hs: HolderProcess[], file: string) => Promise<{ startupMs: number }>;
  /** A fresh barrier file path for `startWhenFile`. */
  barrier: () => string;
}

/**
 * The fast profile of `npm test`: an engine runs its share of the cases below (every case
 * runs on at least one engine, and all of them on the file registry), since torture's short
 * profile, also in `npm test`, runs the fleet, restart, crash-pause and engine-fault rows on
 * every backend. `FLURRY_CONFORMANCE=full` (`npm run test:conformance`) runs every case on
 * every engine. Backends not named here (file, ZooKeeper's Leaf variants) run every case.
 */
const FAST_SHARE: Readonly<Record<string, readonly ConformanceTest[]>> = {
  etcd: ['sigkill', 'engine-restart'],
  redis: ['sigstop', 'no-duplicates'],
  postgres: ['distinct', 'high-water'],
  mysql: ['exhausted', 'engine-restart'],
  zookeeper: ['sigkill', 'sigstop'],
};

function profile(): 'fast' | 'full' {
  const v = process.env.FLURRY_CONFORMANCE;
  if (v === undefined || v === '' || v === 'fast') return 'fast';
  if (v === 'full') return 'full';
  throw new Error(`FLURRY_CONFORMANCE=${v} is not a profile: use fast (the default) or full`);
}

/** Why `t` is left out on `backend` in the fast profile, or undefined when it runs. */
function fastProfileSkip(backend: string, t: ConformanceTest): string | undefined {
  const share = FAST_SHARE[backend];
  if (share === undefined || share.includes(t) || profile() === 'full') return undefined;
  const on = Object.keys(FAST_SHARE).filter((b) => FAST_SHARE[b]?.includes(t));
  return `fast profile: npm test runs this case on the file registry and ${on.join(' and ')}, torture's rows on every backend; FLURRY_CONFORMANCE=full runs it on ${backend} too`;
}

/** How long a holder process may take to start at all (a stuck machine, not a bound on Flurry). */
const STARTUP_CAP_MS = 240_000;

/**
 * Builds the kit for one backend (call inside the test file's top level: it registers an
 * `after` hook that kills leftover holders and removes the temporary directory).
 */
export function conformanceKit(backend: ConformanceBackend): ConformanceKit {
  const ttlMs = backend.ttlMs ?? 1500;
  const marginMs = Math.min(1000, Math.floor(ttlMs / 5));
  const work = mkdtempSync(path.join(tmpdir(), `flurry-conf-${backend.name.replace(/[^a-z0-9]/gi, '')}-`));
  const env = { ...process.env, XDG_STATE_HOME: work };
  const spawned: HolderProcess[] = [];
  let counter = 0;

  after(async () => {
    await Promise.all(spawned.map((h) => h.kill()));
    rmSync(work, { recursive: true, force: true });
  });

  const spawnHolder = (name: string, cfg: HolderConfig): HolderProcess => {
    const i = counter++;
    const full: HolderConfig = {
      ttlMs,
      stateDir: path.join(work, 'state'),
      connectTimeoutMs: 3000,
      ...cfg,
      ...(backend.holderConfig?.(i) ?? {}),
    };
    const h = spawnNode<HolderEvent>(name, HOLDER_JS, [JSON.stringify(full)], { env });
    spawned.push(h);
    return h;
  };
  const cluster = (): string => `c${randomBytes(4).toString('hex')}`;
  const firstOutcome = (h: HolderProcess, timeoutMs = 20_000): Promise<HolderEvent> =>
    h.waitFor((e) => e.ev === 'acquired' || e.ev === 'acquire-failed', timeoutMs);
  const skip = (t: ConformanceTest): string | undefined => backend.skip?.[t] ?? fastProfileSkip(backend.name, t);
  const stopAll = (hs: HolderProcess[]): Promise<unknown> => Promise.all(hs.map((h) => h.stop()));
  let barriers = 0;
  const barrier = (): string => path.join(work, `start-${++barriers}`);
  const startTogether = async (hs: HolderProcess[], file: string): Promise<{ startupMs: number }> => {
    const t0 = performance.now();
    await Promise.all(hs.map((h) => h.waitFor((e) => e.ev === 'started', STARTUP_CAP_MS)));
    const startupMs = performance.now() - t0;
    writeFileSync(file, 'go');
    return { startupMs };
  };
  return { backend, ttlMs, marginMs, work, spawnHolder, cluster, firstOutcome, skip, stopAll, startTogether, barrier };
}
