/**
 * The registry conformance suite against the embedded file registry (a fresh directory
 * per test, all removed afterwards), with its file-system steps asynchronous (the default)
 * and, for the holders that run it, synchronous (`fileIo: 'sync'`, what the CLI's `next` uses).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { runHoldersConformance } from './holders.js';
import { runConformance } from './suite.js';

const base = mkdtempSync(path.join(tmpdir(), 'flurry-file-reg-'));
after(() => rmSync(base, { recursive: true, force: true }));

runConformance({ name: 'file', url: () => `file:${mkdtempSync(path.join(base, 'r-'))}` });
runHoldersConformance({ name: 'file', url: () => `file:${mkdtempSync(path.join(base, 'h-'))}` });
runConformance({
  name: 'file (fileIo sync)',
  url: () => `file:${mkdtempSync(path.join(base, 's-'))}`,
  holderConfig: () => ({ fileIo: 'sync' }),
});
