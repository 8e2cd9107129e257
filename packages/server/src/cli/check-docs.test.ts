import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../test-support.js';

// scripts/check-docs.mjs runs the doc blocks marked `<!-- check: cli -->` / `<!-- check: ts -->`
// and compares their output with the samples (docs/architecture.md#docs-are-tested).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const checker = path.join(root, 'scripts', 'check-docs.mjs');

function check(files: string[]): { status: number | null; stdout: string } {
  const r = spawnSync(process.execPath, [checker, ...files], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: `${r.stdout}${r.stderr}` };
}

test('GIVEN the real README.md and docs/*.md THEN every marked sample matches the code (exit 0)', () => {
  const { status, stdout } = check([]);
  assert.equal(status, 0, stdout);
  const passed = stdout.split('\n').filter((l) => / pass$/.test(l));
  assert.ok(passed.length >= 8, `at least 8 checked samples, got ${passed.length}:\n${stdout}`);
});

test('GIVEN a doc whose CLI sample output is wrong THEN the checker exits 1 naming that file:line', () => {
  const dir = tempDir('check-docs');
  try {
    const text = readFileSync(path.join(root, 'docs', 'public-ids.md'), 'utf8');
    const lines = text.split('\n');
    const at = lines.indexOf('K5P1wyqYb9IVBDrr');
    assert.ok(at > 0, 'the public encode sample');
    let fence = at;
    while (!lines[fence].startsWith('```')) fence--;
    assert.equal(lines[fence - 1], '<!-- check: cli -->');
    lines[at] = 'K5P1wyqYb9IVBDrX';
    const file = path.join(dir, 'public-ids.md');
    writeFileSync(file, lines.join('\n'));
    const { status, stdout } = check([file]);
    assert.equal(status, 1, stdout);
    assert.match(
      stdout,
      new RegExp(`public-ids\\.md:${fence + 1}: FAIL\\n\\s+- K5P1wyqYb9IVBDrX\\n\\s+\\+ K5P1wyqYb9IVBDrr`),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN a doc whose ts sample states a wrong value THEN the checker exits 1 naming the line', () => {
  const dir = tempDir('check-docs-ts');
  try {
    const text = readFileSync(path.join(root, 'docs', 'layouts.md'), 'utf8');
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes("// '2DLDg5GS06C'"));
    assert.ok(at > 0, 'the encodeId sample');
    lines[at] = lines[at].replace("'2DLDg5GS06C'", "'2DLDg5GS06X'");
    const file = path.join(dir, 'layouts.md');
    writeFileSync(file, lines.join('\n'));
    const { status, stdout } = check([file]);
    assert.equal(status, 1, stdout);
    assert.match(stdout, new RegExp(`line ${at + 1}: expected '2DLDg5GS06X', got '2DLDg5GS06C'`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
