// The generator: sequence per tick, exhaustion policies, random sequence starts, one live generator per node, layout limits, options and the general (wide) path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../clock.js';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout } from '../layout/index.js';
import { Generator } from './generator.js';
import { type GeneratorEvent } from './options.js';
import { START, code, frozenClock } from './test-kit.js';

test('GIVEN a stalled clock and onExhausted=wait THEN each tick holds exactly maxSequence+1 IDs and the sequence never wraps', () => {
  const clock = new ManualClock(START);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({
    layout: 'twitter',
    node: { datacenter: 1, worker: 1 },
    clock,
    onEvent: (e) => events.push(e),
  });
  try {
    const ids = gen.batch(4096 * 3);
    const l = gen.layout;
    for (let i = 0; i < ids.length; i++) {
      const d = l.decode(ids[i]);
      assert.equal(d.sequence, i % 4096);
      assert.equal(d.unixMs, START + Math.floor(i / 4096));
    }
    for (let i = 1; i < 4096 * 3; i++) assert.ok(ids[i] > ids[i - 1]);
    assert.equal(gen.stats.exhaustedWaits, 2);
    assert.deepEqual(
      events.map((e) => e.type),
      ['exhausted', 'exhausted'],
    );
    // next() takes the same path.
    const n = gen.next();
    assert.equal(l.decode(n).sequence, 0);
    assert.equal(l.decode(n).unixMs, START + 3);
  } finally {
    gen.close();
  }
});

test('GIVEN a frozen wall clock and onExhausted=wait THEN after one tick of IDs the generator throws FLURRY_E_SEQUENCE_EXHAUSTED instead of wrapping, and resumes above it', () => {
  const clock = frozenClock(START);
  const gen = new Generator({ layout: 'leaf', node: { worker: 5 }, clock });
  try {
    const ids = gen.batch(4096);
    assert.throws(() => gen.next(), code(ErrorCode.SEQUENCE_EXHAUSTED));
    assert.throws(() => gen.fill(new BigUint64Array(3)), code(ErrorCode.SEQUENCE_EXHAUSTED));
    clock.thaw(1);
    const next = gen.next();
    assert.ok(next > ids[4095]);
    assert.equal(gen.layout.decode(next).sequence, 0);
  } finally {
    gen.close();
  }
});

test('GIVEN a frozen wall clock and onExhausted=borrow THEN it borrows exactly maxBorrowMs ticks ahead, then refuses', () => {
  const clock = frozenClock(START);
  const events: GeneratorEvent[] = [];
  const gen = new Generator({
    layout: 'leaf',
    node: { worker: 6 },
    clock,
    onExhausted: 'borrow',
    maxBorrowMs: 3,
    onEvent: (e) => events.push(e),
  });
  try {
    const ids = gen.batch(4096 * 4);
    assert.equal(gen.layout.decode(ids[ids.length - 1]).unixMs, START + 3);
    assert.equal(gen.stats.borrowedTicks, 3);
    assert.equal(events.filter((e) => e.type === 'exhausted' && e.borrowed).length, 3);
    assert.equal(gen.lastIssuedUnixMs, START + 3);
    assert.throws(() => gen.next(), code(ErrorCode.SEQUENCE_EXHAUSTED));
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
  } finally {
    gen.close();
  }
});

test("GIVEN sequenceStart=random at low load THEN id % 2 and id % 8 spread evenly; with 'zero' every ID is even", () => {
  const clock = new ManualClock(START);
  const rand = new Generator({ layout: 'twitter', node: { datacenter: 4, worker: 4 }, clock, sequenceStart: 'random' });
  const zero = new Generator({ layout: 'twitter', node: { datacenter: 4, worker: 5 }, clock });
  try {
    const buckets = new Array(8).fill(0);
    let evenZero = 0;
    for (let i = 0; i < 4000; i++) {
      clock.advance(1);
      buckets[Number(rand.next() % 8n)]++;
      if (zero.next() % 2n === 0n) evenZero++;
    }
    assert.equal(evenZero, 4000);
    for (const b of buckets) assert.ok(b > 350 && b < 650, `bucket counts ${buckets.join(',')}`);
  } finally {
    rand.close();
    zero.close();
  }
});

