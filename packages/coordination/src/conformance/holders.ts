/**
 * The `holders()` conformance test, run by every backend's conformance file beside
 * `runConformance` (see suite.ts): real holder processes (`holder.js`) against a real engine,
 * read back through `openRegistry(url).holders()`.
 *
 * GIVEN two holders (one with its clock 1500 ms ahead) issuing IDs THEN both are listed with
 * slot, node, host, pid, version, held since ≤ last renewal ≤ now < expiry, a high-water mark
 * at least the first ID they issued, and (where the engine can time renewals) the clock offset
 * within the reported error plus a latency slack; WHEN one releases THEN it disappears at once;
 * WHEN the other is SIGSTOPped THEN its age grows and it disappears within TTL + slack.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout } from '@flurry/core';
import type { ClusterHolder } from '../holders.js';
import { openRegistry } from '../open-registry.js';
import { FLURRY_VERSION } from '../version.js';
import type { HolderConfig } from './holder.js';
import { holderPause } from './faults.js';
import { conformanceKit, type ConformanceBackend, type HolderProcess } from './kit.js';

const LAYOUT = 'timestamp:41,worker:10,sequence:12';
/** How long the holder's renewal may take to reach the engine on a loaded machine (adds to the reported offset error; 1500 vs 0 stays distinguishable). */
const OFFSET_SLACK_MS = 1000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Registers the holders() conformance test for one backend (same backend object as
 * `runConformance`).
 */
export function runHoldersConformance(backend: ConformanceBackend): void {
  const ttlMs = backend.ttlMs ?? 1500;
  const renewIntervalMs = Math.floor(ttlMs / 3);
  const kit = conformanceKit(backend);
  const work = kit.work;
  const spawn = (name: string, cfg: Partial<HolderConfig> & Pick<HolderConfig, 'url' | 'cluster'>): HolderProcess =>
    kit.spawnHolder(name, { layout: LAYOUT, ttlMs, renewIntervalMs, mode: 'tick', tickMs: 20, ...cfg });

  describe(`registry conformance: ${backend.name} holders()`, { concurrency: 1 }, () => {
    test(
      'GIVEN two holders THEN holders() lists both with their fields; a released one disappears at once, a SIGSTOPped one after its TTL',
      { timeout: 90_000 },
      async () => {
        const url = backend.url();
        const cluster = `h${randomBytes(4).toString('hex')}`;
        const layout = Layout.parse(LAYOUT);
        const a = spawn('a', { url, cluster });
        const b = spawn('b', { url, cluster, clockOffsetMs: 1500 });
        const reader = await openRegistry(url, { cluster, ttlMs, stateDir: path.join(work, 'reader') });
        try {
          for (const h of [a, b]) {
            const got = await h.waitFor((e) => e.ev === 'acquired' || e.ev === 'acquire-failed', 30_000);
            assert.equal(got.ev, 'acquired', h.describe());
          }
          // Wait for a renewal after the first IDs, so the reported mark covers them.
          const firstIdMs = new Map<HolderProcess, number>();
          for (const h of [a, b]) {
            const id = await h.waitFor((e) => e.ev === 'id', 10_000);
            firstIdMs.set(h, Number(id.unixMs));
            const from = h.messages.indexOf(id);
            await h.waitFor((e) => e.ev === 'renewed', renewIntervalMs * 3 + 5000, { from });
          }
          const list = await reader.holders({ layout });
          const now = Date.now();
          assert.equal(list.length, 2, `two holders listed: ${JSON.stringify(list)}`);
          const bySlot = new Map<number, ClusterHolder>(list.map((h) => [h.slot, h]));
          for (const [h, offset] of [
            [a, 0],
            [b, 1500],
          ] as const) {
            const acquired = h.of('acquired')[0];
            const entry = bySlot.get(Number(acquired.slot));
            assert.ok(entry, `holder ${h.name} (slot ${String(acquired.slot)}) listed: ${JSON.stringify(list)}`);
            assert.deepEqual(entry.node, acquired.node);
            assert.equal(entry.pid, h.pid);
            assert.equal(entry.hostname, hostname());
            assert.equal(entry.version, FLURRY_VERSION);
            assert.equal(entry.namespace, cluster);
            assert.ok(entry.id?.startsWith(`${hostname()}:${h.pid}:`), `id ${entry.id}`);
            assert.ok(
              entry.highWaterMs >= firstIdMs.get(h)!,
              `high-water ${entry.highWaterMs} ≥ first ID ${firstIdMs.get(h)}`,
            );
            assert.ok(entry.renewedAtMs !== null && entry.renewedAtMs <= now + 1000, `renewed at ${entry.renewedAtMs}`);
            if (entry.heldSinceMs !== null) assert.ok(entry.heldSinceMs <= entry.renewedAtMs + 1000);
            if (entry.expiresAtMs !== null) assert.ok(entry.expiresAtMs > entry.readAtMs, 'not yet expired');
            if (entry.clockOffsetMs !== null) {
              const bound = (entry.clockOffsetErrorMs ?? 0) + OFFSET_SLACK_MS;
              console.log(
                `# ${backend.name}: holder ${h.name} clock offset ${offset} ms estimated ${entry.clockOffsetMs} ms (bound ±${bound})`,
              );
              assert.ok(Math.abs(entry.clockOffsetMs - offset) <= bound, `offset ${entry.clockOffsetMs} vs ${offset}`);
            }
          }
          // A released holder disappears at once.
          await b.stop();
          const afterRelease = await reader.holders({ layout });
          assert.deepEqual(
            afterRelease.map((h) => h.slot),
            [Number(a.of('acquired')[0].slot)],
            'the released holder is gone',
          );
          // A SIGSTOPped holder stays listed (ageing) until its TTL, then disappears.
          const bound = ttlMs + (backend.reclaimSlackMs ?? 2000) + 1000;
          let goneAfter = -1;
          let maxAge = 0;
          await holderPause.inject(a, async () => {
            const stoppedAt = Date.now();
            while (Date.now() - stoppedAt < bound + 5000) {
              const l = await reader.holders({ layout });
              if (l.length === 0) return (goneAfter = Date.now() - stoppedAt);
              maxAge = Math.max(maxAge, l[0].ageMs ?? 0);
              await sleep(100);
            }
          });
          console.log(
            `# ${backend.name}: SIGSTOPped holder gone after ${goneAfter} ms (ttl ${ttlMs} ms, bound ${bound} ms), last age seen ${maxAge} ms`,
          );
          assert.ok(goneAfter >= 0 && goneAfter <= bound, `gone within ${bound} ms (after ${goneAfter})`);
          assert.ok(maxAge >= renewIntervalMs, `its age grew past the renewal interval (${maxAge} ms)`);
        } finally {
          await reader.close();
          await Promise.all([a.stop(), b.stop()]);
        }
      },
    );
  });
}
