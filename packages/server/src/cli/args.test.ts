import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlurryError } from '@flurry/core';
import { allStrings, hasFlag, lastString, parseCommandLine } from './args.js';

const spec = { n: { type: 'string', short: 'n' }, json: { type: 'boolean' }, node: { type: 'string' } } as const;

test('GIVEN long, inline, short and repeated flags THEN each is read', () => {
  const p = parseCommandLine(['-n', '3', '--json', 'a', '--node=x=1', '--node', 'y=2', 'b', '-n7'], spec);
  assert.equal(lastString(p, 'n'), '7');
  assert.equal(hasFlag(p, 'json'), true);
  assert.deepEqual(allStrings(p, 'node'), ['x=1', 'y=2']);
  assert.deepEqual(p.positionals, ['a', 'b']);
});

test('GIVEN a negative number or "--" THEN what follows is positional', () => {
  assert.deepEqual(parseCommandLine(['-1', '-0.5'], spec).positionals, ['-1', '-0.5']);
  assert.deepEqual(parseCommandLine(['--', '--json'], spec).positionals, ['--json']);
  assert.equal(lastString(parseCommandLine(['-n', '-1'], spec), 'n'), '-1');
});

test('GIVEN an unknown flag, a missing value or a value on a boolean THEN FLURRY_E_USAGE', () => {
  for (const argv of [['--nope'], ['-x'], ['-n'], ['--json=yes'], ['--__proto__', '1'], ['--constructor']]) {
    assert.throws(
      () => parseCommandLine(argv, spec),
      (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_USAGE',
      argv.join(' '),
    );
  }
});

test('GIVEN any argv THEN parsing returns or throws FLURRY_E_USAGE, nothing else', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.string(), fc.constantFrom('-n', '--json', '--node', '--', '-', '--=', '-nn')), {
        maxLength: 8,
      }),
      (argv) => {
        try {
          parseCommandLine(argv, spec);
        } catch (e) {
          assert.ok(e instanceof FlurryError && e.code === 'FLURRY_E_USAGE');
        }
      },
    ),
    { numRuns: 500 },
  );
});

test('GIVEN a misspelt long flag THEN FLURRY_E_USAGE suggests the closest known flag, as for misspelt variables', () => {
  const ports = { port: { type: 'string' }, host: { type: 'string' }, json: { type: 'boolean' } } as const;
  for (const typo of ['--prot', '--prot=80', '--portt', '--jsno']) {
    const e = (() => {
      try {
        parseCommandLine([typo], ports);
      } catch (err) {
        return err;
      }
      assert.fail(`${typo} was accepted`);
    })();
    assert.ok(e instanceof FlurryError && e.code === 'FLURRY_E_USAGE', String(e));
    const want = typo.startsWith('--js') ? '--json' : '--port';
    assert.match(e.message, new RegExp(`^unknown flag "${typo}"; did you mean ${want}\\? This command accepts: `));
    assert.equal(e.details.suggestion, want);
  }
  assert.throws(
    () => parseCommandLine(['--zzzzzzzzzz'], ports),
    (e: unknown) => e instanceof FlurryError && !/did you mean/.test(e.message) && e.details.suggestion === undefined,
  );
});

test('GIVEN "--" THEN every later token is an argument, in order, even one that looks like a flag', () => {
  const p = parseCommandLine(['a', '--json', '--', '-abc', '--json', '-n', '3'], spec);
  assert.deepEqual(p.positionals, ['a', '-abc', '--json', '-n', '3']);
  assert.deepEqual(p.values.json, [true]);
  assert.equal(lastString(p, 'n'), undefined);
  assert.deepEqual(parseCommandLine(['x', '-1', 'y', '-.5'], spec).positionals, ['x', '-1', 'y', '-.5']);
});
