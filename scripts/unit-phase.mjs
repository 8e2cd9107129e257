#!/usr/bin/env node
// The unit-test phase of `npm test` (issue 25's figure): the durations of the top-level
// tests of every file, summed, read from the TAP that `npm test` prints when its output is
// not a terminal (`npm test > test.log`, or CI's log). Prints one JSON line.
//   node scripts/unit-phase.mjs test.log [--top N]
import { readFileSync } from 'node:fs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/unit-phase.mjs TEST_LOG [--top N]');
  process.exit(2);
}
const top = rest[0] === '--top' ? Number(rest[1]) : 0;
const lines = readFileSync(file, 'utf8').split('\n');
const tests = [];
let skipped = 0;
for (let i = 0; i < lines.length; i++) {
  const m = /^(?:not )?ok \d+ - (.*)$/.exec(lines[i]);
  if (!m) continue;
  for (let j = i + 1; j < Math.min(i + 6, lines.length); j++) {
    const d = /^ {2}duration_ms: ([\d.]+)/.exec(lines[j]);
    if (d) {
      tests.push({ name: m[1], s: Number(d[1]) / 1000 });
      break;
    }
  }
}
for (const l of lines) if (/# SKIP/.test(l)) skipped++;
const seconds = tests.reduce((a, t) => a + t.s, 0);
console.log(
  JSON.stringify({
    topLevelTests: tests.length,
    seconds: Math.round(seconds),
    skipped,
    baseline: 673,
    aim: Math.round(673 * 0.8),
  }),
);
if (top > 0)
  for (const t of [...tests].sort((a, b) => b.s - a.s).slice(0, top))
    console.log(`${t.s.toFixed(1).padStart(7)} ${t.name}`);
