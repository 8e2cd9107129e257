// UuidGenerator: strictly increasing under clock chaos and every policy, exhaustion, leases (fencing, floor,
// high-water mark), one node per process, and Python's uuid module as an independent reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { ManualClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import type { GeneratorEvent } from '../generator/options.js';
import { START, makeLease, expiredOn } from '../generator/test-kit.js';
import { decodeUuid } from './forms.js';
import { UuidGenerator } from './generator.js';
import { SharedUuidGenerator, type SharedUuidGeneratorOptions } from './shared-generator.js';

const code = (c: string, re?: RegExp) => (e: unknown) =>
  e instanceof FlurryError && e.code === c && (re === undefined || re.test(e.message));
let nextNode = 1000;
/** A node ID no other test of this file uses (a closed generator's successor starts after its last ms). */
const freshNode = () => nextNode++;
/** The clock and exhaustion tests run on both generators: the thread-shared one must decide as the single-thread one does. */
const MAKERS: Array<[string, (o: SharedUuidGeneratorOptions) => UuidGenerator | SharedUuidGenerator]> = [
  ['UuidGenerator', (o) => new UuidGenerator(o)],
  ['SharedUuidGenerator', (o) => new SharedUuidGenerator(o)],
];

for (const [name, make] of MAKERS) {
  test(`GIVEN ${name}: random interleavings of next/nextBytes/nextBigInt/nextAs/batch/fill and clock stalls, steps back and jumps, under every policy THEN UUIDs strictly increase and decode to their node, with (ms, sequence) increasing`, () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('call' as const),
        form: fc.integer({ min: 0, max: 6 }),
        n: fc.integer({ min: 1, max: 300 }),
      }),
      fc.record({ kind: fc.constant('clock' as const), delta: fc.integer({ min: -30, max: 30 }) }),
    );
    const policy = fc.record({
      onExhausted: fc.constantFrom('wait' as const, 'borrow' as const),
      onClockBackwards: fc.constantFrom('tolerate' as const, 'wait' as const, 'throw' as const),
      sequenceBits: fc.constantFrom(12, 13, 22),
      sequenceStart: fc.constantFrom('zero' as const, 'random' as const),
    });
    fc.assert(
      fc.property(policy, fc.array(op, { minLength: 1, maxLength: 60 }), (p, ops) => {
        const clock = new ManualClock(START);
        const node = freshNode();
        const gen = make({ node, clock, ...p });
        const out: bigint[] = [];
        try {
          for (const o of ops) {
            if (o.kind === 'clock') {
              if (o.delta >= 0) clock.advance(o.delta);
              else clock.stepWall(o.delta);
              continue;
            }
            try {
              switch (o.form) {
                case 0:
                  out.push(BigInt(`0x${gen.next().replace(/-/g, '')}`));
                  break;
                case 1:
                  out.push(BigInt(`0x${Buffer.from(gen.nextBytes()).toString('hex')}`));
                  break;
                case 2:
                  out.push(gen.nextBigInt());
                  break;
                case 3:
                  out.push(BigInt(`0x${decodeUuid(gen.nextAs('base32')).uuid.replace(/-/g, '')}`));
                  break;
                case 4:
                  out.push(...gen.batch(o.n, 'bigint'));
                  break;
                case 5:
                  for (const s of gen.batch(o.n)) out.push(BigInt(`0x${s.replace(/-/g, '')}`));
                  break;
                default: {
                  const buf = new Uint8Array(16 * o.n);
                  gen.fill(buf);
                  for (let i = 0; i < o.n; i++)
                    out.push(BigInt(`0x${Buffer.from(buf.subarray(i * 16, i * 16 + 16)).toString('hex')}`));
                }
              }
            } catch (e) {
              if (!(e instanceof FlurryError && e.code === ErrorCode.CLOCK_BACKWARDS)) throw e;
            }
          }
          for (let i = 1; i < out.length; i++) assert.ok(out[i] > out[i - 1], `UUID ${i} does not increase`);
          let prev = { ms: -1, seq: -1 };
          for (const u of out) {
            const d = decodeUuid(u, { sequenceBits: p.sequenceBits });
            assert.equal(d.node, node);
            assert.ok(d.unixMs > prev.ms || (d.unixMs === prev.ms && d.sequence > prev.seq));
            prev = { ms: d.unixMs, seq: d.sequence };
          }
          assert.equal(gen.stats.issued, out.length);
        } finally {
          gen.close();
        }
      }),
      { numRuns: 150 },
    );
  });

  test(`GIVEN ${name}: the wall clock steps back THEN throw refuses with FLURRY_E_CLOCK_BACKWARDS, wait waits it out, tolerate keeps counting in the last millisecond`, () => {
    for (const onClockBackwards of ['throw', 'wait', 'tolerate'] as const) {
      const clock = new ManualClock(START);
      const events: GeneratorEvent[] = [];
      const gen = make({ node: freshNode(), clock, onClockBackwards, onEvent: (e) => events.push(e) });
      try {
        const a = gen.nextBigInt();
        clock.stepWall(-3);
        if (onClockBackwards === 'throw') {
          assert.throws(() => gen.next(), code(ErrorCode.CLOCK_BACKWARDS));
          assert.equal(gen.stats.issued, 1);
        } else {
          const b = gen.nextBigInt();
          assert.ok(b > a);
          const d = decodeUuid(b);
          if (onClockBackwards === 'wait') {
            assert.ok(clock.now() >= START, 'waited until the clock caught up');
            assert.ok(events.some((e) => e.type === 'clock-backwards' && e.action === 'waited'));
          } else {
            assert.equal(d.unixMs, START, 'tolerate: same millisecond, next sequence');
            // One thread: the next value; shared: after the run this thread had won.
            assert.ok(name === 'UuidGenerator' ? d.sequence === 1 : d.sequence > decodeUuid(a).sequence);
          }
        }
        assert.equal(gen.stats.clockBackwards, 1);
        clock.stepWall(-60_000);
        if (onClockBackwards !== 'tolerate') assert.throws(() => gen.next(), code(ErrorCode.CLOCK_BACKWARDS));
      } finally {
        gen.close();
      }
    }
  });

  test(`GIVEN ${name}: a 12-bit sequence used up within one millisecond THEN wait moves to the next millisecond and borrow runs ahead of the clock`, () => {
    for (const onExhausted of ['wait', 'borrow'] as const) {
      const clock = new ManualClock(START);
      const gen = make({ node: freshNode(), clock, sequenceBits: 12, onExhausted });
      try {
        const first = gen.batch(4096, 'bigint');
        assert.equal(decodeUuid(first[4095], { sequenceBits: 12 }).sequence, 4095);
        const next = decodeUuid(gen.nextBigInt(), { sequenceBits: 12 });
        assert.equal(next.unixMs, START + 1);
        assert.equal(next.sequence, 0);
        if (onExhausted === 'wait') {
          assert.equal(gen.stats.exhaustedWaits, 1);
          assert.equal(clock.now(), START + 1, 'the clock advanced while waiting');
        } else {
          assert.equal(gen.stats.borrowedTicks, 1);
          assert.equal(clock.now(), START, 'borrowed: no wait');
          assert.equal(gen.lastIssuedUnixMs, START + 1, 'the borrowed millisecond is the high-water mark');
        }
      } finally {
        gen.close();
      }
    }
  });
}

