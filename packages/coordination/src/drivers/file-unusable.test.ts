/**
 * A `file:` registry on a directory that cannot hold one fails at open, within its connect timeout, with a
 * message naming the directory, whatever the file system does (issue 17, part 3): /proc (where Node's recursive
 * mkdir loops forever), a path under a file, and a file-system step that never answers (a FIFO nobody writes to,
 * in place of a record: reading it blocks like a hung mount).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, systemClock } from '@flurry/core';
import { openRegistry } from '../open-registry.js';
import { createFileDriver, openFileDriver } from './file.js';
import { makeDirLevels } from '../state-dir.js';
import { holder } from './test-kit.js';

const root = mkdtempSync(path.join(tmpdir(), 'flurry-unusable-'));
after(() => rmSync(root, { recursive: true, force: true }));

function unreachable(e: unknown, dir: string): true {
  assert.ok(e instanceof FlurryError, String(e));
  assert.equal(e.code, 'FLURRY_E_REGISTRY_UNREACHABLE', e.message);
  assert.ok(e.message.includes(dir), e.message);
  return true;
}

describe('file registry on a directory that cannot hold one', () => {
  it('GIVEN file:/proc/reg THEN openRegistry rejects within its connect timeout naming /proc/reg (no endless mkdir)', async () => {
    const t0 = performance.now();
    await assert.rejects(openRegistry('file:/proc/reg', { connectTimeoutMs: 2000, stateDir: root }), (e) =>
      unreachable(e, '/proc/reg'),
    );
    assert.ok(performance.now() - t0 < 2000 + 1000, `took ${Math.round(performance.now() - t0)} ms`);
    await assert.rejects(openRegistry('file:/proc/a/b/c', { connectTimeoutMs: 2000, stateDir: root }), (e) =>
      unreachable(e, '/proc/a'),
    );
  });

  it('GIVEN a directory below a regular file THEN openRegistry rejects naming the file that is not a directory', async () => {
    const file = path.join(root, 'plain');
    writeFileSync(file, 'x');
    await assert.rejects(openRegistry(`file:${file}/reg`, { connectTimeoutMs: 2000, stateDir: root }), (e) =>
      unreachable(e, `${file} is not a directory`),
    );
  });

  it('GIVEN a missing directory three levels deep THEN makeDirLevels creates each level and openFileDriver proves it', async () => {
    const dir = path.join(root, 'x', 'y', 'z');
    await makeDirLevels(dir, 2000);
    await makeDirLevels(dir, 2000); // existing: nothing to do
    const d = await openFileDriver(path.join(root, 'p', 'q'), { clock: systemClock, timeoutMs: 2000 });
    assert.equal(d.url, `file:${path.join(root, 'p', 'q')}`);
    await d.close();
  });

  it('GIVEN a file-system step that never answers THEN the claim fails after timeoutMs naming the step, not hanging', async (t) => {
    if (spawnSync('mkfifo', ['--version']).status !== 0) assert.fail('mkfifo (coreutils) is needed for this test');
    const dir = path.join(root, 'hung');
    const d = createFileDriver(dir, { clock: systemClock, timeoutMs: 300 });
    const c = await d.claim({ namespace: 'hung', slots: 1, ttlMs: 5000, holder: holder('a') });
    await d.release(c, { highWaterMs: 1 });
    // The slot's high-water file becomes a FIFO: opening it for reading blocks until a writer appears.
    const hw = path.join(dir, 'hung', 'slots', '0', 'hw');
    unlinkSync(hw);
    assert.equal(spawnSync('mkfifo', [hw]).status, 0);
    t.after(() => {
      // Unblock the reader still waiting in the thread pool so the process can exit.
      const fd = openSync(hw, constants.O_WRONLY | constants.O_NONBLOCK);
      closeSync(fd);
    });
    const t0 = performance.now();
    await assert.rejects(d.claim({ namespace: 'hung', slots: 1, ttlMs: 5000, holder: holder('b') }), (e) => {
      unreachable(e, `read ${hw} did not finish within 300 ms`);
      assert.equal((e as FlurryError).details.errno, 'ETIMEDOUT');
      return true;
    });
    assert.ok(performance.now() - t0 < 300 + 2000, `took ${Math.round(performance.now() - t0)} ms`);
    await d.close();
  });

  it('GIVEN io sync and a FIFO in place of a record THEN the claim fails at once naming the file, not hanging (reads never block)', async () => {
    if (spawnSync('mkfifo', ['--version']).status !== 0) assert.fail('mkfifo (coreutils) is needed for this test');
    const dir = path.join(root, 'fifo-sync');
    const d = createFileDriver(dir, { clock: systemClock, timeoutMs: 60_000, io: 'sync' });
    const c = await d.claim({ namespace: 'f', slots: 1, ttlMs: 5000, holder: holder('a') });
    await d.release(c, { highWaterMs: 1 });
    const hw = path.join(dir, 'f', 'slots', '0', 'hw');
    unlinkSync(hw);
    assert.equal(spawnSync('mkfifo', [hw]).status, 0);
    const t0 = performance.now();
    await assert.rejects(d.claim({ namespace: 'f', slots: 1, ttlMs: 5000, holder: holder('b') }), (e) => {
      unreachable(e, `${hw} is not a regular file`);
      assert.equal((e as FlurryError).details.errno, 'EFTYPE');
      return true;
    });
    // A sync step that blocked would never return (no timer can fire); the 60 s step limit is not what ended it.
    assert.ok(performance.now() - t0 < 10_000, `took ${Math.round(performance.now() - t0)} ms`);
    await d.close();
  });
});
