/**
 * docs/orm.md shows the code `orm.test.ts` runs: each ```ts block preceded by
 * `<!-- orm: FILE#REGION -->` must equal the lines between `// #region REGION` and
 * `// #endregion REGION` of packages/server/src/testing/orm/FILE (common indentation removed), and
 * every region of those files must be shown in the doc.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', '..');
const srcDir = path.join(root, 'packages', 'server', 'src', 'testing', 'orm');
const docPath = path.join(root, 'docs', 'orm.md');

function dedent(lines: string[]): string[] {
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent));
}

/** `file#region` → its lines, for every region of every sample file. */
function regions(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of readdirSync(srcDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const lines = readFileSync(path.join(srcDir, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = /^\s*\/\/ #region (\S+)$/.exec(line);
      if (!m) return;
      const end = lines.findIndex((l, j) => j > i && l.trim() === `// #endregion ${m[1]}`);
      assert.ok(end > i, `${file}: #region ${m[1]} has no #endregion`);
      out.set(`${file}#${m[1]}`, dedent(lines.slice(i + 1, end)));
    });
  }
  return out;
}

/** `file#region` → the ```ts block the doc shows for it. */
function docBlocks(): Map<string, string[]> {
  const lines = readFileSync(docPath, 'utf8').split('\n');
  const out = new Map<string, string[]>();
  lines.forEach((line, i) => {
    const m = /^<!--\s*orm:\s*(\S+)\s*-->$/.exec(line);
    if (!m) return;
    assert.equal(lines[i + 1], '```ts', `docs/orm.md:${i + 1}: the marker must stand right above a \`\`\`ts block`);
    const end = lines.findIndex((l, j) => j > i + 1 && l === '```');
    out.set(m[1], lines.slice(i + 2, end));
  });
  return out;
}

test('GIVEN docs/orm.md THEN every sample block is exactly the code the ORM tests run, and every sample region is shown', () => {
  const code = regions();
  const doc = docBlocks();
  assert.ok(code.size >= 6, `regions found: ${[...code.keys()].join(', ')}`);
  for (const [key, lines] of doc) {
    assert.ok(code.has(key), `docs/orm.md shows ${key}, which no sample file has`);
    assert.deepEqual(lines, code.get(key), `docs/orm.md's block for ${key} differs from the code`);
  }
  for (const key of code.keys()) assert.ok(doc.has(key), `${key} is not shown in docs/orm.md`);
});
