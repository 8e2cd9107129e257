/**
 * Conformance (b)–(d): a SIGKILLed holder is reclaimed after its TTL and not before; a SIGSTOPped holder resumed after a takeover issues nothing; holders stop by their deadline when the engine dies and recover after it restarts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostMonotonicMs } from '../host-clock.js';
import { engineRestart, holderKill, holderPause } from './faults.js';
import type { ConformanceKit, HolderEvent } from './kit.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Registers these cases for one backend (inside its `describe`). */
export function faultCases(kit: ConformanceKit): void {
  const { backend, ttlMs, marginMs, spawnHolder, cluster, firstOutcome, skip, stopAll } = kit;
  test(
    'GIVEN a holder killed with SIGKILL THEN its node ID is reclaimed after the TTL and not before',
    { timeout: 60_000, skip: skip('sigkill') },
    async () => {
      const url = backend.url();
      const c = cluster();
      const layout = 'timestamp:41,worker:1,sequence:12';
      const a = spawnHolder('victim', { url, cluster: c, layout, mode: 'tick', tickMs: 20 });
      const aGot = await firstOutcome(a);
      assert.equal(aGot.ev, 'acquired', a.describe());
      const filler = spawnHolder('filler', { url, cluster: c, layout, mode: 'hold' });
      assert.equal((await firstOutcome(filler)).ev, 'acquired', filler.describe());
      // The taker starts first and is refused while the victim lives.
      const b = spawnHolder('taker', {
        url,
        cluster: c,
        layout,
        mode: 'hold',
        retryUntilMs: 60_000,
        retryEveryMs: 25,
        retryCodes: ['FLURRY_E_REGISTRY_EXHAUSTED'],
      });
      try {
        await b.waitFor((e) => e.ev === 'exhausted' || e.ev === 'acquired' || e.ev === 'acquire-failed', 20_000);
        assert.ok(b.of('exhausted').length > 0, `the taker is refused while the lease is live. ${b.describe()}`);
        const mark = a.messages.length;
        await a.waitFor((e) => e.ev === 'renewed', ttlMs * 2, { from: mark });
        const tKill = hostMonotonicMs();
        await holderKill.inject(a);
        const renewals = a.of('renewed').map((e) => Number(e.startedAt));
        const lastRenewStart = Math.max(...renewals);
        const got = await b.waitFor(
          (e) => e.ev === 'acquired' || e.ev === 'acquire-failed',
          ttlMs * 4 + (backend.reclaimSlackMs ?? 2000) + 10_000,
        );
        assert.equal(got.ev, 'acquired', b.describe());
        assert.deepEqual(got.node, aGot.node, "the taker gets the dead holder's node ID (the other is held)");
        const notBefore = lastRenewStart + ttlMs - Math.min(backend.expiryToleranceMs ?? 0, marginMs);
        assert.ok(
          got.t >= notBefore,
          `reclaimed ${(notBefore - got.t).toFixed(1)} ms before the dead holder's lease could have expired (last renewal started at ${lastRenewStart}, ttl ${ttlMs})`,
        );
        const latest = tKill + ttlMs + (backend.reclaimSlackMs ?? 2000);
        assert.ok(
          got.t <= latest,
          `reclaimed ${(got.t - tKill).toFixed(0)} ms after the kill; expected within ttl ${ttlMs} + slack ${backend.reclaimSlackMs ?? 2000}`,
        );
      } finally {
        await stopAll([b, filler]);
      }
    },
  );

  test(
    'GIVEN a holder SIGSTOPped past its TTL while another takes its node ID WHEN it is resumed THEN it issues nothing',
    { timeout: 60_000, skip: skip('sigstop') },
    async () => {
      const url = backend.url();
      const c = cluster();
      const layout = 'timestamp:41,worker:1,sequence:12';
      const a = spawnHolder('sleeper', { url, cluster: c, layout, mode: 'tick', tickMs: 5 });
      const aGot = await firstOutcome(a);
      assert.equal(aGot.ev, 'acquired', a.describe());
      const filler = spawnHolder('filler', { url, cluster: c, layout, mode: 'hold' });
      assert.equal((await firstOutcome(filler)).ev, 'acquired', filler.describe());
      await a.waitFor((e) => e.ev === 'renewed', ttlMs * 2);
      await a.waitFor((e) => e.ev === 'id', 5000);
      const b = spawnHolder('taker', {
        url,
        cluster: c,
        layout,
        mode: 'tick',
        tickMs: 5,
        retryUntilMs: 60_000,
        retryEveryMs: 25,
        retryCodes: ['FLURRY_E_REGISTRY_EXHAUSTED'],
      });
      try {
        await b.waitFor((e) => e.ev === 'exhausted' || e.ev === 'acquired' || e.ev === 'acquire-failed', 20_000);
        assert.ok(b.of('exhausted').length > 0, `the taker is refused while the lease is live. ${b.describe()}`);
        let before = 0;
        // Held until the taker has the node ID and issues under it.
        const { effectiveWall: wallStop } = await holderPause.inject(a, async () => {
          await sleep(100); // let lines already in the pipe arrive
          before = a.messages.length;
          const got = await b.waitFor((e) => e.ev === 'acquired' || e.ev === 'acquire-failed', ttlMs * 4 + 15_000);
          assert.equal(got.ev, 'acquired', b.describe());
          assert.deepEqual(got.node, aGot.node);
          const sleeperDeadline = Math.max(...a.of('renewed').map((e) => Number(e.startedAt))) + ttlMs - marginMs;
          assert.ok(
            got.t >= sleeperDeadline,
            `taken ${(sleeperDeadline - got.t).toFixed(1)} ms before the sleeper's fencing deadline`,
          );
          await b.waitFor((e) => e.ev === 'id', 10_000);
        });
        // An ID the sleeper issued just before the signal may reach us only after SIGCONT (it
        // can be stopped between next() and the write): judge IDs by their own timestamp.
        const issuedAfterStop = (e: HolderEvent): boolean => e.ev === 'id' && Number(e.unixMs) > wallStop;
        // The resumed holder must notice before its first ID, then report the loss.
        await a.waitFor((e) => e.ev === 'lost', ttlMs * 2 + 5000, { from: before });
        await sleep(Math.min(1000, ttlMs));
        const after = a.messages.slice(before);
        const idsAfter = after.filter(issuedAfterStop);
        assert.equal(
          idsAfter.length,
          0,
          `the resumed holder issued ${idsAfter.length} IDs after the stop at ${wallStop}: ${JSON.stringify(idsAfter.slice(0, 3))}`,
        );
        const first = after.find((e) => issuedAfterStop(e) || e.ev === 'refused' || e.ev === 'lost');
        assert.ok(
          first && first.ev !== 'id',
          `first thing after waking is a refusal or the loss: ${JSON.stringify(after.slice(0, 3))}`,
        );
        const aIds = new Set(a.of('id').map((e) => String(e.id)));
        for (const e of b.of('id')) assert.ok(!aIds.has(String(e.id)), `duplicate ${String(e.id)}`);
      } finally {
        await stopAll([a, b, filler]);
      }
    },
  );

  test(
    'GIVEN holders issuing WHEN the engine is killed THEN they stop by their deadline AND recover on their own after it restarts',
    { timeout: 120_000, skip: engineRestart.available(backend.engine) ?? skip('engine-restart') },
    async () => {
      const engine = backend.engine!;
      const url = backend.url();
      const c = cluster();
      const layout = 'timestamp:41,worker:10,sequence:12';
      const hs = Array.from({ length: 3 }, (_, i) =>
        spawnHolder(`h${i}`, { url, cluster: c, layout, mode: 'tick', tickMs: 10 }),
      );
      try {
        for (const h of hs) assert.equal((await firstOutcome(h)).ev, 'acquired', h.describe());
        for (const h of hs) await h.waitFor((e) => e.ev === 'renewed', ttlMs * 2);
        const tKill = hostMonotonicMs();
        const marks = hs.map((h) => h.messages.length);
        let marks2 = marks;
        // Held until every holder reported the loss by its deadline; restarted even when a check fails.
        await engineRestart.inject(engine, async () => {
          for (const [i, h] of hs.entries()) await h.waitFor((e) => e.ev === 'lost', ttlMs + 5000, { from: marks[i] });
          for (const h of hs) {
            const lastRenew = Math.max(
              ...h
                .of('renewed')
                .filter((e) => e.t <= tKill + ttlMs)
                .map((e) => Number(e.startedAt)),
            );
            const late = h.of('id').filter((e) => e.t > lastRenew + ttlMs - marginMs + 5 || e.t > tKill + ttlMs);
            assert.equal(late.length, 0, `${h.name} issued after its deadline: ${JSON.stringify(late.slice(0, 2))}`);
          }
          await sleep(200);
          marks2 = hs.map((h) => h.messages.length);
        });
        const within = backend.recoverWithinMs ?? 30_000;
        for (const [i, h] of hs.entries()) {
          await h.waitFor((e) => e.ev === 'reacquired', within, { from: marks2[i] });
          await h.waitFor((e) => e.ev === 'id', 10_000, { from: marks2[i] });
        }
        const all = hs.flatMap((h) => h.of('id').map((e) => String(e.id)));
        assert.equal(new Set(all).size, all.length, 'no duplicate across the outage');
      } finally {
        await stopAll(hs);
      }
    },
  );
}
