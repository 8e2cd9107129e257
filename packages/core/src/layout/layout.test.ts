import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout, PRESETS, DEFAULT_EPOCH_MS, type PresetName } from './index.js';

const code = (c: string) => (e: unknown) => e instanceof FlurryError && e.code === c;
const codeAnd = (c: string, re: RegExp) => (e: unknown) =>
  e instanceof FlurryError && e.code === c && re.test(e.message);

test('GIVEN the twitter preset THEN IDs are ((ms - 1288834974657) << 22) | datacenter << 17 | worker << 12 | sequence, as in Snowflake', () => {
  const l = Layout.from('twitter');
  assert.equal(l.toFieldsString(), 'timestamp:41,datacenter:5,worker:5,sequence:12');
  assert.equal(l.epochMs, 1288834974657);
  const ms = 1656432460105;
  const expected = (BigInt(ms - 1288834974657) << 22n) | (11n << 17n) | (26n << 12n) | 7n;
  assert.equal(l.compose({ unixMs: ms, sequence: 7, node: { datacenter: 11, worker: 26 } }), expected);
  const d = l.decode(expected);
  assert.deepEqual(d.fields, { datacenter: 11, worker: 26 });
  assert.equal(d.sequence, 7);
  assert.equal(d.unixMs, ms);
  assert.equal(d.timestamp, '2022-06-28T16:07:40.105Z');
  assert.equal(l.totalBits, 63);
  assert.equal(l.nodeCount, 1024);
  assert.equal(l.maxIdsPerSecondPerNode, 4_096_000);
  assert.equal(l.signedOverflowAt, null);
  assert.equal(l.expiresAt.getTime(), 1288834974657 + 2 ** 41);
});

test('GIVEN the leaf preset THEN IDs match Leaf SnowflakeIDGenImpl: (ts - twepoch) << 22 | workerId << 12 | sequence', () => {
  const l = Layout.from('leaf');
  assert.equal(l.toFieldsString(), 'timestamp:41,worker:10,sequence:12');
  const ms = 1700000000123;
  assert.equal(
    l.compose({ unixMs: ms, sequence: 4095, node: { worker: 1023 } }),
    (BigInt(ms - 1288834974657) << 22n) | (1023n << 12n) | 4095n,
  );
  // Same ID space as twitter: datacenter 1 / worker 2 == leaf worker 34.
  assert.equal(
    l.idSpaceKey(l.nodeBits({ worker: 34 })),
    Layout.from('twitter').idSpaceKey(Layout.from('twitter').nodeBits({ datacenter: 1, worker: 2 })),
  );
});

test("GIVEN the discord preset THEN Discord's documented example 175928847299117063 decodes to 2016-04-30T11:18:25.796Z, worker 1, process 0, increment 7", () => {
  const l = Layout.from('discord');
  const d = l.decode('175928847299117063');
  assert.equal(d.unixMs, 1462015105796);
  assert.equal(d.timestamp, '2016-04-30T11:18:25.796Z');
  assert.deepEqual(d.fields, { worker: 1, process: 0 });
  assert.equal(d.sequence, 7);
  assert.equal(l.compose({ unixMs: 1462015105796, sequence: 7, node: { worker: 1, process: 0 } }), 175928847299117063n);
  assert.equal(l.totalBits, 64);
  // The top bit is first set once the 42-bit timestamp reaches 2^41 ms.
  assert.equal(l.signedOverflowAt!.getTime(), 1420070400000 + 2 ** 41);
  assert.equal(l.signedOverflowAt!.toISOString(), '2084-09-06T15:47:35.552Z');
});

test('GIVEN the sonyflake preset THEN IDs are elapsed10ms << 24 | sequence << 16 | machine since 2014-09-01 UTC, as in sony/sonyflake', () => {
  const l = Layout.from('sonyflake');
  assert.equal(l.toFieldsString(), 'timestamp:39,sequence:8,machine:16');
  assert.equal(l.unit, '10ms');
  assert.equal(l.epochMs, Date.UTC(2014, 8, 1));
  const ms = Date.UTC(2024, 5, 1, 12, 0, 0, 37); // truncated to the 10 ms tick
  const elapsed = BigInt(Math.floor((ms - Date.UTC(2014, 8, 1)) / 10));
  const id = l.compose({ unixMs: ms, sequence: 200, node: { machine: 0xbeef } });
  assert.equal(id, (elapsed << 24n) | (200n << 16n) | 0xbeefn);
  const d = l.decode(id);
  assert.equal(d.unixMs, ms - 7);
  assert.equal(d.sequence, 200);
  assert.deepEqual(d.fields, { machine: 0xbeef });
  assert.equal(l.maxIdsPerSecondPerNode, 25_600);
  assert.equal(l.nodeCount, 65_536);
  // Sonyflake's documented lifetime: 174 years.
  assert.equal(l.expiresAt.getUTCFullYear(), 2188);
});

