/**
 * Conformance (a): many processes acquiring at once get distinct node IDs; more processes than node IDs get `FLURRY_E_REGISTRY_EXHAUSTED` naming the holders.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ConformanceKit, HolderProcess } from './kit.js';

/** Registers these cases for one backend (inside its `describe`). */
export function claimCases(kit: ConformanceKit): void {
  const { backend, ttlMs, spawnHolder, cluster, firstOutcome, skip, stopAll } = kit;
  /**
   * Starts the holders together once all have loaded, and returns how long each may take to
   * acquire: derived from the measured start-up (acquiring is a registry connection and a
   * claim, which a loaded machine slows down like it slows a process start), printed.
   */
  const releaseAll = async (t: TestContext, hs: HolderProcess[], go: string): Promise<number> => {
    const { startupMs } = await kit.startTogether(hs, go);
    const boundMs = Math.round(10_000 + 3 * startupMs + 2 * ttlMs);
    t.diagnostic(
      `${hs.length} holders started in ${Math.round(startupMs)} ms; each must acquire within ${boundMs} ms (10 000 + 3 × start-up + 2 × TTL ${ttlMs})`,
    );
    return boundMs;
  };
  test(
    'GIVEN 16 processes acquiring at once THEN they get 16 distinct node IDs',
    { timeout: 600_000, skip: skip('distinct') },
    async (t) => {
      const url = backend.url();
      const c = cluster();
      const go = kit.barrier();
      const hs = Array.from({ length: 16 }, (_, i) =>
        spawnHolder(`h${i}`, {
          url,
          cluster: c,
          layout: 'timestamp:41,worker:10,sequence:12',
          mode: 'hold',
          startWhenFile: go,
        }),
      );
      try {
        const boundMs = await releaseAll(t, hs, go);
        const outcomes = await Promise.all(hs.map((h) => firstOutcome(h, boundMs)));
        const errors = outcomes.filter((o) => o.ev !== 'acquired');
        assert.equal(errors.length, 0, `every holder acquires; errors: ${JSON.stringify(errors)}`);
        const workers = outcomes.map((o) => (o.node as Record<string, number>).worker);
        assert.equal(new Set(workers).size, 16, `16 distinct workers; got ${workers.join(',')}`);
        assert.equal(new Set(outcomes.map((o) => o.slot)).size, 16);
      } finally {
        await stopAll(hs);
      }
      for (const h of hs) assert.ok(h.of('released').length === 1, `released cleanly. ${h.describe()}`);
    },
  );

  test(
    'GIVEN a layout of 4 node IDs and 6 processes THEN 4 win and 2 get FLURRY_E_REGISTRY_EXHAUSTED naming how many are held and by whom',
    { timeout: 600_000, skip: skip('exhausted') },
    async (t) => {
      const url = backend.url();
      const c = cluster();
      const go = kit.barrier();
      const hs = Array.from({ length: 6 }, (_, i) =>
        spawnHolder(`h${i}`, {
          url,
          cluster: c,
          layout: 'timestamp:41,worker:2,sequence:12',
          mode: 'hold',
          startWhenFile: go,
        }),
      );
      try {
        const boundMs = await releaseAll(t, hs, go);
        const outcomes = await Promise.all(hs.map((h) => firstOutcome(h, boundMs)));
        const won = outcomes.filter((o) => o.ev === 'acquired');
        const lost = outcomes.filter((o) => o.ev === 'acquire-failed');
        assert.equal(won.length, 4, `4 winners; got ${JSON.stringify(outcomes)}`);
        assert.deepEqual(new Set(won.map((o) => (o.node as Record<string, number>).worker)), new Set([0, 1, 2, 3]));
        assert.equal(lost.length, 2);
        for (const e of lost) {
          assert.equal(e.code, 'FLURRY_E_REGISTRY_EXHAUSTED', JSON.stringify(e));
          const d = e.details as { held?: unknown; holders?: unknown[] };
          assert.equal(d.held, 4, `details.held is 4: ${JSON.stringify(e)}`);
          assert.ok(
            Array.isArray(d.holders) && d.holders.length > 0,
            `details.holders lists the holders: ${JSON.stringify(e)}`,
          );
          assert.match(String(e.message), /\b4\b/, 'the message says how many are held');
        }
      } finally {
        await stopAll(hs);
      }
    },
  );
}
