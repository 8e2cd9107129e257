// The console in chromium, continued (./console.browser.test.ts has the load, the decoder,
// the explorer's refusal, the chart, the screenshots and the token flow): the live stream
// cut and resumed (the page says so and reconnects with backoff), the public-ID decoder
// (shown only with a key and a token), the decoder given a UUIDv7, the first and last ID of
// a time, and the layout explorer's rows after removals and additions.
import { rmSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout, decodeUuid, encodeUuid, generateKey } from '@flurry/core';
import type { Browser, Page } from 'playwright-core';
import { httpGet, jsonBody, startFlurry, type FlurryProcess } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';

const TOKEN = 'console-token-0123456789abcdef';
const KEY = generateKey('C');
/** The page's reconnection backoff (assets/api.js): 1, 2, 4 … 30 s. */
const BACKOFF_MS = [1000, 2000, 4000, 8000];

/** Polls `read` every 100 ms until it differs from `from`, for at most `ms`: its value then. */
async function changed<T>(page: Page, read: () => Promise<T>, from: T, ms: number): Promise<T> {
  const t0 = Date.now();
  let now = await read();
  while (now === from && Date.now() - t0 < ms) {
    await page.waitForTimeout(100);
    now = await read();
  }
  return now;
}

async function newPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(15_000);
  return page;
}

describe('the console in chromium: the live stream cut and resumed', () => {
  let browser: Browser;
  let svc: FlurryProcess | undefined;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('GIVEN a live page WHEN the service stops THEN it says so and retries with growing waits; WHEN it is back THEN live again', async () => {
    svc = await startFlurry();
    const port = svc.port;
    const origin = `http://127.0.0.1:${port}`;
    const page = await newPage(browser);
    const watch = watchPage(page, origin);
    const streams: number[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/events') streams.push(Date.now());
    });
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    // Without a public-ID key the public decoder stays hidden.
    assert.equal(await page.locator('#public').isHidden(), true);

    const down = Date.now();
    await svc.stop('SIGTERM');
    svc = undefined;
    const conn = page.locator('#conn');
    await page.locator('#conn.cut, #conn.bad').waitFor();
    const saidMs = Date.now() - down;
    const said = (await conn.textContent()) ?? '';
    // The stream ends at once on SIGTERM (its error event); the page's watchdog is 5 s.
    const sayBound = 5000 + 1000;
    assert.ok(saidMs <= sayBound, `the page said the stream was cut after ${saidMs} ms (bound ${sayBound} ms)`);
    assert.match(said, /^Live stream cut; .*reconnecting in \d+ s$/, `the status line says so: ${said}`);

    // Down through two retries (1 and then 2 s after the cut), then back: the third retry (4 s
    // later), or the fourth when the restart outlasts that wait, finds it.
    const retries = (): number[] => streams.filter((t) => t > down);
    const twoBound = saidMs + BACKOFF_MS[0] + BACKOFF_MS[1] + 1500;
    while (retries().length < 2) {
      assert.ok(Date.now() - down <= twoBound, `${retries().length} attempts in ${twoBound} ms`);
      await page.waitForTimeout(50);
    }
    svc = await startFlurry({ args: ['--port', String(port)] });
    const up = Date.now();
    const whileDown = retries().length;
    // The next attempt comes at most one backoff step (the one under way) after the restart.
    const backBound = BACKOFF_MS[whileDown] + 2000;
    await page.locator('#conn.live').waitFor({ timeout: backBound + 3000 });
    const backMs = Date.now() - up;
    const all = retries();
    const gaps = all.slice(1).map((t, i) => t - all[i]);
    console.log(
      `stream cut: said after ${saidMs} ms (bound ${sayBound} ms): "${said}"; ${whileDown} reconnection attempts in the ${up - down} ms down, ${all.length} up to the one that resumed, gaps ${gaps.join(', ')} ms (backoff ${BACKOFF_MS.join(', ')} ms); resumed ${backMs} ms after the service was back (bound ${backBound} ms)`,
    );
    assert.ok(all.length >= 3 && all.length <= 4, `${all.length} attempts until live again`);
    for (let i = 1; i < gaps.length; i++)
      assert.ok(gaps[i] >= gaps[i - 1] * 1.5, `the waits grow: ${gaps.join(', ')} ms`);
    assert.ok(backMs <= backBound, `live again after ${backMs} ms, bound ${backBound} ms`);
    assert.equal(await conn.textContent(), 'Live');
    const who = page.locator('#who');
    const frameBefore = await who.textContent();
    const frameAfter = await changed(page, () => who.textContent(), frameBefore, 2500);
    assert.notEqual(frameAfter, frameBefore, 'frames flow again (uptime moves)');
    // While the service is away the stream's retries may fail to connect, or reach the old
    // service during its shutdown, which answers /v1/events with 503 ("shutting down;
    // reconnect later"): both are what the page must ride out, not page errors.
    assert.deepEqual(
      watch.problems.filter(
        (p) =>
          !/request failed|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|console error/.test(p) &&
          !/^HTTP 503: .*\/v1\/events(\?|$)/.test(p),
      ),
      [],
      'no page error while the service was away',
    );
    await page.close();
  });
});

