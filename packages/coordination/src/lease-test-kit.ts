/**
 * What the lease tests (lease.test.ts, floor.test.ts, registry.test.ts) share: two
 * registries on one directory and one manual clock, the layouts of the tests, an event
 * recorder, a slow fake driver and a coded-rejection assertion. Test support only; not
 * exported by the package.
 */
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, Layout, ManualClock } from '@flurry/core';
import type { RegistryDriver } from './driver.js';
import { createFileDriver } from './drivers/file.js';
import { registryError } from './errors.js';
import type { ManagedLease } from './lease-types.js';
import type { RegistryOptions } from './options.js';
import { LeaseRegistry } from './registry.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-lm-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** A new directory under this test file's temporary directory (removed after the tests). */
export function freshDir(): string {
  return path.join(base, `r${n++}`);
}

/** The lease TTL of {@link setup}'s registries (ms). */
export const TTL = 1000;

/** The safety margin of {@link setup}'s registries (ms). */
export const MARGIN = 200;

/** Two registries (two "processes") on one directory and one manual clock. */
export function setup(extra: { ttlMs?: number } = {}) {
  const dir = freshDir();
  const clock = new ManualClock(Date.UTC(2025, 5, 1), 1_000_000);
  const open = (o: RegistryOptions = {}) =>
    new LeaseRegistry(createFileDriver(dir, { clock }), {
      cluster: 'c',
      ttlMs: extra.ttlMs ?? TTL,
      marginMs: MARGIN,
      clock,
      autoRenew: false,
      stateDir: path.join(dir, 'state'),
      ...o,
    });
  return { dir, clock, open };
}

/**
 * The layouts of the lease tests. Tests that build Generators use layouts of their own: a
 * node's in-process claim makes a later generator of the same ID space start after the
 * earlier one's last tick, and every test's ManualClock starts at the same time.
 */
export const layouts = {
  twoSlots: Layout.parse('timestamp:41,worker:1,sequence:12'),
  oneSlot: Layout.parse('timestamp:41,datacenter:2,sequence:12'),
  suspendLayout: Layout.parse('timestamp:41,worker:1,sequence:11'),
  stepBackLayout: Layout.parse('timestamp:41,worker:1,sequence:10'),
  realClockLayout: Layout.parse('timestamp:41,datacenter:2,sequence:11'),
  reacquireLayout: Layout.parse('timestamp:41,datacenter:2,sequence:10'),
  tenMsLayout: Layout.parse('timestamp:39,machine:16,sequence:8', { epoch: '2014-09-01T00:00:00Z', unit: '10ms' }),
};

/** Records the names of the lease's events as they fire. */
export function events(lease: ManagedLease): string[] {
  const seen: string[] = [];
  for (const ev of ['renewed', 'renew-failed', 'lost', 'reacquired', 'node-changed']) lease.on(ev, () => seen.push(ev));
  return seen;
}

/**
 * A one-slot driver on the real clock whose renewals take `latencyMs`; its claims report a
 * clean mark `state.aheadMs` ahead of the wall clock (none when 0), and `state.loseNext`
 * makes the next renewal answer that the lease is gone. Records when each renewal started.
 */
export function slowDriver(latencyMs: number) {
  const renewStarts: number[] = [];
  const state = { aheadMs: 0, loseNext: false };
  const driver: RegistryDriver = {
    url: 'fake:',
    kind: 'fake',
    claim() {
      return Promise.resolve({
        slot: 0,
        token: 't',
        highWaterMs: state.aheadMs > 0 ? Date.now() + state.aheadMs : 0,
        releasedCleanly: true,
      });
    },
    async renew() {
      renewStarts.push(performance.now());
      if (state.loseNext) {
        state.loseNext = false;
        throw registryError('LEASE_LOST', 'fake: the lease is gone');
      }
      await new Promise((r) => setTimeout(r, latencyMs));
    },
    async release() {},
    holders: () => Promise.resolve([]),
    async close() {},
  };
  return { driver, renewStarts, state };
}

/** Resolves after `ms` real milliseconds. */
export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asserts that `p` (or calling it) rejects with a `FlurryError` of `code`, and returns it. */
export async function rejectsCode(p: Promise<unknown> | (() => unknown), code: string): Promise<FlurryError> {
  try {
    if (typeof p === 'function') await p();
    else await p;
  } catch (e) {
    assert.ok(e instanceof FlurryError, `a FlurryError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected ${code}`);
}
