#!/usr/bin/env node
// The weight of the house (issue 25): production lines, @example tags, the share of comment
// lines, files over 500 lines, and the lines a newcomer reads to follow `GET /v1/ids/next`
// from the socket to the generator and back. One JSON line; `--table` adds a Markdown table.
//
//   node scripts/house-figures.mjs [--table]
//
// Production code: `.ts`/`.cts` under packages/*/src without tests, test harnesses
// (testing/, conformance/, *test-kit*, *test-support*, http/inject.ts, http/in-process.ts,
// sql/generate-cases.ts) and generated code (gen-*), the rule of the before-stop hook.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOT_PRODUCTION =
  /\.test\.ts$|\/testing\/|\/conformance\/|test-kit|test-support|\/gen-|inject\.ts$|in-process\.ts$|generate-cases/;

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (/\.c?ts$/.test(e.name) && !/\.d\.c?ts$/.test(e.name)) yield p;
  }
}

/** Lines, comment lines (inside `/* … *\/` or starting with `//`) and @example tags of one file. */
function measure(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  let comments = 0;
  let examples = 0;
  let inBlock = false;
  for (const line of lines) {
    const t = line.trim();
    if (/@example\b/.test(t)) examples++;
    if (inBlock) {
      comments++;
      if (t.includes('*/')) inBlock = false;
    } else if (t.startsWith('/*')) {
      comments++;
      inBlock = !t.includes('*/');
    } else if (t.startsWith('//')) comments++;
  }
  return { lines: lines.length, comments, examples };
}

const production = [];
for (const pkg of readdirSync(path.join(root, 'packages'))) {
  const src = path.join(root, 'packages', pkg, 'src');
  try {
    for (const f of files(src)) if (!NOT_PRODUCTION.test(f)) production.push(f);
  } catch {
    // a folder without src/
  }
}
let lines = 0;
let comments = 0;
let examples = 0;
const over500 = [];
for (const f of production) {
  const m = measure(f);
  lines += m.lines;
  comments += m.comments;
  examples += m.examples;
  if (m.lines > 500) over500.push(`${path.relative(root, f)} (${m.lines})`);
}

// The files a request for one ID crosses, in the order it crosses them. Since the generator
// follows its lease (issue 25 part 4) the issuer calls the Generator directly: the leased
// wrapper (coordination's leased-generator.ts) sets it up and is not on a request's path.
const ID_PATH = [
  'packages/server/src/http/server.ts',
  'packages/server/src/http/handler.ts',
  'packages/server/src/http/headers.ts',
  'packages/server/src/http/auth.ts',
  'packages/server/src/http/route.ts',
  'packages/server/src/http/routes/ids.ts',
  'packages/server/src/issuing.ts',
  'packages/core/src/generator/generator.ts',
  'packages/core/src/generator/local-ticks.ts',
  'packages/core/src/generator/tick-ids.ts',
  'packages/core/src/generator/tick-planner.ts',
  'packages/core/src/lease.ts',
  'packages/core/src/clock.ts',
  'packages/core/src/platform/node.ts',
  'packages/server/src/http/respond.ts',
];
const idPath = ID_PATH.map((f) => ({ file: f, lines: measure(path.join(root, f)).lines }));
const idPathLines = idPath.reduce((a, b) => a + b.lines, 0);

const figures = {
  productionLines: lines,
  productionFiles: production.length,
  exampleTags: examples,
  commentShare: Math.round((comments / lines) * 1000) / 1000,
  filesOver500: over500,
  idNextPathLines: idPathLines,
  targets: { productionLines: 26000, exampleTags: 300, commentShare: 0.22, idNextPathLines: 2500 },
};
console.log(JSON.stringify(figures));
if (process.argv.includes('--table')) {
  const t = figures.targets;
  const ok = (v, max) => (v <= max ? 'met' : 'not yet');
  console.log(
    [
      '| figure | now | aim | |',
      '| --- | ---: | ---: | --- |',
      `| production lines | ${lines} | ≤ ${t.productionLines} | ${ok(lines, t.productionLines)} |`,
      `| \`@example\` tags | ${examples} | ≤ ${t.exampleTags} | ${ok(examples, t.exampleTags)} |`,
      `| comment lines | ${(figures.commentShare * 100).toFixed(1)}% | ≤ 22% | ${ok(figures.commentShare, t.commentShare)} |`,
      `| files over 500 lines | ${over500.length} | 0 | ${ok(over500.length, 0)} |`,
      `| lines on the path of \`GET /v1/ids/next\` | ${idPathLines} | ≤ ${t.idNextPathLines} | ${ok(idPathLines, t.idNextPathLines)} |`,
    ].join('\n'),
  );
  console.log('\nThe path of `GET /v1/ids/next`:\n');
  for (const p of idPath) console.log(`- \`${p.file}\` (${p.lines})`);
}