test("GIVEN the instagram preset THEN the 2011 post's example (1387263000 ms, shard 1341, sequence 5001 % 1024) composes bit for bit", () => {
  const l = Layout.from('instagram');
  assert.equal(l.toFieldsString(), 'timestamp:41,shard:13,sequence:10');
  const id = l.compose({ unixMs: 1314220021721 + 1387263000, sequence: 5001 % 1024, node: { shard: 1341 } });
  assert.equal(id, (1387263000n << 23n) | (1341n << 10n) | 905n);
  assert.equal(l.totalBits, 64);
  assert.equal(l.maxIdsPerSecondPerNode, 1_024_000);
});

test('GIVEN the js53 preset THEN every ID is a safe JavaScript integer and its documented capacity holds', () => {
  const l = Layout.from('js53');
  assert.equal(l.totalBits, 53);
  assert.equal(l.maxId, 2n ** 53n - 1n);
  assert.ok(Number.isSafeInteger(Number(l.maxId)));
  assert.equal(l.epochMs, DEFAULT_EPOCH_MS);
  assert.equal(l.nodeCount, 128);
  assert.equal(l.maxIdsPerSecondPerNode, 25_600);
  assert.equal(l.expiresAt.toISOString(), '2112-02-09T13:44:29.440Z');
  assert.equal(l.describe().safeInteger, true);
});

test('GIVEN every preset THEN describe() is JSON-safe and round-trips through JSON', () => {
  for (const name of Object.keys(PRESETS) as PresetName[]) {
    const info = Layout.from(name).describe();
    assert.deepEqual(JSON.parse(JSON.stringify(info)), info);
    assert.equal(info.name, name);
    assert.equal(Layout.from(Layout.from(name).toSpec()).toFieldsString(), info.spec);
  }
});

test('GIVEN the seed layout 37+20+16 = 73 bits THEN FLURRY_E_LAYOUT_TOO_WIDE says it overflows by 9 bits', () => {
  assert.throws(
    () => Layout.parse('timestamp:37,server:20,sequence:16'),
    codeAnd(ErrorCode.LAYOUT_TOO_WIDE, /73 bits.*overflows 64 bits by 9 bits; narrow the fields by 9 bits in total\./),
  );
});

test('GIVEN a layout 1 bit too wide or a 1-bit node field THEN the messages say "1 bit", not "1 bits"', () => {
  assert.throws(
    () => Layout.parse('timestamp:41,worker:11,sequence:13'),
    codeAnd(
      ErrorCode.LAYOUT_TOO_WIDE,
      /= 65 bits .*overflows 64 bits by 1 bit; narrow the fields by 1 bit in total\.$/,
    ),
  );
  const l = Layout.from({
    fields: [
      { name: 'timestamp', bits: 41 },
      { name: 'shard', bits: 1 },
      { name: 'sequence', bits: 12 },
    ],
    epoch: 0,
  });
  assert.throws(
    () => l.validateNode({ shard: 2 }),
    codeAnd(ErrorCode.NODE_OUT_OF_RANGE, /shard is 1 bit wide, so it must be an integer in 0\.\.1\./),
  );
});

test('GIVEN zero, negative or fractional widths THEN FLURRY_E_LAYOUT_FIELD_WIDTH', () => {
  for (const bits of [0, -3, 2.5, Number.NaN]) {
    assert.throws(
      () =>
        Layout.from({
          fields: [
            { name: 'timestamp', bits: 41 },
            { name: 'worker', bits },
            { name: 'sequence', bits: 12 },
          ],
          epoch: 0,
        }),
      code(ErrorCode.LAYOUT_FIELD_WIDTH),
      `bits ${bits}`,
    );
  }
  assert.throws(() => Layout.parse('timestamp:41,worker:0,sequence:12'), code(ErrorCode.LAYOUT_FIELD_WIDTH));
  assert.throws(() => Layout.parse('timestamp:30,sequence:31'), code(ErrorCode.LAYOUT_FIELD_WIDTH));
  assert.throws(() => Layout.parse('timestamp:53,sequence:11'), code(ErrorCode.LAYOUT_FIELD_WIDTH));
});

