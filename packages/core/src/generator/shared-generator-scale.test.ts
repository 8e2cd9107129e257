/**
 * Proof that a SharedGenerator whose threads reserve runs of sequence values keeps its
 * promises at scale: 2, 4 and 16 real worker threads × 1,000,000 IDs each on the twitter
 * layout and on an uncapped one (41-bit time + 22-bit sequence), threads calling next(),
 * batch() and a mix of next(), batch() and fill() in one run; and 4 threads on a wall clock
 * shared by every thread that is frozen or steps back, under each exhaustion and backwards
 * policy (the harness and the checks: testing/thread-kit.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedGenerator } from './shared-generator.js';
import { proveClock, proveScale } from '../testing/thread-kit.js';

const UNCAPPED = {
  name: 'uncapped-41-22',
  fields: [
    { name: 'timestamp', bits: 41 },
    { name: 'sequence', bits: 22 },
  ],
  epoch: 1288834974657,
};
let nodeSeq = 0;

for (const [layoutName, layout] of [
  ['twitter', 'twitter'],
  ['uncapped (41-bit time + 22-bit sequence)', UNCAPPED],
] as const) {
  test(`GIVEN 2, 4 and 16 worker threads × 1,000,000 IDs on the ${layoutName} layout, threads calling next(), batch() and a mix THEN 0 duplicates and every thread's IDs increase`, async () => {
    let shared!: SharedGenerator;
    let node: Record<string, number> = {};
    const make = () => {
      node = layout === 'twitter' ? { datacenter: 20, worker: nodeSeq++ } : {};
      return (shared = new SharedGenerator({ layout, node }));
    };
    await proveScale({ cls: 'SharedGenerator', make }, 1_000_000, (ids) => {
      // Every thread's run never crossed a tick: the decoded IDs are valid for the layout.
      assert.deepEqual(shared.layout.decode(new BigUint64Array(ids)[1_000_000 - 1]).fields, node);
    });
  });
}

for (const clockKind of ['frozen', 'stepped-back'] as const) {
  test(`GIVEN 4 worker threads on a ${clockKind} wall clock shared by all threads, under each exhaustion and backwards policy THEN 0 duplicates and 0 decreases per thread`, async () => {
    const make = (extra: object) =>
      new SharedGenerator({ layout: 'twitter', node: { datacenter: 21, worker: nodeSeq++ }, ...extra });
    await proveClock({ cls: 'SharedGenerator', make }, clockKind, 4096);
  });
}