test('GIVEN sequenceStart=random and a stalled clock THEN each tick counts up from its start to maxSequence without wrapping', () => {
  const clock = new ManualClock(START);
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 4, worker: 6 }, clock, sequenceStart: 'random' });
  try {
    const ids = gen.batch(4096 * 4);
    const l = gen.layout;
    let tick = -1;
    let last = -1;
    let ticks = 0;
    for (const id of ids) {
      const d = l.decode(id);
      if (d.unixMs !== tick) {
        if (tick !== -1) assert.equal(last, 4095, 'a tick ends only when its sequence is used up');
        assert.ok(d.sequence < 64, `start ${d.sequence} within the small range`);
        tick = d.unixMs;
        ticks++;
      } else assert.equal(d.sequence, last + 1);
      last = d.sequence;
    }
    assert.ok(ticks >= 4 && ticks <= 5);
  } finally {
    gen.close();
  }
});

test('GIVEN a second live generator for the same node (or the same ID space through another layout) in one thread THEN FLURRY_E_NODE_IN_USE; after close() a new one continues above the old IDs', () => {
  const clock = new ManualClock(START);
  const a = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 2 }, clock, onExhausted: 'borrow' });
  const ids = a.batch(4096 * 3); // borrows 2 ticks ahead of the frozen ManualClock
  assert.throws(
    () => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 2 }, clock }),
    (e: unknown) => e instanceof FlurryError && e.code === ErrorCode.NODE_IN_USE && /SharedGenerator/.test(e.message),
  );
  assert.throws(() => new Generator({ layout: 'leaf', node: { worker: 34 }, clock }), code(ErrorCode.NODE_IN_USE));
  const other = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 3 }, clock });
  other.close();
  a.close();
  a.close();
  assert.throws(() => a.next(), code(ErrorCode.GENERATOR_CLOSED));
  assert.throws(() => a.fill(new BigUint64Array(1)), code(ErrorCode.GENERATOR_CLOSED));
  const b = new Generator({ layout: 'leaf', node: { worker: 34 }, clock, onExhausted: 'borrow' });
  try {
    const next = b.next();
    assert.ok(next > ids[ids.length - 1], 'the new holder starts after the old one, even inside its borrowed ticks');
  } finally {
    b.close();
  }
});

test('GIVEN the clock before the epoch or past the end of the layout THEN coded errors', () => {
  const early = new Generator({
    layout: 'twitter',
    node: { datacenter: 9, worker: 9 },
    clock: new ManualClock(1_000_000_000_000),
  });
  try {
    assert.throws(() => early.next(), code(ErrorCode.CLOCK_BEFORE_EPOCH));
  } finally {
    early.close();
  }
  const epoch = Date.now() - 100_000;
  const short = Layout.parse('timestamp:10,sequence:2', { epoch });
  const clock = new ManualClock(epoch + 1023);
  const gen = new Generator({ layout: short, node: {}, clock, onExhausted: 'borrow' });
  try {
    gen.batch(4);
    assert.throws(() => gen.next(), code(ErrorCode.LAYOUT_EXPIRED));
    clock.advance(10);
    assert.throws(() => gen.next(), code(ErrorCode.LAYOUT_EXPIRED));
  } finally {
    gen.close();
  }
});