test('GIVEN a missing or doubled timestamp or sequence THEN FLURRY_E_LAYOUT_MISSING_FIELD', () => {
  assert.throws(() => Layout.parse('worker:10,sequence:12'), codeAnd(ErrorCode.LAYOUT_MISSING_FIELD, /no timestamp/));
  assert.throws(() => Layout.parse('timestamp:41,worker:10'), codeAnd(ErrorCode.LAYOUT_MISSING_FIELD, /no sequence/));
  assert.throws(
    () => Layout.parse('timestamp:20,timestamp:20,sequence:12'),
    codeAnd(ErrorCode.LAYOUT_MISSING_FIELD, /2 timestamp/),
  );
  assert.throws(() => Layout.from({ fields: [], epoch: 0 }), code(ErrorCode.LAYOUT_MISSING_FIELD));
});

test('GIVEN a sequence field above the timestamp THEN FLURRY_E_LAYOUT_SPEC (IDs would decrease at each new tick)', () => {
  assert.throws(() => Layout.parse('sequence:12,timestamp:41'), code(ErrorCode.LAYOUT_SPEC));
  assert.throws(() => Layout.parse('worker:10,sequence:12,timestamp:41'), code(ErrorCode.LAYOUT_SPEC));
  Layout.parse('worker:10,timestamp:41,sequence:12');
});

test('GIVEN duplicate or invalid field names THEN FLURRY_E_LAYOUT_FIELD_NAME', () => {
  assert.throws(
    () => Layout.parse('timestamp:41,worker:5,worker:5,sequence:12'),
    codeAnd(ErrorCode.LAYOUT_FIELD_NAME, /worker appears twice/),
  );
  assert.throws(
    () =>
      Layout.from({
        fields: [
          { name: 'timestamp', bits: 41 },
          { name: '9lives', bits: 3 },
          { name: 'sequence', bits: 12 },
        ],
        epoch: 0,
      }),
    code(ErrorCode.LAYOUT_FIELD_NAME),
  );
  // __proto__ would become the prototype of a decoded ID's fields, not a field (the layout
  // explorer's route builds layouts from any query).
  assert.throws(
    () => Layout.parse('timestamp:41,__proto__:5,sequence:12'),
    codeAnd(ErrorCode.LAYOUT_FIELD_NAME, /__proto__.*reserved/),
  );
});

test('GIVEN an epoch in the future, negative or unreadable THEN FLURRY_E_LAYOUT_EPOCH', () => {
  assert.throws(
    () => Layout.parse('timestamp:41,sequence:12', { epoch: Date.now() + 86_400_000 }),
    codeAnd(ErrorCode.LAYOUT_EPOCH, /future/),
  );
  // Beyond the largest Date (8.64e15 ms): still the coded refusal, never a RangeError.
  assert.throws(
    () => Layout.parse('timestamp:41,sequence:12', { epoch: '99999999999999999999' }),
    codeAnd(ErrorCode.LAYOUT_EPOCH, /100000000000000000000 \(Unix ms\) is in the future/),
  );
  assert.throws(() => Layout.parse('timestamp:41,sequence:12', { epoch: 'yesterday' }), code(ErrorCode.LAYOUT_EPOCH));
  assert.throws(
    () =>
      Layout.from({
        fields: [
          { name: 'timestamp', bits: 41 },
          { name: 'sequence', bits: 12 },
        ],
        epoch: -5,
      }),
    code(ErrorCode.LAYOUT_EPOCH),
  );
  assert.throws(
    () =>
      Layout.from({
        fields: [
          { name: 'timestamp', bits: 41 },
          { name: 'sequence', bits: 12 },
        ],
        epoch: new Date('x'),
      }),
    code(ErrorCode.LAYOUT_EPOCH),
  );
});

