/**
 * Formatted serials: parsing, the exact period boundary in named time zones with an injected clock, and the
 * per-period keys.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlurryError, ManualClock } from '@flurry/core';
import { openSequences, parseSerialFormat, periodOf, renderSerial } from './index.js';

const code = (e: unknown): string => (e instanceof FlurryError ? e.code : String(e));

describe('segments: formatted serials', () => {
  it('GIVEN unknown placeholders, no {seq}, two {seq} or a format too coarse for its reset THEN FLURRY_E_SEQUENCE_FORMAT', () => {
    for (const [f, r] of [
      ['ORD-{date}-{seq}', 'day'],
      ['ORD-{yyyyMMdd}', 'day'],
      ['{seq}{seq}{yyyy}', 'year'],
      ['ORD-{yyyyMM}-{seq}', 'day'],
      ['ORD-{MMdd}-{seq}', 'day'],
      ['ORD-{yyyyMMdd}-{seq:8}', 'day'],
      ['ORD-{yyyyMMdd}-{seq:031}', 'day'],
      ['ORD-{yyy}-{seq}', 'never'],
      ['ORD-{yyyy-{seq}', 'year'],
      ['ORD-}{seq}', 'never'],
    ] as const) {
      assert.throws(
        () => parseSerialFormat(f, r),
        (e) => code(e) === 'FLURRY_E_SEQUENCE_FORMAT',
        f,
      );
    }
    assert.throws(
      () => parseSerialFormat('{seq}', 'weekly' as never),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_OPTION',
    );
    const f = parseSerialFormat('{{X}}-{yy}{MM}-{yyyy-MM-dd}-{seq:04}', 'day');
    assert.equal(
      renderSerial(f, { year: 2026, month: 3, day: 9, hour: 0, minute: 0, second: 0 }, 7n),
      '{X}-2603-2026-03-09-0007',
    );
    assert.equal(
      renderSerial(parseSerialFormat('N{seq:02}', 'never'), periodOf(0, 'UTC'), 12345),
      'N12345',
      'never cut',
    );
  });

  it('GIVEN Asia/Shanghai (UTC+8) and an injected clock THEN 23:59:59.999 local belongs to that day and 00:00:00.000 starts the next at 1', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 15, 59, 59, 998)); // 23:59:59.998 in Shanghai
    const seqs = await openSequences('memory://serial-sh', { clock });
    const orders = seqs.serial('order', { format: 'ORD-{yyyyMMdd}-{seq:08}', reset: 'day', timeZone: 'Asia/Shanghai' });
    assert.equal(await orders.next(), 'ORD-20261123-00000001');
    clock.advance(1); // 23:59:59.999
    assert.equal(await orders.next(), 'ORD-20261123-00000002');
    clock.advance(1); // 00:00:00.000 of the 24th
    assert.equal(await orders.next(), 'ORD-20261124-00000001');
    assert.equal(await orders.next(), 'ORD-20261124-00000002');
    assert.equal(orders.keyAt(clock.now()), 'order:20261124');
    const keys = (await seqs.list()).map((k) => k.key);
    assert.deepEqual(keys, ['order:20261123', 'order:20261124'], 'each period is its own key, created on first use');
    await seqs.close();
  });

  it('GIVEN America/New_York across the DST change and a month reset THEN the local calendar decides, not UTC', async () => {
    // 2026-03-31 23:30 EDT is 2026-04-01 03:30 UTC: still March locally.
    const clock = new ManualClock(Date.UTC(2026, 3, 1, 3, 30));
    const seqs = await openSequences('memory://serial-ny', { clock });
    const inv = seqs.serial('inv', { format: 'INV-{yyyy}{MM}-{seq:05}', reset: 'month', timeZone: 'America/New_York' });
    assert.equal(await inv.next(), 'INV-202603-00001');
    clock.advance(30 * 60_000 - 1); // 23:59:59.999 EDT
    assert.equal(await inv.next(), 'INV-202603-00002');
    clock.advance(1);
    assert.equal(await inv.next(), 'INV-202604-00001');
    assert.throws(
      () => seqs.serial('x', { format: '{seq}', reset: 'never', timeZone: 'Mars/Olympus' }),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_OPTION',
    );
    assert.throws(
      () => seqs.serial('x', { format: '{seq}', reset: 'never', zone: 'UTC' } as never),
      (e) => code(e) === 'FLURRY_E_UNKNOWN_OPTION',
    );
    await seqs.close();
  });

  it('GIVEN two instances issuing serials of one day concurrently THEN no serial repeats', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 12));
    const a = await openSequences('memory://serial-two', { clock });
    const b = await openSequences('memory://serial-two', { clock });
    const fa = a.serial('t', { format: 'T-{yyyyMMdd}-{seq}', timeZone: 'UTC', step: 5 });
    const fb = b.serial('t', { format: 'T-{yyyyMMdd}-{seq}', timeZone: 'UTC', step: 5 });
    const got = await Promise.all(
      Array.from({ length: 500 }, (_, i) => Promise.resolve(i % 2 ? fa.next() : fb.next())),
    );
    assert.equal(new Set(got).size, 500);
    await a.close();
    await b.close();
  });
});