test('GIVEN a lease THEN UUIDs stop at either fencing deadline, never fall at or below notBeforeMs, and the lease reads lastIssuedUnixMs', () => {
  const clock = new ManualClock(START, 0);
  const node = freshNode();
  const lease = makeLease({ node }, 1000, START + 5, START + 1000);
  const gen = new UuidGenerator({ lease, clock, highWaterWaitMs: 50 });
  try {
    assert.equal(gen.node, node);
    const a = decodeUuid(gen.next());
    assert.equal(a.unixMs, START + 6, 'waited past the previous holder’s floor');
    assert.equal(lease.highWater?.(), START + 6);
    clock.advanceMonotonic(1000);
    assert.throws(() => gen.next(), expiredOn('monotonic'));
    assert.throws(() => gen.batch(3), code(ErrorCode.LEASE_EXPIRED));
    assert.throws(() => gen.fill(new Uint8Array(32)), code(ErrorCode.LEASE_EXPIRED));
    lease.deadline = 5000;
    assert.ok(decodeUuid(gen.next()).unixMs >= START + 6);
    clock.stepWall(10_000); // a suspend: the wall clock jumped, monotonic time did not
    assert.throws(() => gen.nextBytes(), expiredOn('wall'));
    const issued = gen.stats.issued;
    lease.wallDeadline = START + 20_000;
    lease.notBeforeMs = START + 60_000; // raised: the clock is now far behind it
    assert.throws(() => gen.next(), code(ErrorCode.CLOCK_BEHIND_HIGH_WATER));
    assert.equal(gen.stats.issued, issued);
  } finally {
    gen.close();
  }
  assert.throws(
    () => new UuidGenerator({ node: node + 1, lease: makeLease({ node }, 1000) }),
    code(ErrorCode.INVALID_OPTION),
  );
});