test('GIVEN a valid date before 1970 as the epoch THEN FLURRY_E_LAYOUT_EPOCH says it is valid but too early, not unreadable', () => {
  for (const epoch of ['1960-01-01', '1969-12-31T23:59:59.999Z', Date.UTC(1960, 0, 1)]) {
    assert.throws(
      () => Layout.parse('timestamp:41,sequence:12', { epoch }),
      (e: unknown) =>
        e instanceof FlurryError &&
        e.code === ErrorCode.LAYOUT_EPOCH &&
        /is a valid date but before 1970/.test(e.message) &&
        /from 1970-01-01T00:00:00Z to now/.test(e.message) &&
        !/not a valid date/.test(e.message),
      String(epoch),
    );
  }
  assert.throws(
    () => Layout.parse('timestamp:41,sequence:12', { epoch: '1960-13-45' }),
    codeAnd(ErrorCode.LAYOUT_EPOCH, /not a valid date/),
  );
});

test('GIVEN unknown presets, units or unreadable --fields THEN coded errors', () => {
  assert.throws(() => Layout.from('snowflake'), code(ErrorCode.LAYOUT_UNKNOWN_PRESET));
  assert.throws(() => Layout.parse('timestamp:41,sequence:12', { unit: '5ms' }), code(ErrorCode.LAYOUT_UNIT));
  assert.throws(() => Layout.parse('timestamp=41,sequence:12'), code(ErrorCode.LAYOUT_SPEC));
  assert.throws(() => Layout.parse(''), code(ErrorCode.LAYOUT_SPEC));
  assert.throws(() => Layout.from(null as never), code(ErrorCode.LAYOUT_SPEC));
});

test('GIVEN a field list WHEN given to Layout.from THEN it reads it as Layout.parse does; an unknown name still names Layout.parse (issue 24)', () => {
  const spec = 'timestamp:41,datacenter:5,worker:5,sequence:12';
  const a = Layout.from(spec);
  const b = Layout.parse(spec);
  assert.equal(a.toFieldsString(), b.toFieldsString());
  assert.equal(a.epochMs, DEFAULT_EPOCH_MS);
  assert.equal(a.unitMs, 1);
  assert.throws(() => Layout.from('timestamp:41,sequence:99'), code(ErrorCode.LAYOUT_TOO_WIDE));
  assert.throws(
    () => Layout.from('snowflake'),
    (e) => e instanceof FlurryError && /Layout\.parse/.test(e.message),
  );
});

test('GIVEN --fields with an ISO or ms epoch and a unit THEN Layout.parse builds the same layout as the spec', () => {
  const a = Layout.parse('timestamp:41, datacenter:5, worker:5, sequence:12', { epoch: '1288834974657' });
  assert.equal(a.epochMs, 1288834974657);
  assert.equal(a.toFieldsString(), Layout.from('twitter').toFieldsString());
  const b = Layout.parse('timestamp:39,sequence:8,machine:16', { epoch: '2014-09-01T00:00:00Z', unit: '10ms' });
  assert.equal(b.epochMs, Layout.from('sonyflake').epochMs);
  assert.equal(b.unitMs, 10);
  const c = Layout.parse('timestamp:31,worker:10,sequence:12', { unit: '1s' });
  assert.equal(c.epochMs, DEFAULT_EPOCH_MS);
  assert.equal(c.maxIdsPerSecondPerNode, 4096);
  assert.equal(Layout.parse('timestamp:41,sequence:12', { epoch: '2024-01-01' }).epochMs, Date.UTC(2024, 0, 1));
});

test('GIVEN node values outside their field THEN validateNode throws FLURRY_E_NODE_OUT_OF_RANGE naming the range', () => {
  const l = Layout.from('twitter');
  l.validateNode({ datacenter: 31, worker: 0 });
  assert.throws(
    () => l.validateNode({ datacenter: 32, worker: 0 }),
    codeAnd(ErrorCode.NODE_OUT_OF_RANGE, /datacenter = 32.*0\.\.31/),
  );
  assert.throws(() => l.validateNode({ datacenter: -1, worker: 0 }), code(ErrorCode.NODE_OUT_OF_RANGE));
  assert.throws(() => l.validateNode({ datacenter: 1.5, worker: 0 }), code(ErrorCode.NODE_OUT_OF_RANGE));
  assert.throws(() => l.validateNode({ datacenter: 1 }), codeAnd(ErrorCode.NODE_OUT_OF_RANGE, /worker is missing/));
  assert.throws(
    () => l.validateNode({ datacenter: 1, worker: 1, shard: 2 }),
    codeAnd(ErrorCode.NODE_OUT_OF_RANGE, /no node field "shard"/),
  );
  assert.throws(() => l.validateNode({ datacenter: 1, worker: 1, sequence: 2 }), code(ErrorCode.NODE_OUT_OF_RANGE));
});

