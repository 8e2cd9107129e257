/**
 * Proof that a SharedUuidGenerator keeps SharedGenerator's promises at scale (the same
 * harness, testing/thread-kit.ts): 2, 4 and 16 real worker threads × 1,000,000 UUIDs each,
 * threads calling next() (strings and bytes), batch() and a mix of next(), batch() and
 * fill(); and 4 threads on a frozen or stepped-back wall clock shared by every thread,
 * under each exhaustion and backwards policy: 0 duplicates, 0 decreases per thread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { proveClock, proveScale } from '../testing/thread-kit.js';
import { decodeUuid } from './forms.js';
import { SharedUuidGenerator } from './shared-generator.js';

let nodeSeq = 3000;

test("GIVEN 2, 4 and 16 worker threads × 1,000,000 UUIDs of the default format sharing one node, threads calling next(), batch() and a mix THEN 0 duplicates and every thread's UUIDs increase", async () => {
  let node = 0;
  const make = () => new SharedUuidGenerator({ node: (node = nodeSeq++) });
  await proveScale({ cls: 'SharedUuidGenerator', make, uuidSequenceBits: 22 }, 1_000_000, (ids) => {
    const last = new Uint8Array(ids, 16 * (1_000_000 - 1), 16);
    assert.equal(decodeUuid(last).node, node);
  });
});

for (const clockKind of ['frozen', 'stepped-back'] as const) {
  test(`GIVEN 4 worker threads on a ${clockKind} wall clock shared by all threads, with a 12-bit sequence, under each exhaustion and backwards policy THEN 0 duplicates and 0 decreases per thread`, async () => {
    const make = (extra: object) => new SharedUuidGenerator({ node: nodeSeq++, sequenceBits: 12, ...extra });
    await proveClock({ cls: 'SharedUuidGenerator', make, uuidSequenceBits: 12 }, clockKind, 4096);
  });
}
