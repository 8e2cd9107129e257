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
