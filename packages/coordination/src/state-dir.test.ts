import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeDirLevels, makeDirLevelsSync } from './state-dir.js';

const root = mkdtempSync(path.join(tmpdir(), 'flurry-state-dir-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Both forms of the one walk, run on the same input. */
const forms = {
  async: (dir: string) => makeDirLevels(dir, 2000),
  sync: (dir: string) => new Promise<void>((resolve) => resolve(makeDirLevelsSync(dir))),
};

function errnoError(code: string, text: string) {
  return (e: unknown): true => {
    assert.equal((e as NodeJS.ErrnoException).code, code, String(e));
    assert.ok((e as Error).message.includes(text), (e as Error).message);
    return true;
  };
}

describe('state-dir: makeDirLevels and makeDirLevelsSync walk the same way', () => {
  for (const [name, make] of Object.entries(forms)) {
    it(`GIVEN a missing directory three levels deep THEN the ${name} form creates each level, and again is a no-op`, async () => {
      const dir = path.join(root, name, 'x', 'y', 'z');
      await make(dir);
      assert.ok(statSync(dir).isDirectory());
      await make(dir);
      assert.ok(statSync(dir).isDirectory());
    });

    it(`GIVEN a level that is a regular file THEN the ${name} form fails with ENOTDIR naming that file`, async () => {
      const file = path.join(root, `${name}-plain`);
      writeFileSync(file, 'x');
      await assert.rejects(make(path.join(file, 'a', 'b')), errnoError('ENOTDIR', `${file} is not a directory`));
      await assert.rejects(make(file), errnoError('ENOTDIR', `${file} is not a directory`));
    });

    it(`GIVEN /proc (ENOENT for a level whose parent exists) THEN the ${name} form fails naming that level`, async () => {
      await assert.rejects(make('/proc/flurry-a/b'), errnoError('ENOENT', 'cannot create /proc/flurry-a although'));
    });
  }
});