describe('the console in chromium: tools with a public-ID key and a token', () => {
  let browser: Browser;
  let svc: FlurryProcess;
  let origin: string;
  before(async () => {
    browser = await launchChromium();
    svc = await startFlurry({ env: { FLURRY_TOKEN: TOKEN, FLURRY_PUBLIC_KEY: KEY } });
    origin = `http://127.0.0.1:${svc.port}`;
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  async function signedIn(): Promise<{ page: Page; watch: ReturnType<typeof watchPage> }> {
    const page = await newPage(browser);
    const watch = watchPage(page, origin);
    watch.allowStatus(401);
    await page.goto(`${origin}/`);
    await page.getByLabel('Bearer token').fill(TOKEN);
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.locator('#conn.live').waitFor();
    return { page, watch };
  }

  test('GIVEN a public ID THEN the public decoder shows the ID, time, node and sequence it hides', async () => {
    const { page, watch } = await signedIn();
    const auth = { authorization: `Bearer ${TOKEN}` };
    const { publicId } = jsonBody<{ publicId: string }>((await httpGet(svc.port, '/v1/public-ids/next', auth)).body);
    const real = jsonBody<{ id: string; timestamp: string; sequence: number; fields: Record<string, number> }>(
      (await httpGet(svc.port, `/v1/public-ids/${publicId}`, auth)).body,
    );
    const d = Layout.from('twitter').decode(BigInt(real.id));
    await page.locator('#public').waitFor();
    await page.getByLabel('Public ID').fill(publicId);
    await page.locator('#public').getByRole('button', { name: 'Decode' }).click();
    const out = page.locator('#public-out');
    await out.locator('dl').waitFor();
    const text = ((await out.textContent()) ?? '').replace(/,/g, '');
    assert.ok(text.startsWith(`ID${real.id}`), text);
    assert.ok(text.includes(d.timestamp), `time ${d.timestamp} in ${text}`);
    assert.match(text, new RegExp(`datacenter ${d.fields.datacenter} · worker ${d.fields.worker}`));
    assert.match(text, new RegExp(`Sequence${d.sequence}`));
    // A typo is the service's coded refusal, never a wrong ID.
    watch.allowStatus(400);
    const typo = (publicId[0] === 'A' ? 'B' : 'A') + publicId.slice(1);
    await page.getByLabel('Public ID').fill(typo);
    await page.locator('#public').getByRole('button', { name: 'Decode' }).click();
    await out.locator('.error').waitFor();
    assert.match((await out.textContent()) ?? '', /^FLURRY_E_PUBLIC_ID_\w+: /);
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test('GIVEN a UUIDv7 of the service (canonical or base32) THEN the decoder shows its time, node and sequence; a v4 UUID is the coded FLURRY_E_UUID_VERSION', async () => {
    const { page, watch } = await signedIn();
    const auth = { authorization: `Bearer ${TOKEN}` };
    const { uuid } = jsonBody<{ uuid: string }>((await httpGet(svc.port, '/v1/uuids/next', auth)).body);
    const d = decodeUuid(uuid);
    const out = page.locator('#decode-out');
    for (const text of [uuid, encodeUuid(uuid, 'base32')]) {
      await page.getByLabel('ID (decimal) or UUIDv7').fill(text);
      await page.getByRole('button', { name: 'Decode', exact: true }).first().click();
      await out.locator('dl').waitFor();
      const shown = ((await out.textContent()) ?? '').replace(/,/g, '');
      assert.ok(shown.startsWith(`UUIDv7${uuid}`), shown);
      assert.ok(shown.includes(`${d.timestamp} (${d.unixMs})`), shown);
      assert.ok(shown.includes(`Node${d.node} (16 bits)`), shown);
      assert.ok(shown.includes(`Sequence${d.sequence}`), shown);
      await page.evaluate("document.getElementById('decode-out').replaceChildren()");
    }
    watch.allowStatus(400);
    await page.getByLabel('ID (decimal) or UUIDv7').fill(crypto.randomUUID());
    await page.getByRole('button', { name: 'Decode', exact: true }).first().click();
    await out.locator('.error').waitFor();
    assert.match((await out.textContent()) ?? '', /^FLURRY_E_UUID_VERSION: /);
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test('GIVEN a time range THEN the first and last ID are the layout bounds of @flurry/core', async () => {
    const { page, watch } = await signedIn();
    const from = '2026-11-25T06:00:00.000Z';
    const to = '2026-11-25T07:00:00.000Z';
    await page.getByLabel('From (ISO 8601 or Unix ms)').fill(from);
    await page.getByLabel('To (excluded)').fill(to);
    await page.getByRole('button', { name: 'Find the IDs' }).click();
    const out = page.locator('#range-out');
    await out.locator('dl').waitFor();
    const b = Layout.from('twitter').bounds(Date.parse(from), Date.parse(to));
    const text = ((await out.textContent()) ?? '').replace(/,/g, '');
    assert.ok(text.includes(`id >= ${b.min} AND id < ${b.maxExclusive}`), text);
    assert.ok(text.includes(`Last ID${b.maxExclusive - 1n}`), text);
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test('GIVEN the system switches light to dark while the page is open THEN the chart redraws in the dark colours', async () => {
    const { page, watch } = await signedIn();
    const rate = page.locator('#rate');
    // Polled from here: waitForFunction would need eval, which the page's CSP refuses.
    const strokeBecomes = async (want: string): Promise<void> => {
      const t0 = Date.now();
      while ((await rate.getAttribute('data-stroke')) !== want) {
        assert.ok(Date.now() - t0 < 5000, `chart stroke ${await rate.getAttribute('data-stroke')}, want ${want}`);
        await page.waitForTimeout(100);
      }
    };
    await strokeBecomes('#1f5fd1');
    await page.emulateMedia({ colorScheme: 'dark' });
    await strokeBecomes('#7fa8ff');
    assert.equal(await rate.locator('canvas').count(), 1, 'one chart, the old one removed');
    const points = () => rate.getAttribute('data-points').then(Number);
    const before = await points();
    assert.ok((await changed(page, points, before, 2500)) > before, 'the redrawn chart keeps taking frames');
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test('GIVEN explorer rows removed and added THEN every input keeps a unique id and its label', async () => {
    const { page, watch } = await signedIn();
    await page.getByRole('button', { name: 'Remove field 2' }).click();
    assert.equal(await page.evaluate('document.activeElement?.id'), 'xf-name-2', 'focus moves to the next row');
    await page.getByRole('button', { name: 'Add a field' }).click();
    await page.getByRole('button', { name: 'Add a field' }).click();
    const ids = await page.evaluate<string[]>(
      "[...document.querySelectorAll('#explorer-fields input')].map((e) => e.id)",
    );
    assert.equal(new Set(ids).size, ids.length, `unique ids: ${ids.join(' ')}`);
    const unlabelled = await page.evaluate(
      "[...document.querySelectorAll('#explorer-fields input')].filter((e) => e.labels.length !== 1).map((e) => e.id)",
    );
    assert.deepEqual(unlabelled, []);
    // timestamp 41 + worker 5 + sequence 12 + zone 5 + shard 5 = 68 bits: the core's own refusal.
    const rows = page.locator('#explorer-fields .field-row');
    await rows.nth(3).locator('input').nth(0).fill('zone');
    await rows.nth(4).locator('input').nth(0).fill('shard');
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator('#explorer-out .error').waitFor();
    let expected = '';
    try {
      Layout.parse('timestamp:41,worker:5,sequence:12,zone:5,shard:5');
    } catch (e) {
      expected = `${(e as { code: string }).code}: ${(e as Error).message}`;
    }
    assert.match(expected, /68 bits/);
    assert.equal(await page.locator('#explorer-out').textContent(), expected);
    assert.deepEqual(
      watch.problems.filter((p) => !/HTTP 400/.test(p) && !/status of 400/.test(p)),
      [],
    );
    await page.close();
  });
});

describe('the console in chromium: sequences (segment mode)', () => {
  let browser: Browser;
  let svc: FlurryProcess;
  let origin: string;
  before(async () => {
    browser = await launchChromium();
    svc = await startFlurry({ args: ['--sequences', 'memory://console-browser', '--auto-create'] });
    origin = `http://127.0.0.1:${svc.port}`;
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('GIVEN keys in use THEN the Sequences section lists each with its segments, position, step and last fetch', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await httpGet(svc.port, '/v1/sequences/order/next')).status, 200);
    assert.equal((await httpGet(svc.port, '/v1/sequences/invoice?count=5')).status, 200);
    const page = await newPage(browser);
    const watch = watchPage(page, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    await page.locator('#sequences').waitFor();
    assert.equal(await page.locator('#nav-seq').isVisible(), true, 'the Sequences link shows');
    const rows = (await page.locator('#seq-rows tr').allTextContents()).sort();
    const status = jsonBody<{
      sequences: Array<{ key: string; step: number; position: string; current: { from: string; to: string } }>;
    }>((await httpGet(svc.port, '/v1/status')).body).sequences;
    console.log(`sequences rows: ${JSON.stringify(rows)}`);
    assert.equal(rows.length, status.length);
    for (const s of status) {
      const row = rows.find((r) => r.startsWith(s.key)) ?? '';
      const last = BigInt(s.current.to) - 1n;
      const group = (x: string | number | bigint): string => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
      assert.ok(row.includes(`${group(s.current.from)} – ${group(last)}`), `${s.key}: current segment in ${row}`);
      assert.ok(row.includes(group(s.step)), `${s.key}: step in ${row}`);
      assert.match(row, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \([\d.]+ ms\)/, `${s.key}: last fetch in ${row}`);
    }
    assert.ok(
      rows.some((r) => r.startsWith('order') && r.includes('–4')),
      `order's position is 4 after three: ${rows.join(' | ')}`,
    );
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test('GIVEN a service without --sequences THEN the section and its link stay hidden', async () => {
    const plain = await startFlurry();
    try {
      const page = await newPage(browser);
      await page.goto(`http://127.0.0.1:${plain.port}/`);
      await page.locator('#conn.live').waitFor();
      assert.equal(await page.locator('#sequences').isHidden(), true);
      assert.equal(await page.locator('#nav-seq').isHidden(), true);
      await page.close();
    } finally {
      await plain.stop();
    }
  });
});

describe('the console in chromium: the registry cannot be read', () => {
  let browser: Browser;
  let svc: FlurryProcess;
  before(async () => {
    browser = await launchChromium();
    svc = await startFlurry();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('GIVEN the file registry replaced by a file THEN the page says why and no row is left shown as live', async () => {
    const origin = `http://127.0.0.1:${svc.port}`;
    const page = await newPage(browser);
    await page.goto(`${origin}/#cluster`);
    await page.locator('#conn.live').waitFor();
    await page.locator('#holders tr[data-state="live"]').first().waitFor();
    const cut = Date.now();
    rmSync(svc.registryDir, { recursive: true, force: true });
    writeFileSync(svc.registryDir, 'not a directory\n');
    await page.locator('#cluster-note', { hasText: 'The registry cannot be read' }).waitFor();
    const saidMs = Date.now() - cut;
    // The shared registry read is cached for about 1 s and frames come every 1 s.
    const bound = 1000 + 1000 + 2000;
    const note = (await page.locator('#cluster-note').textContent()) ?? '';
    console.log(`registry unreadable: said after ${saidMs} ms (bound ${bound} ms): ${note.slice(0, 120)}`);
    assert.ok(saidMs <= bound, `said after ${saidMs} ms, bound ${bound} ms`);
    assert.match(note, /FLURRY_E_REGISTRY_UNREACHABLE: /);
    assert.equal(await page.locator('#holders tr[data-state="live"]').count(), 0);
    assert.deepEqual(await page.locator('#holders td.state').allTextContents(), ['unknown']);
    rmSync(svc.registryDir, { force: true });
    await page.close();
  });
});