test('GIVEN one node ID THEN a second live generator in the process is refused, and after close() the next one continues after the last millisecond', () => {
  const clock = new ManualClock(START);
  const node = freshNode();
  const a = new UuidGenerator({ node, clock, onExhausted: 'borrow', sequenceBits: 12 });
  a.batch(4096 * 3); // borrows START+1, START+2
  assert.throws(() => new UuidGenerator({ node, clock }), code(ErrorCode.NODE_IN_USE));
  a.close();
  assert.throws(() => a.next(), code(ErrorCode.GENERATOR_CLOSED));
  const b = new UuidGenerator({ node, clock, sequenceBits: 12, onExhausted: 'borrow' });
  try {
    assert.equal(decodeUuid(b.next(), { sequenceBits: 12 }).unixMs, START + 3);
  } finally {
    b.close();
  }
  assert.throws(() => new UuidGenerator({ node: 65536 }), code(ErrorCode.NODE_OUT_OF_RANGE, /0 to 65535/));
  assert.throws(() => new UuidGenerator({ node: 1, nodeBits: 49 }), code(ErrorCode.INVALID_OPTION, /1 to 48/));
  assert.throws(() => new UuidGenerator({ node: 1, sequenceBits: 11 }), code(ErrorCode.INVALID_OPTION, /12 to 42/));
  assert.throws(() => new UuidGenerator({ node: 1, nodeBit: 8 } as never), code(ErrorCode.UNKNOWN_OPTION));
  assert.throws(() => new UuidGenerator({}), code(ErrorCode.NODE_OUT_OF_RANGE, /needs its node ID/));
});

const PY = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const PY_CHECK = `
import sys, uuid
bad = 0
out = []
for line in sys.stdin:
    u = uuid.UUID(line.strip())
    if u.version != 7 or u.variant != uuid.RFC_4122:
        bad += 1
    out.append(str(int.from_bytes(u.bytes[0:6], 'big')))
sys.stdout.write(str(bad) + '\\n' + '\\n'.join(out) + '\\n')
`;

test("GIVEN 100,000 UUIDs from three nodes THEN Debian's Python 3 reads each as version 7, variant RFC_4122, with Flurry's timestamp", () => {
  const gens = [1, 2, 3].map(() => new UuidGenerator({ node: freshNode(), onExhausted: 'borrow' }));
  const lines: string[] = [];
  try {
    for (let i = 0; lines.length < 100_000; i++) lines.push(...gens[i % 3].batch(i % 7 === 0 ? 1 : 997));
  } finally {
    for (const g of gens) g.close();
  }
  lines.length = 100_000;
  const r = spawnSync(PY, ['-c', PY_CHECK], { input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  const [bad, ...ms] = r.stdout.trim().split('\n');
  assert.equal(bad, '0', 'UUIDs Python does not read as version 7 / RFC_4122');
  assert.equal(ms.length, 100_000);
  lines.forEach((s, i) => {
    if (Number(ms[i]) !== decodeUuid(s).unixMs)
      assert.fail(`UUID ${s}: Python ${ms[i]}, Flurry ${decodeUuid(s).unixMs}`);
  });
  assert.equal(new Set(lines).size, 100_000, 'no duplicates');
});

test('GIVEN 20,000 UUIDs of one millisecond THEN their random fill differs (fresh random bits per UUID) while node and sequence are exact', () => {
  const clock = new ManualClock(START);
  const node = freshNode();
  const gen = new UuidGenerator({ node, clock, nodeBits: 20, sequenceBits: 20 });
  try {
    const all = gen.batch(20_000, 'bytes').map((b) => decodeUuid(b, { nodeBits: 20, sequenceBits: 20 }));
    all.forEach((d, i) => {
      assert.equal(d.unixMs, START);
      assert.equal(d.sequence, i);
      assert.equal(d.node, node);
    });
    // 34 random bits each: 20,000 draws repeat a value with probability about 1 %; allow a few.
    assert.ok(new Set(all.map((d) => d.random)).size >= 19_995, 'random fill repeats');
    assert.ok(
      all.some((d) => d.random >> 33n === 1n),
      'the top random bit is used',
    );
  } finally {
    gen.close();
  }
});

test('GIVEN a lease re-acquired as another node THEN the same UUID generator follows it: the new node, a new millisecond above every UUID it issued', () => {
  const clock = new ManualClock(START, 0);
  let claim = makeLease({ node: 7 }, 1000);
  const lease = Object.assign(makeLease({ node: 7 }, 1000), { forGenerator: () => claim });
  const gen = new UuidGenerator({ lease, clock });
  try {
    const a = gen.next();
    claim.deadline = Number.NEGATIVE_INFINITY;
    assert.throws(
      () => gen.next(),
      (e) => e instanceof FlurryError && e.code === ErrorCode.LEASE_EXPIRED,
    );
    claim = makeLease({ node: 9 }, 5000);
    assert.equal(gen.node, 9);
    const b = gen.next();
    assert.equal(decodeUuid(b).node, 9);
    assert.ok(decodeUuid(b).unixMs > decodeUuid(a).unixMs && b > a);
    assert.equal(gen.stats.issued, 2);
  } finally {
    gen.close();
  }
});