test('GIVEN bad options or arguments THEN FLURRY_E_INVALID_OPTION / FLURRY_E_NODE_OUT_OF_RANGE and the generator keeps working', () => {
  assert.throws(() => new Generator({ layout: 'twitter' }), code(ErrorCode.NODE_OUT_OF_RANGE));
  assert.throws(
    () => new Generator({ layout: 'twitter', node: { datacenter: 40, worker: 1 } }),
    code(ErrorCode.NODE_OUT_OF_RANGE),
  );
  assert.throws(
    () => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, onExhausted: 'spin' as never }),
    code(ErrorCode.INVALID_OPTION),
  );
  assert.throws(
    () => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, onClockBackwards: 'ignore' as never }),
    code(ErrorCode.INVALID_OPTION),
  );
  assert.throws(
    () => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, maxBorrowMs: -1 }),
    code(ErrorCode.INVALID_OPTION),
  );
  assert.throws(
    () => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, sequenceStart: 'one' as never }),
    code(ErrorCode.INVALID_OPTION),
  );
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 }, clock: new ManualClock(START) });
  try {
    assert.throws(() => gen.batch(-1), code(ErrorCode.INVALID_OPTION));
    assert.throws(() => gen.batch(1.5), code(ErrorCode.INVALID_OPTION));
    assert.throws(() => gen.fill(new BigUint64Array(4), 5), code(ErrorCode.INVALID_OPTION));
    assert.throws(() => gen.fill(new BigUint64Array(4), 2, 3), code(ErrorCode.INVALID_OPTION));
    assert.throws(() => gen.fill([] as never), code(ErrorCode.INVALID_OPTION));
    const buf = new BigUint64Array(6).fill(7n);
    assert.equal(gen.fill(buf, 2, 3), 3);
    assert.equal(buf[0], 7n);
    assert.equal(buf[1], 7n);
    assert.equal(buf[5], 7n);
    assert.ok(buf[2] < buf[3] && buf[3] < buf[4]);
    assert.deepEqual(gen.batch(0), []);
    const strings = gen.batchStrings(3);
    assert.ok(strings.every((s) => /^\d+$/.test(s)));
    assert.ok(BigInt(gen.nextString()) > BigInt(strings[2]));
    assert.equal(gen.stats.issued, 3 + 3 + 1);
  } finally {
    gen.close();
  }
});

test('GIVEN layouts that need the general path (sequence above bit 32, node+sequence over 53 bits) THEN next, fill and batch agree and increase', () => {
  const epoch = Date.now() - 60_000;
  const layouts = [
    Layout.parse('timestamp:22,sequence:10,machine:32', { epoch }),
    Layout.parse('timestamp:10,sequence:20,node:34', { epoch, unit: '1s' }),
    Layout.parse('worker:1,timestamp:41,sequence:22', { epoch }),
  ];
  for (const layout of layouts) {
    const node = Object.fromEntries(layout.nodeFields.map((f) => [f.name, f.max]));
    const clock = new ManualClock(epoch + 10_000);
    const gen = new Generator({ layout, node, clock, onExhausted: 'borrow' });
    try {
      const a = gen.next();
      const batch = gen.batch(2000);
      const buf = new BigUint64Array(2000);
      gen.fill(buf);
      const all = [a, ...batch, ...buf];
      for (let i = 1; i < all.length; i++) assert.ok(all[i] > all[i - 1], `${layout.toFieldsString()} at ${i}`);
      for (const id of [a, batch[1999], buf[1999]]) assert.deepEqual(layout.decode(id).fields, node);
      assert.equal(layout.decode(buf[0]).sequence, layout.decode(batch[1999]).sequence + 1);
    } finally {
      gen.close();
    }
  }
});

test('GIVEN the real system clock THEN 200,000 IDs from next() and fill() strictly increase and decode to about now', () => {
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 31, worker: 31 } });
  try {
    let prev = 0n;
    for (let i = 0; i < 100_000; i++) {
      const id = gen.next();
      assert.ok(id > prev);
      prev = id;
    }
    const buf = new BigUint64Array(100_000);
    gen.fill(buf);
    assert.ok(buf[0] > prev);
    for (let i = 1; i < buf.length; i++) if (!(buf[i] > buf[i - 1])) assert.fail(`fill order at ${i}`);
    const d = gen.layout.decode(buf[buf.length - 1]);
    assert.ok(Math.abs(d.unixMs - Date.now()) < 5_000);
  } finally {
    gen.close();
  }
});
