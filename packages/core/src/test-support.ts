/**
 * Assertions the core's tests share. Test support only; not exported by the package.
 *
 * @example
 * ```ts
 * expectCode(() => decodeId('zz', 'hex'), 'FLURRY_E_ID_MALFORMED', /hex/);
 * ```
 */
import assert from 'node:assert/strict';
import { FlurryError } from './errors.js';

/**
 * Runs `fn`, asserts it throws a {@link FlurryError} with `code` (and a message matching
 * `messagePart` when given), and returns the error.
 *
 * @example
 * ```ts
 * const e = expectCode(() => Layout.parse('timestamp:37,server:20,sequence:16'), 'FLURRY_E_LAYOUT_TOO_WIDE');
 * ```
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
