import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout, PRESETS, parseTime, type FieldSpec, type PresetName, type TimeUnit } from './index.js';

const code = (c: string, re?: RegExp) => (e: unknown) =>
  e instanceof FlurryError && e.code === c && (re === undefined || re.test(e.message));

const NOW = Date.now();

/** A random valid layout; `nodesAbove` allows node fields above the timestamp. */
function arbLayout(nodesAbove: boolean): fc.Arbitrary<Layout> {
  return fc
    .record({
      unit: fc.constantFrom<TimeUnit>('1ms', '10ms', '1s'),
      epoch: fc.integer({ min: 0, max: NOW }),
      tsBits: fc.integer({ min: 1, max: 44 }),
      seqBits: fc.integer({ min: 1, max: 30 }),
      nodes: fc.array(
        fc.record({
          bits: fc.integer({ min: 1, max: 20 }),
          where: fc.constantFrom(...(nodesAbove ? ['above', 'between', 'below'] : ['between', 'below'])),
        }),
        { maxLength: 3 },
      ),
    })
    .filter(({ unit, epoch, tsBits, seqBits, nodes }) => {
      const unitMs = unit === '1ms' ? 1 : unit === '10ms' ? 10 : 1000;
      const total = tsBits + seqBits + nodes.reduce((s, n) => s + n.bits, 0);
      return total <= 64 && epoch + 2 ** tsBits * unitMs <= 8.64e15;
    })
    .map(({ unit, epoch, tsBits, seqBits, nodes }) => {
      const f = (where: string): FieldSpec[] =>
        nodes.flatMap((n, i) => (n.where === where ? [{ name: `n${i}`, bits: n.bits }] : []));
      const fields = [
        ...f('above'),
        { name: 'timestamp', bits: tsBits },
        ...f('between'),
        { name: 'sequence', bits: seqBits },
        ...f('below'),
      ];
      return Layout.from({ fields, epoch, unit });
    });
}

/** A layout with a random instant inside its life (any ms inside the tick). */
function arbLayoutAndInstant(nodesAbove: boolean): fc.Arbitrary<{ layout: Layout; ms: number }> {
  return arbLayout(nodesAbove).chain((layout) =>
    fc
      .record({
        tick: fc.integer({ min: 0, max: layout.maxTick }),
        off: fc.integer({ min: 0, max: layout.unitMs - 1 }),
      })
      .map(({ tick, off }) => ({ layout, ms: layout.epochMs + tick * layout.unitMs + off })),
  );
}

const tickStart = (l: Layout, ms: number) => l.epochMs + l.tickOf(ms) * l.unitMs;

test('GIVEN random layouts (node fields between and below the sequence, every unit) and random instants THEN every ID in [minIdAt, maxIdAt] decodes to that instant and minIdAt-1 / maxIdAt+1 decode to other instants', () => {
  fc.assert(
    fc.property(arbLayoutAndInstant(false), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), ({ layout, ms }, r) => {
      const min = layout.minIdAt(ms);
      const max = layout.maxIdAt(ms);
      const t = tickStart(layout, ms);
      assert.ok(min <= max);
      for (const id of [min, max, min + (r % (max - min + 1n))]) assert.equal(layout.decode(id).unixMs, t);
      if (min > 0n) assert.notEqual(layout.decode(min - 1n).unixMs, t);
      if (max < layout.maxId) assert.notEqual(layout.decode(max + 1n).unixMs, t);
      // the extremes really are composable IDs: all non-time fields zero / all ones
      const lo = layout.decode(min);
      const hi = layout.decode(max);
      assert.equal(lo.sequence, 0);
      assert.equal(hi.sequence, layout.maxSequence);
      for (const f of layout.nodeFields) {
        assert.equal(lo.fields[f.name], 0);
        assert.equal(hi.fields[f.name], f.max);
      }
    }),
    { numRuns: 2000 },
  );
});

