/**
 * The registry conformance suite: one set of tests every backend runs, with real holder
 * processes (`holder.js`, spawned with `node`) against a real engine.
 *
 * (a) 16 processes acquire at once → 16 distinct node IDs; 6 processes on a layout of 4
 *     node IDs → 4 win and 2 get `FLURRY_E_REGISTRY_EXHAUSTED` saying how many are held
 *     and by whom.
 * (b) A holder killed with SIGKILL: its node ID is reclaimed after the TTL and not before
 *     its fencing deadline (start of its last renewal + ttl − margin; for `expiryToleranceMs`
 *     0, not before start of last renewal + ttl).
 * (c) A holder SIGSTOPped past its TTL while another takes its node ID, then SIGCONTed:
 *     it issues nothing (no ID stamped after the stop), reports the loss.
 * (d) (engines only) The engine is killed while holders issue: they stop by their
 *     deadline; after the engine restarts they recover on their own.
 * (e) High-water: a holder whose clock is behind the recorded mark fails when the wait
 *     bound is short, waits when it is long, and never issues at or below the mark — both
 *     after a clean release and after a crash.
 * (f) Several processes issue at full speed through leases for ~2 s: zero duplicates.
 *
 * Each backend writes one test file:
 * ```ts
 * // conformance/redis.test.ts
 * const engine = await startEngine('redis');
 * after(() => engine.stop());
 * runConformance({ name: 'redis', url: () => engine.url, engine });
 * ```
 */
import { describe } from 'node:test';
import { claimCases } from './cases-claims.js';
import { faultCases } from './cases-faults.js';
import { markCases } from './cases-marks.js';
import { conformanceKit, type ConformanceBackend } from './kit.js';

export type { ConformanceBackend, ConformanceTest, HolderEvent, HolderProcess } from './kit.js';

/** Registers the conformance tests for one backend (call it at the top level of a test file). */
export function runConformance(backend: ConformanceBackend): void {
  const kit = conformanceKit(backend);
  describe(`registry conformance: ${backend.name}`, { concurrency: 1 }, () => {
    claimCases(kit);
    faultCases(kit);
    markCases(kit);
  });
}
