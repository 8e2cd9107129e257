// The console in a real browser: Debian's chromium driven by playwright-core (./browser.ts)
// against real `flurry serve` processes on loopback. Screenshots go to a temporary folder,
// or to docs/console/ with FLURRY_CONSOLE_SCREENSHOTS=1 (how the docs' images are made).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Layout, generateKey } from '@flurry/core';
import type { Browser, Page } from 'playwright-core';
import { httpGet, startFlurry, tempDir, type FlurryProcess } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';

const TOKEN = 'console-token-0123456789abcdef';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const shots = process.env.FLURRY_CONSOLE_SCREENSHOTS === '1' ? path.join(root, 'docs/console') : tempDir('shots');

/** Status frames come at least every second (CONSOLE-CONTRACT.md); the page shows each. */
const FRAME_MS = 1000;

async function open(browser: Browser, _origin: string, width = 1280, height = 800, dark = false): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height }, colorScheme: dark ? 'dark' : 'light' });
  page.setDefaultTimeout(15_000);
  return page;
}

/** Fetches `count` IDs per request on `conns` keep-alive connections until stopped. */
function load(port: number, conns = 4, count = 1000): { stop(): Promise<number> } {
  const agent = new Agent({ keepAlive: true, maxSockets: conns });
  let running = true;
  let ids = 0;
  const loop = async (): Promise<void> => {
    while (running) {
      await new Promise<void>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: `/v1/ids?count=${count}`, agent }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) ids += count;
            resolve();
          });
        });
        req.on('error', reject);
        req.end();
      });
    }
  };
  const loops = Array.from({ length: conns }, loop);
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return ids;
    },
  };
}

async function rateNow(page: Page): Promise<number> {
  return Number((await page.locator('#rate-now').textContent())?.replace(/,/g, '') ?? 'NaN');
}