test('GIVEN random layouts with node fields anywhere (above the timestamp too) THEN every composed ID of the instant lies in [minIdAt, maxIdAt], and both decode to that instant', () => {
  fc.assert(
    fc.property(
      arbLayoutAndInstant(true),
      fc.integer({ min: 0 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      ({ layout, ms }, seq, frac) => {
        const node: Record<string, number> = {};
        for (const f of layout.nodeFields) node[f.name] = Math.floor(frac * f.max);
        const id = layout.compose({ unixMs: ms, sequence: seq % (layout.maxSequence + 1), node });
        const min = layout.minIdAt(ms);
        const max = layout.maxIdAt(ms);
        assert.ok(min <= id && id <= max);
        assert.equal(layout.decode(min).unixMs, tickStart(layout, ms));
        assert.equal(layout.decode(max).unixMs, tickStart(layout, ms));
      },
    ),
    { numRuns: 1000 },
  );
});

test('GIVEN random layouts and random ranges THEN bounds(from, to) = [minIdAt(from), minIdAt(to)) and an ID is inside exactly when its decoded time is in [floor(from), floor(to))', () => {
  fc.assert(
    fc.property(
      arbLayoutAndInstant(false),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      ({ layout, ms: a }, frac, r) => {
        // any ms of the layout's life, its end of life included (a valid exclusive end)
        const b = layout.epochMs + Math.floor(frac * (layout.expiresAt.getTime() - layout.epochMs));
        const [from, to] = a <= b ? [a, b] : [b, a];
        const bounds = layout.bounds(from, to);
        assert.equal(bounds.min, layout.minIdAt(from));
        if (to < layout.expiresAt.getTime()) assert.equal(bounds.maxExclusive, layout.minIdAt(to));
        assert.equal(bounds.fromMs, tickStart(layout, from));
        assert.equal(bounds.toMs, tickStart(layout, to));
        const id = r % (layout.maxId + 1n);
        const t = layout.decode(id).unixMs;
        const inside = id >= bounds.min && id < bounds.maxExclusive;
        assert.equal(inside, t >= bounds.fromMs && t < bounds.toMs, `id ${id} at ${t}`);
      },
    ),
    { numRuns: 2000 },
  );
});

test('GIVEN every preset THEN bounds of a month hold exactly its IDs, the end of life is a valid exclusive end, and sonyflake (machine last) keeps machine 65535 inside', () => {
  const from = Date.parse('2026-11-01T00:00:00Z');
  const to = Date.parse('2026-12-01T00:00:00Z');
  for (const name of Object.keys(PRESETS) as PresetName[]) {
    const l = Layout.from(name);
    const b = l.bounds(from, to);
    const node: Record<string, number> = {};
    for (const f of l.nodeFields) node[f.name] = f.max;
    assert.ok(l.compose({ unixMs: to - 1, sequence: l.maxSequence, node }) < b.maxExclusive, name);
    assert.ok(
      l.compose({ unixMs: to, sequence: 0, node: Object.fromEntries(l.nodeFields.map((f) => [f.name, 0])) }) >=
        b.maxExclusive,
    );
    assert.equal(l.bounds(l.epochMs, l.expiresAt).maxExclusive, l.maxId + 1n, name);
    assert.equal(l.bounds(l.epochMs, l.expiresAt).min, 0n, name);
  }
  const sony = Layout.from('sonyflake');
  assert.equal(sony.maxIdAt(from) & 0xffffn, 0xffffn);
  assert.equal((sony.maxIdAt(from) >> 16n) & 0xffn, 0xffn);
  assert.equal(sony.minIdAt(from + 9), sony.minIdAt(from)); // 10 ms unit: rounded down
  assert.equal(sony.minIdAt(from + 10), sony.minIdAt(from) + (1n << 24n));
});

test('GIVEN a time before the epoch or from the end of life on THEN FLURRY_E_TIME_OUT_OF_RANGE names the allowed range', () => {
  const l = Layout.from('twitter');
  const range = /2010-11-04T01:42:54\.657Z .*2080-07-10T17:30:30\.209Z/;
  assert.throws(() => l.minIdAt(l.epochMs - 1), code(ErrorCode.TIME_OUT_OF_RANGE, /before the layout's epoch/));
  assert.throws(() => l.maxIdAt(l.expiresAt), code(ErrorCode.TIME_OUT_OF_RANGE, range));
  assert.throws(() => l.bounds(0, l.epochMs + 5), code(ErrorCode.TIME_OUT_OF_RANGE, range));
  assert.throws(
    () => l.bounds(l.epochMs, l.expiresAt.getTime() + 1),
    code(ErrorCode.TIME_OUT_OF_RANGE, /past the layout's end of life/),
  );
  assert.throws(() => l.bounds(l.epochMs + 10, l.epochMs + 5), code(ErrorCode.INVALID_OPTION, /before it starts/));
  assert.throws(() => l.minIdAt(Number.NaN), code(ErrorCode.INVALID_OPTION));
  const b = l.bounds(l.epochMs + 5, l.epochMs + 5);
  assert.equal(b.min, b.maxExclusive); // an empty range
});

test('GIVEN a layout with a node field above the timestamp THEN bounds is FLURRY_E_BOUNDS_NOT_CONTIGUOUS naming the field, and minIdAt/maxIdAt still work', () => {
  const l = Layout.parse('region:3,timestamp:40,worker:8,sequence:12', { epoch: '2024-01-01T00:00:00Z' });
  assert.throws(
    () => l.bounds(l.epochMs, l.epochMs + 1000),
    code(ErrorCode.BOUNDS_NOT_CONTIGUOUS, /region above the timestamp/),
  );
  assert.equal(l.minIdAt(l.epochMs + 1), 1n << 20n);
  assert.equal(l.maxIdAt(l.epochMs), (7n << 60n) | ((1n << 20n) - 1n));
});

test('GIVEN times as the CLI and the API take them THEN parseTime reads Unix ms and ISO dates (zone-less as UTC) and refuses anything else with FLURRY_E_INVALID_OPTION', () => {
  assert.equal(parseTime('2026-11-01', 'from'), Date.UTC(2026, 10, 1));
  assert.equal(parseTime('2026-11-01T12:30', 'from'), Date.UTC(2026, 10, 1, 12, 30));
  assert.equal(parseTime('2026-11-01T12:30:00.250+01:00', 'from'), Date.UTC(2026, 10, 1, 11, 30, 0, 250));
  assert.equal(parseTime(' 1793491200000 ', 'from'), 1793491200000);
  assert.equal(parseTime('-5', 'from'), -5);
  for (const bad of ['', 'yesterday', '2026-13-01', '1e12', '2026-11-01T25:00', '12345678901234567'])
    assert.throws(() => parseTime(bad, 'to'), code(ErrorCode.INVALID_OPTION, /^to = /), bad);
});
