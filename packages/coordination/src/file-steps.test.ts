import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError, systemClock } from '@flurry/core';
import { createFileDriver } from './drivers/file.js';
import { holder } from './drivers/test-kit.js';
import { fileSteps, localFileSystem, writeFileAtomicWithin, type FileIo } from './file-steps.js';
import { openRegistry } from './open-registry.js';

const root = mkdtempSync(path.join(tmpdir(), 'flurry-steps-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => {
  const d = path.join(root, `t${n++}`);
  return d;
};

/** The error code a step rejects with, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return String((e as NodeJS.ErrnoException).code);
  }
}

describe('file-system steps', () => {
  test('GIVEN the same sequence of steps in both modes THEN each step has the same outcome and error code', async () => {
    const seen: Record<FileIo, string[]> = { async: [], sync: [] };
    for (const io of ['async', 'sync'] as const) {
      const s = fileSteps(io);
      assert.equal(s.io, io);
      const d = fresh();
      const f = path.join(d, 'f');
      const out = seen[io];
      out.push(await outcome(s.mkdir(path.join(d, 'a', 'b'), 1000))); // parent missing: ENOENT
      out.push(await outcome(s.mkdir(d, 1000)));
      out.push(await outcome(s.mkdir(d, 1000))); // EEXIST
      out.push(await outcome(s.readText(f, 1000))); // ENOENT
      out.push(await outcome(s.writeNew(f, 'one\n', 1000, true)));
      out.push(await outcome(s.writeNew(f, 'two\n', 1000, false))); // EEXIST: never overwrites
      assert.equal(await s.readText(f, 1000), 'one\n');
      out.push(await outcome(s.link(f, `${f}.l`, 1000)));
      out.push(await outcome(s.link(f, `${f}.l`, 1000))); // EEXIST: the registry's atomic create
      out.push(await outcome(s.unlink(`${f}.l`, 1000)));
      out.push(await outcome(s.unlink(`${f}.l`, 1000))); // ENOENT
      await writeFileAtomicWithin(s, f, 'three\n', 1000);
      assert.equal(await s.readText(f, 1000), 'three\n');
      assert.deepEqual((await s.list(d, 1000)).sort(), ['f'], 'no temporary file is left behind');
      assert.ok((await s.stat(f, 1000)).isFile());
      out.push(await outcome(s.list(path.join(d, 'none'), 1000)));
    }
    assert.deepEqual(seen.sync, seen.async);
    assert.deepEqual(seen.async, [
      'ENOENT',
      'ok',
      'EEXIST',
      'ENOENT',
      'ok',
      'EEXIST',
      'ok',
      'EEXIST',
      'ok',
      'ENOENT',
      'ENOENT',
    ]);
  });

  test('GIVEN a FIFO nobody writes to THEN the async read times out naming it and the sync read refuses it at once', async (t) => {
    if (spawnSync('mkfifo', ['--version']).status !== 0) assert.fail('mkfifo (coreutils) is needed for this test');
    const fifo = path.join(root, 'fifo');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    t.after(() => closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))); // frees the pool thread
    await assert.rejects(fileSteps('async').readText(fifo, 200), (e: NodeJS.ErrnoException) => {
      assert.equal(e.code, 'ETIMEDOUT');
      assert.match(e.message, new RegExp(`read ${fifo} did not finish within 200 ms`));
      return true;
    });
    await assert.rejects(fileSteps('sync').readText(fifo, 200), (e: NodeJS.ErrnoException) => {
      assert.equal(e.code, 'EFTYPE');
      assert.match(e.message, /is not a regular file/);
      return true;
    });
  });

  test('GIVEN statfs type numbers THEN local disk and memory file systems are named and network, FUSE and unknown ones are not', () => {
    assert.equal(localFileSystem(0xef53, 'linux'), 'ext2/3/4');
    assert.equal(localFileSystem(0x58465342, 'linux'), 'xfs');
    assert.equal(localFileSystem(0x9123683e | 0, 'linux'), 'btrfs', 'a type above 2^31 read as a negative number');
    assert.equal(localFileSystem(0x01021994, 'linux'), 'tmpfs');
    assert.equal(localFileSystem(0x794c7630, 'linux'), 'overlayfs');
    for (const remote of [
      0x6969 /* nfs */, 0x65735546 /* fuse */, 0xff534d42 /* cifs */, 0xfe534d42 /* smb2 */, 0x00c36400 /* ceph */,
      0x01021997 /* 9p */, 0x1234,
    ])
      assert.equal(localFileSystem(remote, 'linux'), undefined, remote.toString(16));
    assert.equal(localFileSystem(0xef53, 'darwin'), undefined, 'the numbers are Linux numbers');
  });

  test('GIVEN io sync THEN the driver runs sync after its first claim on a local disk, and io async stays async', async () => {
    for (const io of ['async', 'sync'] as const) {
      const dir = fresh();
      const d = createFileDriver(dir, { clock: systemClock, io });
      assert.equal((d as unknown as { io: FileIo }).io, 'async', 'before the first operation');
      const c = await d.claim({ namespace: 'm', slots: 2, ttlMs: 5000, holder: holder('a') });
      // The directory did not exist before the claim: the mode was decided on its nearest existing parent.
      const local = localFileSystem(statfsSync(dir).type) !== undefined;
      assert.equal((d as unknown as { io: FileIo }).io, io === 'sync' && local ? 'sync' : 'async');
      await d.renew(c, { ttlMs: 5000, highWaterMs: 5 });
      await d.release(c, { highWaterMs: 7 });
      assert.ok(existsSync(path.join(dir, 'm', 'slots', '0', 'hw')));
      assert.deepEqual(
        readdirSync(path.join(dir, 'm', 'slots', '0')).filter((f) => f.includes('.tmp-') || f.startsWith('.new-')),
        [],
      );
      await d.close();
    }
    assert.ok(
      localFileSystem(statfsSync('/dev/shm').type) !== undefined,
      'on Linux /dev/shm is tmpfs, a local file system',
    );
  });

  test('GIVEN io or fileIo other than async or sync THEN FLURRY_E_REGISTRY_OPTION names the allowed values', async () => {
    assert.throws(
      () => createFileDriver(fresh(), { clock: systemClock, io: 'fast' as FileIo }),
      (e: unknown) =>
        e instanceof FlurryError && e.code === 'FLURRY_E_REGISTRY_OPTION' && /'async'.*'sync'/.test(e.message),
    );
    await assert.rejects(
      openRegistry(`file:${fresh()}`, { fileIo: 'blocking' as FileIo }),
      (e: unknown) =>
        e instanceof FlurryError && e.code === 'FLURRY_E_REGISTRY_OPTION' && /fileIo must be 'async'/.test(e.message),
    );
  });
});
