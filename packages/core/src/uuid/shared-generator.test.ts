// SharedUuidGenerator: the node claim it shares with UuidGenerator, handles attached from the posted state, no lease,
// and two handles splitting one millisecond's 32,768 shared sequence values exactly once. (The clock policies run in
// generator.test.ts for both generators; real worker threads in shared-generator-scale.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { START } from '../generator/test-kit.js';
import { decodeUuid } from './forms.js';
import { UuidGenerator } from './generator.js';
import { SharedUuidGenerator } from './shared-generator.js';

const code = (c: string, re?: RegExp) => (e: unknown) =>
  e instanceof FlurryError && e.code === c && (re === undefined || re.test(e.message));

test('GIVEN a SharedUuidGenerator THEN it holds the node claim a UuidGenerator of that node needs, attached handles detach alone, and close() hands the node on after the last millisecond', () => {
  const clock = new ManualClock(START);
  const shared = new SharedUuidGenerator({ node: 2001, clock, sequenceBits: 12, onExhausted: 'borrow' });
  assert.throws(() => new UuidGenerator({ node: 2001, clock }), code(ErrorCode.NODE_IN_USE));
  assert.throws(() => new SharedUuidGenerator({ node: 2001, clock }), code(ErrorCode.NODE_IN_USE));
  const attached = SharedUuidGenerator.fromState(structuredClone(shared.state), { clock });
  const a = attached.nextBigInt();
  shared.batch(4096 * 2, 'bigint'); // runs past START: borrows START+1 (and START+2)
  attached.close();
  assert.throws(() => attached.next(), code(ErrorCode.GENERATOR_CLOSED));
  assert.ok(shared.nextBigInt() > a, 'detaching one handle leaves the others working');
  const last = shared.lastIssuedUnixMs;
  assert.ok(last >= START + 1);
  shared.close();
  assert.throws(() => shared.next(), code(ErrorCode.GENERATOR_CLOSED));
  const after = new UuidGenerator({ node: 2001, clock, sequenceBits: 12 });
  try {
    assert.equal(decodeUuid(after.next(), { sequenceBits: 12 }).unixMs, last + 1);
  } finally {
    after.close();
  }
});

test('GIVEN a SharedUuidGenerator THEN it refuses a lease, an unknown option, a missing node and a state that is not its own', () => {
  const lease = { node: { node: 5 }, deadline: 800, notBeforeMs: 0, attach() {} };
  assert.throws(() => new SharedUuidGenerator({ lease } as never), code(ErrorCode.INVALID_OPTION, /lease/));
  assert.throws(() => new SharedUuidGenerator({ node: 5, nodeBit: 3 } as never), code(ErrorCode.UNKNOWN_OPTION));
  assert.throws(() => new SharedUuidGenerator({}), code(ErrorCode.NODE_OUT_OF_RANGE, /needs its node ID/));
  assert.throws(() => new SharedUuidGenerator({ node: 65536 }), code(ErrorCode.NODE_OUT_OF_RANGE, /0 to 65535/));
  assert.throws(() => SharedUuidGenerator.fromState({} as never), code(ErrorCode.INVALID_OPTION, /state/));
  const shared = new SharedUuidGenerator({ node: 2002 });
  try {
    const wrongKind = { ...shared.state, kind: 'flurry-shared-generator' };
    assert.throws(() => SharedUuidGenerator.fromState(wrongKind as never), code(ErrorCode.INVALID_OPTION));
    assert.throws(
      () => SharedUuidGenerator.fromState(shared.state, { clok: 1 } as never),
      code(ErrorCode.UNKNOWN_OPTION),
    );
  } finally {
    shared.close();
  }
});

test('GIVEN two handles sharing one millisecond of a standing clock THEN between them they issue all 32,768 shared sequence values, each exactly once, in the format of 22 sequence bits, before either moves on', () => {
  const clock = new ManualClock(START);
  const shared = new SharedUuidGenerator({ node: 2003, clock, onExhausted: 'borrow' });
  const other = SharedUuidGenerator.fromState(structuredClone(shared.state), { clock });
  try {
    const seen = new Uint8Array(32768);
    const prev = [-1n, -1n];
    for (let i = 0; i < 16384; i++) {
      [shared, other].forEach((h, k) => {
        const u = h.nextBigInt();
        assert.ok(u > prev[k], `handle ${k}, call ${i}: increasing`);
        prev[k] = u;
        const d = decodeUuid(u);
        assert.equal(d.unixMs, START, `call ${i}: still in the first millisecond`);
        assert.equal(d.node, 2003);
        seen[d.sequence]++;
      });
    }
    assert.ok(
      seen.every((n) => n === 1),
      'every shared sequence value of the millisecond issued exactly once',
    );
    assert.equal(decodeUuid(other.next()).unixMs, START + 1, 'the millisecond is used up: the next UUID borrows');
    assert.equal(other.stats.borrowedTicks, 1);
    assert.equal(shared.stats.issued + other.stats.issued, 32769);
  } finally {
    other.close();
    shared.close();
  }
});
