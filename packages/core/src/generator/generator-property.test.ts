// Property tests: a million IDs through stalls, steps back and jumps forward under every policy, and random interleavings of next/fill/batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../clock.js';
import { FlurryError, ErrorCode } from '../errors.js';
import { Layout } from '../layout/index.js';
import { Generator } from './generator.js';
import { type BackwardsPolicy, type ExhaustedPolicy } from './options.js';
import { rng, chaos } from './test-kit.js';

for (const onExhausted of ['wait', 'borrow'] as const) {
  for (const onClockBackwards of ['tolerate', 'wait', 'throw'] as const) {
    test(`GIVEN a clock that stalls, steps back 1 ms/10 ms/10 s and jumps forward, onExhausted=${onExhausted}, onClockBackwards=${onClockBackwards} THEN 1,000,000 IDs strictly increase`, () => {
      const r = chaos(
        'twitter',
        onExhausted,
        onClockBackwards,
        1_000_000,
        7 + onExhausted.length * 13 + onClockBackwards.length,
      );
      if (onClockBackwards === 'throw') assert.ok((r.errors.get(ErrorCode.CLOCK_BACKWARDS) ?? 0) > 0);
      assert.ok(r.stats.clockBackwards > 0);
    });
  }
}

test('GIVEN the sonyflake layout (10 ms ticks, sequence above the machine) and random sequence starts THEN 300,000 IDs strictly increase under every backwards policy', () => {
  for (const p of ['tolerate', 'wait', 'throw'] as const)
    chaos('sonyflake', 'wait', p, 100_000, 99 + p.length, 'random');
});

test('GIVEN random interleavings of next(), fill(), batch() and clock stalls, steps back and forward THEN every ID is exactly (tick, seq, node), unique and strictly increasing', () => {
  // next() returns the previous ID plus one sequence step while it can: this checks that no
  // path (fill, a new tick, a borrowed tick, a step back) leaves it adding to a stale ID.
  const epoch = Date.UTC(2024, 0, 1);
  const layouts = [
    Layout.from('twitter'),
    Layout.parse('worker:1,timestamp:41,sequence:22', { epoch }),
    Layout.parse('timestamp:35,sequence:4,node:24', { epoch, unit: '10ms' }),
    Layout.parse('timestamp:40,node:6,sequence:17', { epoch }),
  ];
  const policies: Array<{ onExhausted: ExhaustedPolicy; onClockBackwards: BackwardsPolicy }> = [
    { onExhausted: 'borrow', onClockBackwards: 'tolerate' },
    { onExhausted: 'wait', onClockBackwards: 'tolerate' },
    { onExhausted: 'borrow', onClockBackwards: 'wait' },
  ];
  let checked = 0;
  for (let seed = 1; seed <= 24; seed++) {
    const rand = rng(seed);
    const layout = layouts[seed % layouts.length];
    const node = Object.fromEntries(layout.nodeFields.map((f) => [f.name, Math.floor(rand() * (f.max + 1))]));
    const clock = new ManualClock(Math.max(layout.epochMs, epoch) + 1_000_000);
    const gen = new Generator({
      layout,
      node,
      clock,
      sequenceStart: seed % 2 === 0 ? 'random' : 'zero',
      ...policies[seed % policies.length],
    });
    try {
      let prev = -1n;
      let taken = 0;
      let refused = 0;
      const take = (id: bigint): void => {
        const d = layout.decode(id);
        // decode() reads every bit of the ID into (tick, seq, node fields): the node must be the generator's.
        for (const f of layout.nodeFields)
          assert.equal(d.fields[f.name], node[f.name], `seed ${seed}: ${id} is not (tick, seq, node)`);
        assert.equal(
          layout.compose({ unixMs: d.unixMs, sequence: d.sequence, node }),
          id,
          `seed ${seed}: ${id} is not (tick, seq, node)`,
        );
        assert.ok(id > prev, `seed ${seed}: ${id} after ${prev}`);
        prev = id;
        checked++;
        taken++;
      };
      for (let op = 0; op < 400; op++) {
        const r = rand();
        try {
          if (r < 0.5) take(gen.next());
          else if (r < 0.6) {
            const buf = new BigUint64Array(1 + Math.floor(rand() * 40));
            gen.fill(buf);
            for (const id of buf) take(id);
          } else if (r < 0.65) for (const id of gen.batch(1 + Math.floor(rand() * 10))) take(id);
          else if (r < 0.8) clock.advance(Math.floor(rand() * 3) * layout.unitMs);
          else if (r < 0.88) clock.stepWall(-Math.floor(rand() * 3 * layout.unitMs));
          else if (r < 0.92) clock.stepWall(Math.floor(rand() * 50));
          else for (let i = 0; i < 20; i++) take(gen.next()); // a run within one tick
        } catch (e) {
          // A step back beyond a policy's bound is refused with a coded error; go on.
          assert.ok(e instanceof FlurryError && e.code === ErrorCode.CLOCK_BACKWARDS, `seed ${seed}: ${String(e)}`);
          refused++;
        }
      }
      assert.ok(gen.stats.issued >= taken, 'issued counts every ID');
      assert.ok(taken > 300, `seed ${seed}: only ${taken} IDs (${refused} refusals)`);
    } finally {
      gen.close();
    }
  }
  assert.ok(checked > 24 * 300, `checked ${checked} IDs`);
});
