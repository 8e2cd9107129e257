// Bearer tokens compared in constant time: both sides hashed, so neither content nor length leaks.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FlurryError } from '@flurry/core';
import { serverError } from '../errors.js';

/** Checks `Authorization` header values against one configured token. */
export class BearerAuth {
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = createHash('sha256').update(token, 'utf8').digest();
  }

  /** Null when the header carries the right token; else the coded 401 error. */
  check(header: string | undefined): FlurryError | null {
    if (header === undefined || header.length === 0) {
      return serverError(
        'UNAUTHORIZED',
        'this route needs a bearer token: send the header "Authorization: Bearer <token>" with the token the service was configured with (--token / FLURRY_TOKEN)',
      );
    }
    const m = /^[Bb][Ee][Aa][Rr][Ee][Rr] +(\S+) *$/.exec(header);
    const given = createHash('sha256')
      .update(m ? m[1] : '', 'utf8')
      .digest();
    const ok = timingSafeEqual(given, this.expected);
    if (m && ok) return null;
    return serverError(
      'UNAUTHORIZED',
      m
        ? 'the bearer token is wrong; send "Authorization: Bearer <token>" with the configured token'
        : 'the Authorization header is not of the form "Bearer <token>"; send "Authorization: Bearer <token>"',
    );
  }
}
