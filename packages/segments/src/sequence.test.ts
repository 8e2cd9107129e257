/**
 * The double buffer, the adaptive step, failures and hand-back, on the memory store and on a store wrapper that
 * fails on command (the real engines are in stores.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlurryError, ManualClock } from '@flurry/core';
import { createMemoryStore, openSequences, parseStoreUrl, type Allocation, type SegmentStore } from './index.js';

function code(err: unknown): string {
  return err instanceof FlurryError ? err.code : String(err);
}

/** A memory store whose allocations can be made to fail, hang, or commit and then report an unknown outcome. */
function faultyStore(name: string): SegmentStore & {
  mode: 'ok' | 'down' | 'unknown';
  allocations: number;
  gate: Promise<void> | undefined;
} {
  const inner = createMemoryStore(name);
  const s = {
    ...inner,
    mode: 'ok' as 'ok' | 'down' | 'unknown',
    allocations: 0,
    gate: undefined as Promise<void> | undefined,
    async allocate(key: string, step?: number): Promise<Allocation> {
      s.allocations++;
      if (s.gate) await s.gate;
      if (s.mode === 'down') {
        throw new FlurryError('FLURRY_E_SEQUENCE_STORE_UNAVAILABLE', 'down', {
          retryAfterMs: 1000,
          outcomeUnknown: false,
        });
      }
      const a = await inner.allocate(key, step);
      if (s.mode === 'unknown') {
        throw new FlurryError('FLURRY_E_SEQUENCE_STORE_UNAVAILABLE', 'lost during commit', {
          outcomeUnknown: true,
          skipped: { start: a.start.toString(), end: a.end.toString() },
        });
      }
      return a;
    },
  };
  return s;
}

