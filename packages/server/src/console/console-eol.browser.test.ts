// The console in chromium shows a layout's time left in its warning colour within a year
// of the layout's end of life (issue 29, part 4), and in the ordinary colour otherwise.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startFlurry } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';

let browser: Browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

/** The end-of-life cell of a service's console page: its text, class and colour. */
async function eolCell(args: string[]): Promise<{ text: string; cls: string; color: string; warn: string }> {
  const svc = await startFlurry({ args });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(15_000);
  try {
    const origin = `http://127.0.0.1:${svc.port}`;
    const watch = watchPage(page, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    // A locator, not waitForFunction: that would need eval once it polls, which the page's CSP refuses.
    await page.locator('#layout-eol', { hasText: /\(in / }).waitFor({ state: 'attached' });
    const cell = page.locator('#layout-eol');
    const out = {
      text: (await cell.textContent()) ?? '',
      cls: (await cell.getAttribute('class')) ?? '',
      color: await page.evaluate<string>("getComputedStyle(document.getElementById('layout-eol')).color"),
      // The page's --warn colour, resolved the same way.
      warn: await page.evaluate<string>(
        "(() => { const p = document.createElement('span'); p.style.color = 'var(--warn)'; document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; })()",
      ),
    };
    assert.deepEqual(watch.problems, []);
    return out;
  } finally {
    await page.close();
    await svc.stop();
  }
}

test('GIVEN a layout ending in about 197 days THEN the console shows the time left in the warning colour; GIVEN twitter THEN not', async () => {
  const soon = await eolCell([
    '--fields',
    'timestamp:35,worker:10,sequence:12',
    '--epoch',
    String(Date.now() - 200 * 86_400_000),
  ]);
  assert.match(soon.text, /\(in 19\d days\)/, soon.text);
  assert.equal(soon.cls, 'warn');
  assert.equal(soon.color, soon.warn, 'the --warn colour');

  const calm = await eolCell([]);
  assert.equal(calm.cls, '');
  assert.notEqual(calm.color, calm.warn);
});
