// The console's cluster view in chromium: three `flurry serve` processes on a real etcd
// (started by the harness). One is SIGSTOPped: the page marks its row stale within one
// renewal interval (plus the documented slack, the shared registry read and one frame),
// then drops it once its TTL has passed (plus etcd's up-to-1 s lateness, the read and a frame).
// The TTL leaves the stale phase room to be seen: a holder is stale from about one renewal
// interval + slack after its last renewal until etcd expires it, and the page samples the
// registry only once per read + frame (about 2 s). With a 3 s TTL that phase could be as short
// as 1 s and fall between two frames (a CI run saw the row go from live straight to gone);
// with 6 s the lease outlives the stale bound by at least 1 s.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEngine, type RunningEngine } from '@flurry/coordination/testing';
import type { Browser } from 'playwright-core';
import { httpGet, startFlurry, type FlurryProcess } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';

const TTL_MS = 6000;
const RENEW_MS = 1000;
/** The registry read is shared and cached for about 1 s; status and cluster frames come every 1 s. */
const CACHE_MS = 1000;
const FRAME_MS = 1000;

let engine: RunningEngine;
let browser: Browser;
const servers: FlurryProcess[] = [];

before(async () => {
  engine = await startEngine('etcd');
  browser = await launchChromium();
});
after(async () => {
  for (const s of servers) {
    try {
      s.process.kill('SIGCONT');
    } catch {
      /* already gone */
    }
    await s.stop().catch(() => undefined);
  }
  await browser?.close();
  await engine?.stop();
});

test('GIVEN three servers on etcd WHEN one is SIGSTOPped THEN the page marks it stale within one renewal interval and drops it after its TTL', async () => {
  const cluster = `console${Date.now().toString(36)}`;
  for (let i = 0; i < 3; i++) {
    servers.push(
      await startFlurry({
        registry: engine.url,
        args: ['--cluster', cluster, '--lease-ttl-ms', String(TTL_MS), '--lease-renew-ms', String(RENEW_MS)],
      }),
    );
  }
  const [watcher, , victim] = servers;
  const origin = `http://127.0.0.1:${watcher.port}`;
  const body = JSON.parse((await httpGet(watcher.port, '/v1/cluster')).body) as { staleSlackMs?: number };
  const slack = body.staleSlackMs ?? 500;

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const watch = watchPage(page, origin);
  await page.goto(`${origin}/#cluster`);
  await page.locator('#conn.live').waitFor({ timeout: 15_000 });
  const rows = page.locator('#holders tr');
  // Polled from here: waitForFunction would need eval once it polls, which the page's CSP refuses.
  const t0 = Date.now();
  while ((await rows.count()) !== 3) {
    assert.ok(Date.now() - t0 < 10_000, `${await rows.count()} holder rows after 10 s, want 3`);
    await page.waitForTimeout(100);
  }
  const pids = (await rows.locator('td:nth-child(3)').allTextContents()).map(Number).sort();
  assert.deepEqual(pids, servers.map((s) => s.process.pid!).sort(), 'the three servers, by pid');
  assert.deepEqual(await page.evaluate('[...document.querySelectorAll("#holders tr")].map((tr) => tr.dataset.state)'), [
    'live',
    'live',
    'live',
  ]);
  assert.equal(await page.locator('#holders tr.self').count(), 1);

  const victimRow = `#holders tr:has(td:nth-child(3):text-is("${victim.process.pid}"))`;
  victim.process.kill('SIGSTOP');
  const stoppedAt = Date.now();
  // etcd reports a lease's remaining TTL in whole seconds, so its age estimate can be up to
  // ETCD_RES late against the slack; the page is polled every 100 ms, plus scheduling.
  const ETCD_RES = 1000;
  const POLL = 500;
  const staleBound = RENEW_MS + Math.max(slack, ETCD_RES) + CACHE_MS + FRAME_MS + POLL;
  const goneBound = TTL_MS + 1000 + CACHE_MS + FRAME_MS + 500;
  // The lease cannot expire before TTL − one renewal interval after the stop, so the stale
  // phase must still be on when the stale bound runs out, or this test could not see it.
  assert.ok(TTL_MS - RENEW_MS > staleBound, 'the scenario leaves the stale phase room to be observed');
  let staleAfter = -1;
  let goneAfter = -1;
  while (Date.now() - stoppedAt < goneBound + 3000) {
    // One evaluation reads the table atomically (the page rebuilds it on every frame).
    const state = await page.evaluate<string>(
      `[...document.querySelectorAll('#holders tr')].find((tr) => tr.children[2].textContent === '${victim.process.pid}')?.dataset.state ?? 'gone'`,
    );
    if (state === 'stale' && staleAfter < 0) {
      staleAfter = Date.now() - stoppedAt;
      assert.equal(await page.locator(`${victimRow} td.state`).textContent(), 'STALE', 'visibly marked');
    }
    if (state === 'gone') {
      goneAfter = Date.now() - stoppedAt;
      break;
    }
    await page.waitForTimeout(100);
  }
  console.log(
    `cluster view: stale after ${staleAfter} ms (bound ${staleBound} ms = renew ${RENEW_MS} + max(slack ${slack}, etcd TTL resolution ${ETCD_RES}) + read ${CACHE_MS} + frame ${FRAME_MS} + poll ${POLL}); ` +
      `gone after ${goneAfter} ms (bound ${goneBound} ms = ttl ${TTL_MS} + etcd 1000 + read ${CACHE_MS} + frame ${FRAME_MS} + 500)`,
  );
  assert.ok(staleAfter >= 0 && staleAfter <= staleBound, `stale after ${staleAfter} ms, bound ${staleBound} ms`);
  assert.ok(goneAfter >= 0 && goneAfter <= goneBound, `gone after ${goneAfter} ms, bound ${goneBound} ms`);
  assert.equal(await rows.count(), 2, 'the two live servers remain');
  assert.deepEqual(watch.problems, []);
  await page.close();
});
