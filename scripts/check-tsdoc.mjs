#!/usr/bin/env node
// Checks that every name a user can import (reachable from a package's `exports` in its
// package.json) has a TSDoc block. Internal code needs none, and an @example is never
// required: write one only where it teaches what the signature does not. Prints
// `file:line name` for each miss and exits 1 if there is any. Uses TypeScript's own
// checker, so re-exports (`export { x } from`, `export *`) are followed to the declaration.
//
//   node scripts/check-tsdoc.mjs              # every package
//   node scripts/check-tsdoc.mjs core client  # only these packages
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.slice(2);
const pkgs = only.length ? only : readdirSync(path.join(root, 'packages'));

/** The source file behind an `exports` target (`./dist/x.js` → `src/x.ts` or `src/x.cts`). */
function sourceOf(pkgDir, target) {
  const rel = target.replace(/^\.\/dist\//, '').replace(/\.c?js$/, '');
  for (const ext of ['.ts', '.cts']) {
    const file = path.join(pkgDir, 'src', rel + ext);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** The entry files of a package: the `default` (or `import`/`require`) target of each subpath. */
function entries(pkgDir) {
  const { exports } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  const targets = [];
  for (const value of Object.values(exports ?? {})) {
    const t = typeof value === 'string' ? value : (value.default ?? value.import ?? value.require);
    if (typeof t === 'string' && !t.endsWith('.json')) targets.push(t);
  }
  return [...new Set(targets.map((t) => sourceOf(pkgDir, t)).filter(Boolean))];
}

const misses = [];
let checked = 0;
for (const pkg of pkgs) {
  const pkgDir = path.join(root, 'packages', pkg);
  if (!existsSync(path.join(pkgDir, 'package.json'))) continue;
  const files = entries(pkgDir);
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const seen = new Set();
  for (const file of files) {
    const sf = program.getSourceFile(file);
    const mod = sf && checker.getSymbolAtLocation(sf);
    if (!mod) continue;
    for (let sym of checker.getExportsOfModule(mod)) {
      if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
      for (const decl of sym.declarations ?? []) {
        const at = decl.getSourceFile().fileName;
        if (!at.startsWith(path.join(pkgDir, 'src'))) continue; // declared in another package
        if (ts.isSourceFile(decl) || ts.isModuleDeclaration(decl)) continue;
        const key = `${at}:${decl.pos}`;
        if (seen.has(key)) continue;
        seen.add(key);
        checked++;
        // An overload shares the TSDoc block of the first signature.
        const first = (sym.declarations ?? []).find((d) => d.getSourceFile().fileName === at) ?? decl;
        if (ts.getJSDocCommentsAndTags(decl).length || ts.getJSDocCommentsAndTags(first).length) continue;
        const { line } = decl.getSourceFile().getLineAndCharacterOfPosition(decl.getStart());
        misses.push(`${path.relative(root, at)}:${line + 1} ${sym.name}`);
      }
    }
  }
}
for (const m of misses) console.log(m);
if (misses.length) {
  console.error(`check-tsdoc: ${misses.length} public name(s) without a TSDoc block; say what it is for`);
  process.exit(1);
}
console.error(`check-tsdoc: every public name (${checked}) has a TSDoc block`);
