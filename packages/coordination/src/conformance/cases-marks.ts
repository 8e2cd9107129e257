/**
 * Conformance (e)–(f): the high-water mark is never issued at or below, after a clean release or a crash; holders at full speed through leases issue no duplicate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Layout } from '@flurry/core';
import { holderKill } from './faults.js';
import type { ConformanceKit, HolderEvent } from './kit.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Registers these cases for one backend (inside its `describe`). */
export function markCases(kit: ConformanceKit): void {
  const { backend, ttlMs, work, spawnHolder, cluster, firstOutcome, skip, stopAll } = kit;
  test(
    "GIVEN a recorded high-water mark WHEN a holder's clock is behind it THEN it fails or waits as configured AND never issues at or below it",
    { timeout: 90_000, skip: skip('high-water') },
    async () => {
      const url = backend.url();
      const c = cluster();
      // One node ID per datacenter: every holder below gets the same one.
      const spec = 'timestamp:41,datacenter:1,sequence:12';
      const layout = Layout.parse(spec);
      const tsOf = (e: HolderEvent): number => layout.decode(BigInt(String(e.id))).unixMs;
      const first = spawnHolder('first', { url, cluster: c, layout: spec, mode: 'tick', tickMs: 2 });
      assert.equal((await firstOutcome(first)).ev, 'acquired', first.describe());
      await first.waitFor((e) => e.ev === 'id', 5000);
      await sleep(300);
      await first.stop();
      assert.equal(first.of('released').length, 1, first.describe());
      const mark1 = Math.max(...first.of('id').map(tsOf));

      // Clock 10 s behind, may wait 200 ms: refuses with the coded error, issues nothing.
      // (10 s, not 3: a holder that takes seconds to start on a loaded machine must still
      // find its clock behind the mark when it gets there.)
      const impatient = spawnHolder('impatient', {
        url,
        cluster: c,
        layout: spec,
        mode: 'tick',
        tickMs: 2,
        clockOffsetMs: -10_000,
        highWaterWaitMs: 200,
      });
      const r1 = await firstOutcome(impatient);
      assert.equal(r1.ev, 'acquire-failed', impatient.describe());
      assert.equal(r1.code, 'FLURRY_E_CLOCK_BEHIND_HIGH_WATER', JSON.stringify(r1));
      assert.match(String(r1.message), /behind/);
      await impatient.exited;
      assert.equal(impatient.of('id').length, 0);

      // Clock 1.5 s behind, may wait 5 s: waits, then issues only above the mark.
      const patient = spawnHolder('patient', {
        url,
        cluster: c,
        layout: spec,
        mode: 'tick',
        tickMs: 2,
        clockOffsetMs: -1500,
        highWaterWaitMs: 5000,
      });
      assert.equal((await firstOutcome(patient)).ev, 'acquired', patient.describe());
      await patient.waitFor((e) => e.ev === 'id', 10_000);
      await sleep(200);
      const p = patient.of('id').map(tsOf);
      assert.ok(
        Math.min(...p) > mark1,
        `after a clean release: first ID at ${Math.min(...p)} must be above the mark ${mark1}`,
      );
      // Now it crashes: the next holder (clock 1 s behind) must stay above what it issued
      // plus what it could have issued unreported.
      await holderKill.inject(patient);
      const mark2 = Math.max(...patient.of('id').map(tsOf));
      const next = spawnHolder('successor', {
        url,
        cluster: c,
        layout: spec,
        mode: 'tick',
        tickMs: 2,
        clockOffsetMs: -1000,
        highWaterWaitMs: 10_000,
        retryUntilMs: ttlMs * 4 + 10_000,
        retryEveryMs: 25,
        retryCodes: ['FLURRY_E_REGISTRY_EXHAUSTED'],
      });
      try {
        const r3 = await firstOutcome(next, ttlMs * 4 + 20_000);
        assert.equal(r3.ev, 'acquired', next.describe());
        assert.ok(
          Number(r3.notBeforeMs) >= mark2,
          `notBeforeMs ${String(r3.notBeforeMs)} covers the crashed holder's IDs up to ${mark2}`,
        );
        await next.waitFor((e) => e.ev === 'id', 20_000);
        const n = next.of('id').map(tsOf);
        assert.ok(Math.min(...n) > mark2, `after a crash: first ID at ${Math.min(...n)} must be above ${mark2}`);
        const all = [first, patient, next].flatMap((h) => h.of('id').map((e) => String(e.id)));
        assert.equal(new Set(all).size, all.length, 'no duplicates');
      } finally {
        await stopAll([next]);
      }
    },
  );

  test(
    'GIVEN several processes generating through leases at full speed for ~2 s THEN the union of their IDs has zero duplicates',
    { timeout: 90_000, skip: skip('no-duplicates') },
    async () => {
      const url = backend.url();
      const c = cluster();
      const n = 4;
      const hs = Array.from({ length: n }, (_, i) =>
        spawnHolder(`b${i}`, {
          url,
          cluster: c,
          layout: 'timestamp:41,worker:2,sequence:12',
          mode: 'fill',
          durationMs: 2000,
          maxIds: 1_500_000,
          out: path.join(work, `${c}-${i}.bin`),
        }),
      );
      try {
        for (const h of hs) assert.equal((await firstOutcome(h)).ev, 'acquired', h.describe());
        const done = await Promise.all(hs.map((h) => h.waitFor((e) => e.ev === 'done', 60_000)));
        await Promise.all(hs.map((h) => h.exited));
        const counts = done.map((d) => Number(d.issued));
        const total = counts.reduce((a, b) => a + b, 0);
        assert.ok(
          counts.every((x) => x > 0),
          `every process issued: ${counts.join(',')}`,
        );
        const all = new BigUint64Array(total);
        let o = 0;
        for (let i = 0; i < n; i++) {
          const buf = readFileSync(path.join(work, `${c}-${i}.bin`));
          const ids = new BigUint64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
          for (let j = 1; j < ids.length; j++)
            assert.ok(ids[j] > ids[j - 1], `process ${i}: IDs increase (index ${j})`);
          all.set(ids, o);
          o += ids.length;
        }
        assert.equal(o, total);
        all.sort();
        let dups = 0;
        for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) dups++;
        assert.equal(dups, 0, `${dups} duplicates among ${total} IDs`);
      } finally {
        await stopAll(hs);
      }
    },
  );
}
