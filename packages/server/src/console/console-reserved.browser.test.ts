// The console's cluster view in chromium with an in-database generator's reservation: a
// `flurry serve` and a `flurry sql --generate --apply` of one cluster on a real PostgreSQL
// registry table (started by the harness). The generator's slot (reserved until 9999-12-31,
// never renewed) shows as reserved for in-database generation, by whom and since when, never as
// stale, in /v1/cluster and on the page, while the service's own row stays live.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDatabase, type RunningDatabase } from '@flurry/coordination/testing';
import type { Browser } from 'playwright-core';
import { httpGet, jsonBody, runFlurry, startFlurry, type FlurryProcess } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';
import type { ClusterBody } from './types.js';

let db: RunningDatabase;
let browser: Browser;
let svc: FlurryProcess | undefined;

before(async () => {
  db = await startDatabase('postgres');
  browser = await launchChromium();
});
after(async () => {
  await svc?.stop().catch(() => undefined);
  await browser?.close();
  await db?.stop();
});

test('GIVEN a service and an in-database generator of one cluster THEN /v1/cluster and the page show the generator as reserved (by whom, since when), never stale, over several renewal intervals', async () => {
  const url = `${db.url}?table=flurry_nodes`;
  svc = await startFlurry({
    registry: url,
    args: ['--cluster', 'orders', '--lease-ttl-ms', '3000', '--lease-renew-ms', '500'],
    timeoutMs: 60_000,
  });
  const gen = await runFlurry(['sql', '--generate', '--registry', url, '--cluster', 'orders', '--apply']);
  assert.equal(gen.code, 0, gen.stderr);
  const slot = Number(/Reserved slot (\d+) of orders/.exec(gen.stdout)?.[1]);
  // Well past the renewal interval plus the slack: a holder that never renews would be stale by now.
  await new Promise((r) => setTimeout(r, 2500));
  const body = jsonBody<ClusterBody>((await httpGet(svc.port, '/v1/cluster')).body);
  const reserved = body.holders.find((h) => h.slot === slot);
  assert.ok(reserved, JSON.stringify(body.holders));
  assert.equal(reserved.state, 'reserved');
  assert.equal(reserved.role, 'sql generator');
  assert.ok(reserved.hostname && reserved.pid && reserved.heldSinceMs, JSON.stringify(reserved));
  assert.equal(body.holders.find((h) => h.self)?.state, 'live');

  const origin = `http://127.0.0.1:${svc.port}`;
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const watch = watchPage(page, origin);
  await page.goto(`${origin}/#cluster`);
  await page.locator('#conn.live').waitFor({ timeout: 15_000 });
  const row = page.locator(`#holders tr[data-slot="${slot}"]`);
  await row.waitFor({ timeout: 10_000 });
  for (let i = 0; i < 3; i++) {
    // several frames: the row stays reserved, it never turns stale
    assert.equal(await row.getAttribute('data-state'), 'reserved');
    assert.equal(await row.locator('td.state').textContent(), 'reserved (sql generator)');
    assert.equal(await row.locator('td:nth-child(6)').textContent(), 'never (reserved)');
    assert.equal(await row.locator('td:nth-child(3)').textContent(), String(reserved.pid));
    assert.match((await row.getAttribute('title')) ?? '', /Reserved for in-database generation .* since /);
    await page.waitForTimeout(1000);
  }
  assert.equal(await page.locator('#holders tr.stale').count(), 0);
  assert.deepEqual(watch.problems, []);
  await page.close();
});
