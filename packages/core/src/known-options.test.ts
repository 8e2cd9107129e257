import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from './errors.js';
import { assertKnownOptions, closestName, editDistance } from './known-options.js';

test('GIVEN a misspelt option THEN FLURRY_E_UNKNOWN_OPTION names it and the closest valid key', () => {
  assert.throws(
    () =>
      assertKnownOptions(
        { layout: 'twitter', onExhaust: 'borrow' },
        ['layout', 'onExhausted', 'clock'],
        'Generator options',
      ),
    (e: unknown) =>
      e instanceof FlurryError &&
      e.code === 'FLURRY_E_UNKNOWN_OPTION' &&
      e.message ===
        'Generator options has the unknown option "onExhaust"; did you mean "onExhausted"? Allowed options: clock, layout, onExhausted.' &&
      e.details.suggestion === 'onExhausted',
  );
});

test('GIVEN an unknown option far from every valid key THEN no suggestion, only the allowed list', () => {
  assert.throws(
    () => assertKnownOptions({ zzzzzz: undefined }, ['cluster'], 'openRegistry options'),
    /openRegistry options has the unknown option "zzzzzz"\. Allowed options: cluster\./,
  );
});

test('GIVEN known keys only, or no object THEN nothing is thrown', () => {
  assertKnownOptions({ cluster: 'a' }, ['cluster'], 'x');
  assertKnownOptions(undefined, ['cluster'], 'x');
});

test('GIVEN a package error factory THEN its error is thrown', () => {
  assert.throws(
    () => assertKnownOptions({ clustr: 1 }, ['cluster'], 'o', (m) => new FlurryError('FLURRY_E_REGISTRY_OPTION', m)),
    (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_REGISTRY_OPTION',
  );
});

test('GIVEN typos THEN the edit distance counts swaps as one and closestName finds the intended name', () => {
  assert.equal(editDistance('prot', 'port'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(closestName('clustr', ['cluster', 'ttlMs']), 'cluster');
  assert.equal(closestName('PINS', ['pin']), 'pin');
  assert.equal(closestName('abcdefgh', ['cluster']), undefined);
});
