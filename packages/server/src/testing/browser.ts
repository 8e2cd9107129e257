/**
 * A real browser for the console's tests and benchmark: Debian's `chromium` (installed
 * with apt-get when missing, like the registry engines of `@flurry/coordination/testing`)
 * driven by `playwright-core` (a devDependency) through its `executablePath`. Nothing is
 * downloaded: without the package and no way to install it, it fails naming the package.
 */
import { existsSync } from 'node:fs';
import { ensureDebianPackage } from '@flurry/coordination/testing';
import type { Browser, Page } from 'playwright-core';

/** Where Debian's chromium lives. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Installs (when missing) and launches headless chromium.
 *
 * @throws Error naming the Debian package `chromium` when it is missing and cannot be
 * installed, or `playwright-core` when that devDependency is not installed.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    try {
      ensureDebianPackage('chromium', CHROMIUM_PATH);
    } catch (err) {
      throw new Error(
        `the console's browser tests need Debian's "chromium" package at ${CHROMIUM_PATH}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  let pw: typeof import('playwright-core');
  try {
    pw = await import('playwright-core');
  } catch (err) {
    throw new Error(
      'the console\'s browser tests need the npm package "playwright-core" (a devDependency of @flurry/server): run npm ci',
      { cause: err },
    );
  }
  return pw.chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Root (CI, containers) cannot use chromium's sandbox; the page is our own.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-first-run', '--disable-gpu'],
  });
}

/**
 * What a page did that a clean console never does: console errors, page errors, failed
 * requests, HTTP errors, and requests to any other origin.
 */
export interface PageWatch {
  /** One line per problem. */
  readonly problems: string[];
  /** Every URL requested. */
  readonly requests: string[];
  /** Ignore HTTP errors with this status from now on (e.g. 401 in the token flow). */
  allowStatus(status: number): void;
}

/** Watches a page for problems (see {@link PageWatch}). */
export function watchPage(page: Page, origin: string): PageWatch {
  const problems: string[] = [];
  const requests: string[] = [];
  const allowed = new Set<number>();
  page.on('console', (m) => {
    if (m.type() === 'error' && !(allowed.size > 0 && /status of (\d+)/.test(m.text()) && allowedStatus(m.text())))
      problems.push(`console error: ${m.text()}`);
  });
  const allowedStatus = (text: string): boolean => allowed.has(Number(/status of (\d+)/.exec(text)?.[1]));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    requests.push(r.url());
    if (!r.url().startsWith(origin + '/')) problems.push(`request leaving the origin: ${r.url()}`);
  });
  page.on('requestfailed', (r) => {
    // A stream or poll cut by navigation or by closing the page is not a failure.
    const why = r.failure()?.errorText ?? '';
    if (!/ERR_ABORTED/.test(why)) problems.push(`request failed: ${r.url()} ${why}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allowed.has(r.status())) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return { problems, requests, allowStatus: (s) => allowed.add(s) };
}