describe('segments: sequences on the memory store', () => {
  it('GIVEN a key with step 10 THEN next, tryNext, nextNumber and batch issue 1, 2, 3 … with no gap and no repeat, across many segments', async () => {
    const seqs = await openSequences('memory://basic', { maxStep: 10 });
    await seqs.create('order', { step: 10 });
    const order = seqs.get('order');
    assert.equal(order.tryNextBigInt(), undefined, 'nothing is buffered before the first fetch');
    const got: bigint[] = [await order.nextBigInt()];
    for (let i = 0; i < 50; i++) got.push(await order.nextBigInt());
    got.push(BigInt(await order.next()));
    got.push(...(await order.batchBigInt(95)));
    got.push(...(await order.batch(3)).map(BigInt));
    assert.equal(got.length, 150);
    got.forEach((v, i) => assert.equal(v, BigInt(i + 1)));
    assert.ok(order.status().fetches >= 15);
    await seqs.close();
  });

  it('GIVEN a buffered segment THEN next() returns a plain value (no promise) and tryNext() is synchronous', async () => {
    const seqs = await openSequences('memory://sync', { autoCreate: true });
    const s = seqs.get('k');
    await s.nextBigInt();
    const v = s.nextBigInt();
    assert.equal(typeof v, 'bigint');
    assert.equal(typeof s.tryNext(), 'number');
    await seqs.close();
  });

  it('GIVEN an unknown key and autoCreate off THEN next() rejects FLURRY_E_SEQUENCE_KEY_UNKNOWN; after create() it issues at once', async () => {
    const seqs = await openSequences('memory://unknown');
    const s = seqs.get('nope');
    await assert.rejects(
      async () => s.nextBigInt(),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
    );
    await seqs.create('nope', { start: 100 });
    assert.equal(await s.nextBigInt(), 100n);
    await assert.rejects(
      () => seqs.create('nope'),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_KEY_EXISTS',
    );
    await seqs.close();
  });

  it('GIVEN bad keys, options, counts and URLs THEN each is a coded error', async () => {
    const seqs = await openSequences('memory://bad');
    for (const k of ['', 'a/b', 'x'.repeat(129), 'sp ace', 'ü']) {
      assert.throws(
        () => seqs.get(k),
        (e) => code(e) === 'FLURRY_E_SEQUENCE_KEY_INVALID',
        k,
      );
    }
    assert.doesNotThrow(() => seqs.get('x'.repeat(128)));
    assert.doesNotThrow(() => seqs.get('order:2026-11_a.b'));
    await assert.rejects(
      () => openSequences('memory://x', { autoCreat: true } as never),
      (e) => code(e) === 'FLURRY_E_UNKNOWN_OPTION',
    );
    await assert.rejects(
      () => openSequences('memory://x', { prefetchAt: 0.95 }),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_OPTION',
    );
    await assert.rejects(
      () => seqs.create('s', { step: 0 }),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_OPTION',
    );
    await assert.rejects(
      () => seqs.create('s', { start: -1 }),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_OPTION',
    );
    await seqs.create('c');
    await assert.rejects(
      () => seqs.get('c').batchBigInt(0),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_COUNT',
    );
    await assert.rejects(
      () => seqs.get('c').batchBigInt(100_001),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_COUNT',
    );
    for (const u of [
      'mongo://x',
      'postgres://127.0.0.1/db',
      'postgres://u:p@h/db?tabel=x',
      'mysql://u:p@h/',
      'redis://h/99',
      'postgres://u:p@h/d?table=x;drop',
      'postgres://u:p@h/d?table=a&table=b',
      'nonsense',
    ]) {
      assert.throws(
        () => parseStoreUrl(u),
        (e) => code(e) === 'FLURRY_E_SEQUENCE_URL',
        u,
      );
    }
    assert.throws(
      () => parseStoreUrl('postgres://u:hunter2@h/d?x=1'),
      (e) => e instanceof Error && !e.message.includes('hunter2') && e.message.includes('***'),
    );
    await seqs.close();
  });

  it('GIVEN a key starting just below 2^53 THEN numbers past it are refused as JS numbers (never rounded) and still issued as bigints', async () => {
    const seqs = await openSequences('memory://unsafe');
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    await seqs.create('big', { start: max - 1n, step: 10 });
    const s = seqs.get('big');
    assert.equal(await s.next(), Number.MAX_SAFE_INTEGER - 1);
    assert.equal(await s.next(), Number.MAX_SAFE_INTEGER);
    assert.throws(
      () => s.tryNext(),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_NUMBER_UNSAFE',
    );
    assert.equal(await s.nextBigInt(), max + 2n, 'the refused number is skipped, the bigint path continues');
    assert.equal(s.tryNextString(), (max + 3n).toString(), 'the string form is exact past 2^53 too');
    await seqs.close();
    // Below 2^53 the string form follows the number form, across segments.
    const small = await openSequences('memory://strings');
    await small.create('s', { step: 3 });
    const t = small.get('s');
    const got: string[] = [];
    for (let i = 0; i < 10; i++) got.push(t.tryNextString() ?? String(await t.next()));
    assert.deepEqual(got, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    await small.close();
  });

  it('GIVEN step 1 and a burst of 2,000 concurrent next() THEN none fails ("both segments not ready" never happens) and all are distinct', async () => {
    const seqs = await openSequences('memory://burst', { maxStep: 1_000_000 });
    await seqs.create('tiny', { step: 1 });
    const s = seqs.get('tiny');
    const got = await Promise.all(Array.from({ length: 2000 }, () => Promise.resolve(s.nextBigInt())));
    assert.equal(new Set(got).size, 2000);
    assert.ok(s.status().fetches < 200, `the step grows with the waiting demand (${s.status().fetches} fetches)`);
    await seqs.close();
  });

  it('GIVEN a steady fast rate THEN the step grows (×16 at most per fetch) to maxStep; GIVEN a slow rate THEN it halves back to the stored step', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const seqs = await openSequences('memory://adapt', { clock, targetSegmentMs: 60_000, maxStep: 50_000 });
    await seqs.create('a', { step: 100 });
    const s = seqs.get('a');
    const steps: number[] = [];
    // 10,000 numbers per simulated second: a one-minute segment wants 600,000, capped at 50,000.
    for (let i = 0; i < 400_000; i++) {
      if (s.tryNext() === undefined) await s.next();
      if (i % 10 === 0) clock.advance(1);
      const st = s.status().step;
      if (steps[steps.length - 1] !== st) steps.push(st);
    }
    assert.equal(steps[0], 100);
    for (let i = 1; i < steps.length; i++)
      assert.ok(steps[i] <= steps[i - 1] * 16, `growth ${steps[i - 1]} → ${steps[i]}`);
    assert.equal(steps[steps.length - 1], 50_000);
    // Now one number every 10 s: it shrinks by halves, never below 100.
    const before = s.status().step;
    for (let i = 0; i < 200_000; i++) {
      clock.advance(10_000);
      if (s.tryNext() === undefined) await s.next();
      if (s.status().step === 100) break;
    }
    const after = s.status().step;
    assert.ok(after < before, `${before} → ${after}`);
    assert.equal(after, 100);
    await seqs.close();
  });

  it('GIVEN the store goes down THEN buffered numbers keep coming, then FLURRY_E_SEQUENCE_STORE_UNAVAILABLE with retryAfterMs; once it is back it recovers by itself', async () => {
    const store = faultyStore('down');
    await store.create('k', { start: 1n, step: 100, description: null });
    const seqs = await openSequences(store, { retryMs: 20, maxStep: 100 });
    const s = seqs.get('k');
    for (let i = 1n; i <= 15n; i++) assert.equal(await s.nextBigInt(), i);
    await new Promise((r) => setTimeout(r, 10)); // the prefetch (at 10 %) lands: 101…200 buffered
    store.mode = 'down';
    const seen = new Set<bigint>();
    let err: unknown;
    for (let i = 0; i < 1000; i++) {
      try {
        seen.add(await s.nextBigInt());
      } catch (e) {
        err = e;
        break;
      }
    }
    assert.equal(seen.size, 185, 'both segments were issued from while the store was down');
    assert.equal(code(err), 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE');
    assert.ok(((err as FlurryError).details.retryAfterMs as number) > 0);
    store.mode = 'ok';
    const until = Date.now() + 5000;
    let v: bigint | undefined;
    while (v === undefined && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 30));
      v = s.tryNextBigInt(); // the background retry refilled the buffer without a call
    }
    assert.equal(v, 201n);
    await seqs.close();
  });

  it('GIVEN an allocation that commits but reports an unknown outcome THEN its range is skipped, counted, and never issued', async () => {
    const store = faultyStore('unknown');
    await store.create('k', { start: 1n, step: 10, description: null });
    const seqs = await openSequences(store, { retryMs: 10 });
    const s = seqs.get('k');
    store.mode = 'unknown';
    await assert.rejects(
      async () => s.nextBigInt(),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE',
    );
    store.mode = 'ok';
    await new Promise((r) => setTimeout(r, 30));
    const v = await s.nextBigInt();
    assert.ok(v >= 11n, `the possibly-committed range 1…10 is skipped (got ${v})`);
    assert.equal(s.status().skippedAllocations, 1);
    assert.ok(BigInt(s.status().wasted) >= 10n);
    await seqs.close();
  });

  it('GIVEN a clean close while nobody allocated after us THEN the unused numbers are handed back and the next instance continues densely', async () => {
    const a = await openSequences('memory://handback', { maxStep: 100 });
    await a.create('k', { step: 100 });
    const sa = a.get('k');
    for (let i = 0; i < 30; i++) await sa.nextBigInt(); // 1…30, the next segment (101…200) prefetched
    await new Promise((r) => setTimeout(r, 5));
    const { handedBack, wasted } = await a.close();
    assert.equal(handedBack, 170n);
    assert.equal(wasted, 0n);
    const b = await openSequences('memory://handback');
    assert.equal(await b.get('k').nextBigInt(), 31n);
    // Someone else allocated after b's segment: b's remainder cannot go back, it is counted as wasted.
    const c = await openSequences('memory://handback');
    await c.get('k').nextBigInt();
    const r = await b.close();
    assert.equal(r.handedBack, 0n);
    assert.ok(r.wasted > 0n);
    await c.close();
  });

  it('GIVEN two keys each holding unused numbers WHEN the sequences close THEN handedBack sums both keys (issue 24)', async () => {
    const a = await openSequences('memory://handback-two', { autoCreate: true, defaultStep: 10 });
    for (const key of ['alpha', 'beta']) {
      const s = a.get(key);
      await s.nextBigInt();
      await s.nextBigInt();
    }
    await new Promise((r) => setTimeout(r, 5));
    const store = createMemoryStore('handback-two');
    const maxIds = async (): Promise<bigint> => (await store.show('alpha'))!.maxId + (await store.show('beta'))!.maxId;
    const before = await maxIds();
    const { handedBack, wasted } = await a.close();
    const after = await maxIds();
    assert.equal(wasted, 0n);
    assert.ok(before - after > 20n, `both keys gave numbers back (${before - after})`);
    assert.equal(handedBack, before - after, 'handedBack is what the store took back from both keys');
    const b = await openSequences('memory://handback-two');
    assert.equal(await b.get('alpha').nextBigInt(), 3n);
    assert.equal(await b.get('beta').nextBigInt(), 3n);
    await b.close();
  });

  it('GIVEN several Sequences on one store, racing THEN no number is issued twice and each instance sees increasing numbers', async () => {
    const store = createMemoryStore('race');
    await store.create('k', { start: 1n, step: 7, description: null });
    const insts = await Promise.all([1, 2, 3].map(() => openSequences(createMemoryStore('race'))));
    const all = new Set<bigint>();
    await Promise.all(
      insts.map(async (inst) => {
        const s = inst.get('k');
        let last = 0n;
        for (let i = 0; i < 3000; i++) {
          const v = await s.nextBigInt();
          assert.ok(v > last);
          last = v;
          assert.ok(!all.has(v), `duplicate ${v}`);
          all.add(v);
        }
      }),
    );
    assert.equal(all.size, 9000);
    await Promise.all(insts.map((i) => i.close()));
  });

  it('GIVEN a closed Sequences THEN its sequences refuse with FLURRY_E_SEQUENCE_CLOSED', async () => {
    const seqs = await openSequences('memory://closed', { autoCreate: true });
    const s = seqs.get('k');
    await s.nextBigInt();
    await seqs.close();
    assert.throws(
      () => s.tryNextBigInt(),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_CLOSED',
    );
    assert.throws(
      () => seqs.get('k'),
      (e) => code(e) === 'FLURRY_E_SEQUENCE_CLOSED',
    );
  });

  it('GIVEN requests for keys the store does not know THEN they are dropped after the retry delay, at most one store trip per retry delay each, and statusOf() opens nothing', async () => {
    const store = faultyStore('forget');
    const seqs = await openSequences(store, { retryMs: 100 });
    for (let i = 0; i < 50; i++) {
      await assert.rejects(
        Promise.resolve(seqs.get(`made-up-${i}`).nextBigInt()),
        (e) => code(e) === 'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
      );
    }
    for (let i = 0; i < 5; i++) {
      await assert.rejects(
        Promise.resolve(seqs.get('made-up-0').nextBigInt()),
        (e) => code(e) === 'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
      );
    }
    assert.equal(store.allocations, 50, 'the same unknown key again within its retry delay reaches no store');
    assert.equal(seqs.statusOf('never-asked').issued, 0);
    assert.equal(seqs.status().length, 50, 'statusOf() did not open a key');
    await new Promise((r) => setTimeout(r, 250)); // retryMs 100 + 1, and slack
    assert.equal(seqs.status().length, 0, 'the unknown keys were dropped');
    await seqs.create('made-up-0', { start: 7 });
    assert.equal(await seqs.get('made-up-0').nextBigInt(), 7n, 'a key created later works');
    assert.equal(seqs.status().length, 1);
    await seqs.close();
  });
});
