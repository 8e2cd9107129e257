#!/usr/bin/env node
// Checks that every exported declaration in packages/*/src (tests excluded) has a TSDoc
// block right above it (blank lines allowed in between) containing an @example tag.
// Prints `file:line name` for each miss and exits 1 if there is any.
//
//   node scripts/check-tsdoc.mjs              # every package
//   node scripts/check-tsdoc.mjs core client  # only these packages
//
// An overload signature shares the TSDoc block of the first signature above it.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.slice(2);
const pkgs = only.length ? only : readdirSync(path.join(root, 'packages'));

const EXPORT =
  /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|interface|type|const|let|enum)\s+([A-Za-z_$][\w$]*)/;

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    // gen-* folders hold generated code (protoc-gen-es), documented by its .proto.
    if (e.isDirectory()) {
      if (!e.name.startsWith('gen-')) yield* tsFiles(p);
    } else if (/\.c?ts$/.test(e.name) && !/\.test\.c?ts$/.test(e.name) && !/\.d\.c?ts$/.test(e.name)) yield p;
  }
}

/** The TSDoc block (`/** … *\/`) ending right above line `i` (blank lines skipped), or undefined. */
function docAbove(lines, i) {
  let j = i - 1;
  while (j >= 0 && lines[j].trim() === '') j--;
  if (j < 0 || !lines[j].trim().endsWith('*/')) return undefined;
  const end = j;
  // Up to the line that opens the block; every line in between is a ` * …` line.
  while (j >= 0 && !lines[j].trim().startsWith('/*')) {
    if (j < end && !lines[j].trim().startsWith('*')) return undefined;
    j--;
  }
  if (j < 0 || !lines[j].trim().startsWith('/**')) return undefined;
  return { start: j, text: lines.slice(j, end + 1).join('\n') };
}

const misses = [];
for (const pkg of pkgs) {
  const src = path.join(root, 'packages', pkg, 'src');
  if (!existsSync(src)) continue;
  for (const file of tsFiles(src)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = EXPORT.exec(line);
      if (!m) return;
      const name = m[1];
      let at = i;
      // Overloads: walk up over earlier signatures of the same function to the first one.
      for (;;) {
        let j = at - 1;
        while (j >= 0 && lines[j].trim() === '') j--;
        const prev = j >= 0 ? EXPORT.exec(lines[j]) : null;
        if (prev && prev[1] === name && /\bfunction\b/.test(lines[j])) at = j;
        else break;
      }
      const doc = docAbove(lines, at);
      if (!doc || !/@example\b/.test(doc.text)) {
        misses.push(`${path.relative(root, file)}:${i + 1} ${name}${doc ? '' : ' (no TSDoc block)'}`);
      }
    });
  }
}
for (const m of misses) console.log(m);
if (misses.length) {
  console.error(`check-tsdoc: ${misses.length} export(s) without an @example in their TSDoc`);
  process.exit(1);
}
console.error('check-tsdoc: every export has an @example');
