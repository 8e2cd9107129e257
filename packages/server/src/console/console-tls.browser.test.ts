// The console over HTTPS (`--tls-cert` / `--tls-key`) in chromium (playwright-core,
// ./browser.ts): the page, its assets and its live stream come over TLS and HTTP/2 with a self-signed
// certificate made by Debian's openssl at test time (the browser context is told to accept it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startFlurry, tempDir, type FlurryProcess } from '../test-support.js';
import { launchChromium, watchPage } from '../testing/browser.js';

describe('the console over HTTPS', () => {
  const dir = tempDir('console-tls');
  let browser: Browser;
  let svc: FlurryProcess;
  before(async () => {
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key]
        .concat(['-out', cert, '-days', '1', '-subj', '/CN=flurry-console-tls'])
        .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
      { stdio: 'ignore' },
    );
    browser = await launchChromium();
    svc = await startFlurry({ args: ['--tls-cert', cert, '--tls-key', key] });
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GIVEN https THEN the page loads over h2 and live (status frames over the TLS event stream) with no console error', async () => {
    const origin = `https://127.0.0.1:${svc.port}`;
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const watch = watchPage(page, origin);
    await page.goto(`${origin}/`);
    await page.locator('#conn.live').waitFor();
    await page.locator('#layout-bar > span').first().waitFor();
    assert.equal(await page.locator('#layout-name').textContent(), 'twitter, 63 bits');
    assert.match((await page.locator('#node-held').textContent()) ?? '', /datacenter \d+ · worker \d+/);
    const protocols = await page.evaluate<string[]>(
      "performance.getEntries().filter((e) => 'nextHopProtocol' in e).map((e) => e.nextHopProtocol)",
    );
    assert.ok(protocols.length > 1, 'the page and its assets');
    assert.deepEqual(new Set(protocols), new Set(['h2']), 'the page and its assets come over h2');
    assert.ok(
      watch.requests.some((u) => u.startsWith(`${origin}/v1/events`)),
      'the live stream comes over https',
    );
    assert.deepEqual(watch.problems, []);
    await context.close();
  });
});
