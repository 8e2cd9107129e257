import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '@flurry/core';
import { connectSql } from './reserve.js';

test('GIVEN flurry sql URLs the registries refuse THEN connectSql refuses them as bad input before connecting, never showing the password', async () => {
  const cases: [string, RegExp][] = [
    ['postgres://app:s3cret@127.0.0.1:1/db?tabel=x', /unknown parameter "tabel"; did you mean "table"\?/],
    ['mysql://app:s3cret@127.0.0.1:1/db?sslmode=prefer', /sslmode "prefer" is not one of/],
    ['postgres://app:s3cret@127.0.0.1:1/', /the database is missing/],
    ['file:/var/lib/flurry', /is not a database URL/],
  ];
  for (const [url, why] of cases) {
    await assert.rejects(
      () => connectSql(url),
      (e: unknown) =>
        e instanceof FlurryError && e.code === 'FLURRY_E_USAGE' && why.test(e.message) && !e.message.includes('s3cret'),
      url,
    );
  }
});
