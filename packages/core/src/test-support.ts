/** Assertions the core's tests share. Test support only; not exported by the package. */
import assert from 'node:assert/strict';
import { FlurryError } from './errors.js';

/**
 * Runs `fn`, asserts it throws a {@link FlurryError} with `code` (and a message matching
 * `messagePart` when given), and returns the error.
 */
export function expectCode(fn: () => unknown, code: string, messagePart?: RegExp): FlurryError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof FlurryError, `expected a FlurryError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (messagePart) assert.match(caught.message, messagePart);
  return caught;
}