test('GIVEN compose arguments outside the layout THEN coded errors', () => {
  const l = Layout.from('twitter');
  assert.throws(
    () => l.compose({ unixMs: l.epochMs - 1, sequence: 0, node: { datacenter: 0, worker: 0 } }),
    code(ErrorCode.CLOCK_BEFORE_EPOCH),
  );
  assert.throws(
    () => l.compose({ unixMs: l.expiresAt.getTime(), sequence: 0, node: { datacenter: 0, worker: 0 } }),
    code(ErrorCode.LAYOUT_EXPIRED),
  );
  assert.throws(
    () => l.compose({ unixMs: Date.now(), sequence: 4096, node: { datacenter: 0, worker: 0 } }),
    code(ErrorCode.INVALID_OPTION),
  );
  // The last representable tick still composes, to the layout's largest timestamp.
  const last = l.compose({ unixMs: l.expiresAt.getTime() - 1, sequence: 4095, node: { datacenter: 31, worker: 31 } });
  assert.equal(last, l.maxId);
});

test('GIVEN any layout and any in-range parts THEN decode(compose(parts)) returns them (property)', () => {
  const now = Date.now();
  const layoutArb = fc
    .record({
      ts: fc.integer({ min: 20, max: 44 }),
      seq: fc.integer({ min: 1, max: 22 }),
      nodes: fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }),
      tsFirst: fc.boolean(),
      unit: fc.constantFrom('1ms', '10ms', '1s' as const),
      epoch: fc.integer({ min: 0, max: now - 1 }),
    })
    .filter(
      (r) =>
        r.ts + r.seq + r.nodes.reduce((a, b) => a + b, 0) <= 64 &&
        r.epoch + 2 ** r.ts * { '1ms': 1, '10ms': 10, '1s': 1000 }[r.unit] <= 8.64e15,
    )
    .map((r) => {
      const nodeFields = r.nodes.map((bits, i) => ({ name: `n${i}`, bits }));
      const fields = r.tsFirst
        ? [{ name: 'timestamp', bits: r.ts }, ...nodeFields, { name: 'sequence', bits: r.seq }]
        : [
            ...nodeFields.slice(0, 1),
            { name: 'timestamp', bits: r.ts },
            { name: 'sequence', bits: r.seq },
            ...nodeFields.slice(1),
          ];
      return Layout.from({ fields, epoch: r.epoch, unit: r.unit as '1ms' });
    });
  const presetArb = fc.constantFrom(...(Object.keys(PRESETS) as PresetName[])).map((p) => Layout.from(p));
  fc.assert(
    fc.property(
      fc
        .oneof(presetArb, layoutArb)
        .chain((l) =>
          fc.tuple(
            fc.constant(l),
            fc.integer({ min: 0, max: Math.min(l.maxTick, 2 ** 40) }),
            fc.integer({ min: 0, max: l.maxSequence }),
            fc.tuple(...l.nodeFields.map((f) => fc.integer({ min: 0, max: f.max }))),
          ),
        ),
      ([l, tick, sequence, values]) => {
        const node = Object.fromEntries(l.nodeFields.map((f, i) => [f.name, values[i]]));
        const unixMs = l.epochMs + tick * l.unitMs;
        const id = l.compose({ unixMs, sequence, node });
        assert.ok(id >= 0n && id <= l.maxId);
        const d = l.decode(id);
        assert.equal(d.unixMs, unixMs);
        assert.equal(d.sequence, sequence);
        assert.deepEqual(d.fields, node);
        assert.equal(l.decode(id.toString()).id, id);
      },
    ),
    { numRuns: 400 },
  );
});

test('GIVEN two IDs of one node THEN the later tick or higher sequence gives the larger ID (property, timestamp-first presets)', () => {
  const l = Layout.from('twitter');
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.integer({ min: 0, max: 4095 }),
      fc.integer({ min: 0, max: 4095 }),
      (tick, s1, s2) => {
        const node = { datacenter: 3, worker: 4 };
        const a = l.compose({ unixMs: l.epochMs + tick, sequence: s1, node });
        const b = l.compose({ unixMs: l.epochMs + tick + 1, sequence: s2, node });
        assert.ok(a < b);
      },
    ),
    { numRuns: 200 },
  );
});