describe('the console in chromium (no token, loopback)', () => {
  let browser: Browser;
  let svc: FlurryProcess;
  let origin: string;
  before(async () => {
    browser = await launchChromium();
    svc = await startFlurry();
    origin = `http://127.0.0.1:${svc.port}`;
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('GIVEN the page THEN it loads live with no console error, no failed request, nothing outside the origin', async () => {
    const page = await open(browser, origin);
    const watch = watchPage(page, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    await page.locator('#layout-bar > span').first().waitFor();
    await page.waitForTimeout(2 * FRAME_MS);
    assert.equal(await page.locator('#layout-name').textContent(), 'twitter, 63 bits');
    assert.deepEqual(await page.locator('#layout-bar > span > b').allTextContents(), [
      'timestamp',
      'datacenter',
      'worker',
      'sequence',
      'unused',
    ]);
    assert.match((await page.locator('#node-held').textContent()) ?? '', /datacenter \d+ · worker \d+/);
    assert.equal(await page.locator('#lease-fenced').textContent(), 'no');
    assert.ok((await page.locator('#rate canvas').count()) > 0, 'the uPlot chart is drawn');
    assert.ok((await page.locator('#holders tr').count()) >= 1, 'the cluster lists this node');
    // Keyboard: the skip link comes first, every control has a label.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Skip to content');
    const unlabelled = await page.evaluate(
      "[...document.querySelectorAll('input, select')].filter((e) => e.labels.length === 0).map((e) => e.id)",
    );
    assert.deepEqual(unlabelled, []);
    assert.equal(await page.locator('#conn').getAttribute('aria-live'), 'polite');
    assert.deepEqual(watch.problems, []);
    assert.ok(
      watch.requests.some((u) => u.includes('/v1/events')),
      'the page follows the live stream',
    );
    await page.close();
  });

  test('GIVEN a known ID THEN the decoder shows its time, node and sequence', async () => {
    const page = await open(browser, origin);
    const watch = watchPage(page, origin);
    watch.allowStatus(400); // the malformed ID below
    await page.goto(`${origin}/`);
    const layout = Layout.from('twitter');
    const id = layout.compose({
      unixMs: Date.parse('2026-11-25T06:00:00.123Z'),
      sequence: 77,
      node: { datacenter: 3, worker: 17 },
    });
    await page.getByLabel('ID (decimal)').fill(id.toString());
    await page.getByRole('button', { name: 'Decode', exact: true }).first().click();
    const out = page.locator('#decode-out');
    await out.locator('dl').waitFor();
    const text = (await out.textContent()) ?? '';
    assert.match(text, /2026-11-25T06:00:00\.123Z/);
    assert.match(text, /datacenter 3 · worker 17/);
    assert.match(text, /Sequence77/);
    await page.getByLabel('ID (decimal)').fill('12x');
    await page.getByRole('button', { name: 'Decode', exact: true }).first().click();
    await out.locator('.error').waitFor();
    assert.match((await out.textContent()) ?? '', /^FLURRY_E_ID_MALFORMED: /);
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test("GIVEN 37 + 20 + 16 bits in the layout explorer THEN it shows the core library's 73-bit refusal", async () => {
    const page = await open(browser, origin);
    const watch = watchPage(page, origin);
    watch.allowStatus(400);
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator('#explorer-out dl').waitFor();
    assert.match((await page.locator('#explorer-out').textContent()) ?? '', /Bits63 of 64.*Nodes1,024/);
    for (const n of [4, 3]) await page.getByRole('button', { name: `Remove field ${n}` }).click();
    await page.locator('#xf-name-1').fill('worker');
    for (const [i, bits] of [
      [0, 37],
      [1, 20],
    ] as const)
      await page.locator(`#xf-bits-${i}`).fill(String(bits));
    await page.getByRole('button', { name: 'Add a field' }).click();
    await page.locator('#explorer-fields .field-row').nth(2).locator('input').nth(0).fill('sequence');
    await page.locator('#explorer-fields .field-row').nth(2).locator('input').nth(1).fill('16');
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator('#explorer-out .error').waitFor();
    let expected = '';
    try {
      Layout.parse('timestamp:37,worker:20,sequence:16');
    } catch (e) {
      expected = `${(e as { code: string }).code}: ${(e as Error).message}`;
    }
    assert.match(expected, /73 bits/);
    assert.equal(await page.locator('#explorer-out').textContent(), expected);
    assert.deepEqual(watch.problems, []);
    await page.close();
  });

  test('GIVEN a load THEN the rate chart moves; WHEN it stops THEN it settles to 0', async () => {
    const page = await open(browser, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    const gen = load(svc.port);
    const t0 = Date.now();
    let peak = 0;
    while (Date.now() - t0 < 6000) {
      await page.waitForTimeout(250);
      peak = Math.max(peak, await rateNow(page));
    }
    const issued = await gen.stop();
    const stopped = Date.now();
    // idsPerSecond covers the last second; one more frame shows it: 1 s + 1 frame + 2 s slack (a loaded CI).
    const bound = 1000 + FRAME_MS + 2000;
    let settledMs = -1;
    while (Date.now() - stopped < bound + 2000) {
      if ((await rateNow(page)) === 0) {
        settledMs = Date.now() - stopped;
        break;
      }
      await page.waitForTimeout(100);
    }
    const points = Number(await page.locator('#rate').getAttribute('data-points'));
    console.log(
      `rate chart: peak ${peak} IDs/s during the load (${issued} IDs in 6 s); settled to 0 after ${settledMs} ms (bound ${bound} ms); ${points} points`,
    );
    assert.ok(peak > 1000, `the chart moved under load (peak ${peak} IDs/s)`);
    assert.ok(settledMs >= 0 && settledMs <= bound, `settled after ${settledMs} ms, bound ${bound} ms`);
    assert.ok(points >= 6, `${points} points on the chart`);
    await page.close();
  });

  test('GIVEN 1280×800 and 390×844, light and dark THEN screenshots; at 390 px nothing overflows sideways', async () => {
    mkdirSync(shots, { recursive: true });
    const gen = load(svc.port, 1, 200);
    // The four pages at once: each waits three frames, which need not be waited in turn.
    const variants = [1280, 390].flatMap((w) =>
      [false, true].map((dark) => [w, w === 1280 ? 800 : 844, dark] as const),
    );
    await Promise.all(
      variants.map(async ([w, h, dark]) => {
        const page = await open(browser, origin, w, h, dark);
        await page.goto(`${origin}/`);
        await page.locator('#conn.live').waitFor();
        await page.waitForTimeout(3 * FRAME_MS);
        const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
        assert.ok(overflow <= 0, `${w} px: the page is ${overflow} px wider than the window`);
        const file = path.join(shots, `console-${w}x${h}-${dark ? 'dark' : 'light'}.png`);
        await page.screenshot({ path: file });
        assert.ok(readFileSync(file).length > 10_000, file);
        await page.close();
      }),
    );
    await gen.stop();
    console.log(`screenshots in ${shots}`);
  });

  test('GIVEN the stream goes silent (service SIGSTOPped) THEN the page says it is cut; WHEN the service resumes THEN live again', async () => {
    const page = await open(browser, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    svc.process.kill('SIGSTOP');
    const stoppedAt = Date.now();
    // A stream silent for 5 s counts as cut (api.js), checked every second, after the last frame.
    const cutBound = 5000 + 1000 + FRAME_MS + 1000;
    let cutAfter: number;
    try {
      await page.locator('#conn.cut').waitFor({ timeout: cutBound + 2000 });
      cutAfter = Date.now() - stoppedAt;
      assert.match(
        (await page.locator('#conn').textContent()) ?? '',
        /Live stream cut; polling, reconnecting in \d+ s/,
      );
    } finally {
      svc.process.kill('SIGCONT');
    }
    const resumedAt = Date.now();
    // Reconnection attempts wait 1, 2, 4 … s; one pending while stopped completes on resume.
    const liveBound = 4000 + FRAME_MS + 1000;
    await page.locator('#conn.live').waitFor({ timeout: liveBound + 2000 });
    const resumedAfter = Date.now() - resumedAt;
    console.log(
      `stream cut shown after ${cutAfter} ms (bound ${cutBound} ms); live again ${resumedAfter} ms after resume (bound ${liveBound} ms)`,
    );
    assert.ok(cutAfter <= cutBound, `cut shown after ${cutAfter} ms, bound ${cutBound} ms`);
    assert.ok(resumedAfter <= liveBound, `live again after ${resumedAfter} ms, bound ${liveBound} ms`);
    await page.close();
  });
});

describe('the console in chromium with --token', () => {
  let browser: Browser;
  let svc: FlurryProcess;
  let origin: string;
  before(async () => {
    browser = await launchChromium();
    svc = await startFlurry({ env: { FLURRY_TOKEN: TOKEN, FLURRY_PUBLIC_KEY: generateKey('C') } });
    origin = `http://127.0.0.1:${svc.port}`;
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  test('GIVEN no token THEN 401 and the page asks for it; WHEN entered THEN the console, and it survives a reload', async () => {
    const page = await open(browser, origin);
    const watch = watchPage(page, origin);
    watch.allowStatus(401);
    const statuses: number[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/v1/status')) statuses.push(r.status());
    });
    await page.goto(`${origin}/`);
    await page.getByLabel('Bearer token').waitFor();
    assert.deepEqual(statuses, [401]);
    assert.equal(await page.locator('#content').isHidden(), true);
    await page.getByLabel('Bearer token').fill('wrong-token-0123456789abcdef');
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.locator('#login-error').filter({ hasText: 'refused' }).waitFor();
    await page.getByLabel('Bearer token').fill(TOKEN);
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.locator('#conn.live').waitFor();
    assert.deepEqual(statuses, [401, 401, 200]);
    assert.equal(await page.evaluate("sessionStorage.getItem('flurry.console.token')"), TOKEN);
    const events = watch.requests.filter((u) => u.includes('/v1/events'));
    assert.ok(
      events.length > 0 && events.every((u) => u.includes(`?token=${TOKEN}`)),
      'the token in the query on /v1/events',
    );
    assert.ok(
      watch.requests.every((u) => !u.includes('token=') || u.includes('/v1/events')),
      'the token in no other URL',
    );
    // Decode a public ID (the service has a key): the ID and fields behind it.
    const auth = { authorization: `Bearer ${TOKEN}` };
    const { publicId } = JSON.parse((await httpGet(svc.port, '/v1/public-ids/next', auth)).body) as {
      publicId: string;
    };
    const behind = JSON.parse((await httpGet(svc.port, `/v1/public-ids/${publicId}`, auth)).body) as { id: string };
    await page.getByLabel('Public ID').fill(publicId);
    await page.locator('#public button[type=submit]').click();
    await page.locator('#public-out dl').waitFor();
    assert.match(
      (await page.locator('#public-out').textContent()) ?? '',
      new RegExp(`^ID${behind.id.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}Time`),
    );
    await page.reload();
    await page.locator('#conn.live').waitFor();
    assert.equal(await page.locator('#login').isHidden(), true);
    assert.deepEqual(watch.problems, []);
    await page.close();
  });
});
