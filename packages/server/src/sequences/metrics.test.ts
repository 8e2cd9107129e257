// Per-key segment metrics (metrics.ts) over @flurry/segments' memory store and a prom-client registry:
// the counters match what was issued and fetched, the latency histogram counts every fetch, the gauges show the
// step and the buffers, the label set stays bounded (keys past maxKeys under key="_other", totals kept), a close
// counts numbers handed back or wasted; and a real `flurry serve --sequences` exposes them at /metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createMemoryStore, openSequences, type SegmentStore } from '@flurry/segments';
import { OTHER_KEYS, SequenceMetrics } from './metrics.js';
import { httpGet, startFlurry } from '../test-support.js';

/** The value of `name{key="…"}` in a Prometheus text exposition (undefined when absent). */
function valueOf(text: string, name: string, key?: string): number | undefined {
  const label = key === undefined ? '' : `{key="${key}"}`;
  const line = text.split('\n').find((l) => l.startsWith(`${name}${label} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function seriesOf(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`));
}

test('GIVEN two keys issuing THEN issued, fetches, latency, step, buffered and segments per key match the sequences', async () => {
  const registry = new Registry();
  const m = new SequenceMetrics(registry);
  const sequences = await openSequences(createMemoryStore('metrics-a'), { onEvent: m.onEvent });
  m.attach(sequences);
  try {
    await sequences.create('order', { step: 100 });
    await sequences.create('invoice', { step: 10 });
    const order = sequences.get('order');
    for (let i = 0; i < 250; i++) await order.next();
    await sequences.get('invoice').batch(7);
    const text = await registry.metrics();
    const st = Object.fromEntries(sequences.status().map((s) => [s.key, s]));
    assert.equal(valueOf(text, 'flurry_segment_issued_total', 'order'), 250);
    assert.equal(valueOf(text, 'flurry_segment_issued_total', 'invoice'), 7);
    assert.equal(valueOf(text, 'flurry_segment_fetches_total', 'order'), st.order.fetches);
    assert.ok(st.order.fetches >= 2, `250 numbers at step 100 take 2 fetches at least, saw ${st.order.fetches}`);
    assert.equal(valueOf(text, 'flurry_segment_fetch_duration_seconds_count', 'order'), st.order.fetches);
    assert.ok(text.includes('flurry_segment_fetch_duration_seconds_bucket{le="+Inf",key="order"}'));
    assert.equal(valueOf(text, 'flurry_segment_step', 'order'), st.order.step);
    const remaining =
      (st.order.current?.remaining ?? 0) +
      (st.order.next ? Number(st.order.next.end) - Number(st.order.next.start) : 0);
    assert.equal(valueOf(text, 'flurry_segment_buffered', 'order'), remaining);
    assert.ok((valueOf(text, 'flurry_segment_buffer_segments', 'order') ?? -1) >= 1);
    assert.equal(valueOf(text, 'flurry_segment_keys'), 2);
    assert.equal(valueOf(text, 'flurry_segment_keys_aggregated'), 0);
    // Counters only grow between scrapes, and a second scrape does not count twice.
    await order.next();
    const again = await registry.metrics();
    assert.equal(valueOf(again, 'flurry_segment_issued_total', 'order'), 251);
  } finally {
    await sequences.close();
  }
});

test('GIVEN more keys than maxKeys THEN the rest are under key="_other" and no number is lost from the totals', async () => {
  const registry = new Registry();
  const m = new SequenceMetrics(registry, { maxKeys: 2 });
  const sequences = await openSequences(createMemoryStore('metrics-b'), { autoCreate: true, onEvent: m.onEvent });
  m.attach(sequences);
  try {
    const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
    for (const [i, k] of keys.entries()) await sequences.get(k).batch(i + 1);
    const text = await registry.metrics();
    const series = seriesOf(text, 'flurry_segment_issued_total');
    assert.equal(series.length, 3, series.join('\n'));
    assert.equal(valueOf(text, 'flurry_segment_issued_total', 'k1'), 1);
    assert.equal(valueOf(text, 'flurry_segment_issued_total', 'k2'), 2);
    assert.equal(valueOf(text, 'flurry_segment_issued_total', OTHER_KEYS), 3 + 4 + 5);
    assert.equal(valueOf(text, 'flurry_segment_keys'), 5);
    assert.equal(valueOf(text, 'flurry_segment_keys_aggregated'), 3);
    for (const name of ['flurry_segment_step', 'flurry_segment_buffered', 'flurry_segment_fetches_total']) {
      assert.ok(seriesOf(text, name).length <= 3, name);
    }
    assert.throws(() => new SequenceMetrics(new Registry(), { maxKeys: -1 }), RangeError);
  } finally {
    await sequences.close();
  }
});

test('GIVEN a close THEN numbers handed back and numbers wasted are counted (a store that refuses the hand-back wastes them)', async () => {
  const inner = createMemoryStore('metrics-c');
  const store: SegmentStore = { ...inner, handBack: () => Promise.resolve(false) };
  const registry = new Registry();
  const m = new SequenceMetrics(registry);
  const events: string[] = [];
  const sequences = await openSequences(store, {
    autoCreate: true,
    defaultStep: 50,
    onEvent: (e) => {
      events.push(e.type);
      m.onEvent(e);
    },
  });
  m.attach(sequences);
  // No key is open before the first call.
  const before = await registry.metrics();
  await sequences.get('lost').batch(10);
  const { wasted } = await sequences.close();
  assert.ok(wasted >= 40n, `at least the 40 unissued numbers of the first segment are wasted, got ${wasted}`);
  assert.ok(events.includes('fetched') && events.includes('closed'), events.join(','));
  assert.equal(valueOf(before, 'flurry_segment_keys'), 0);

  // With hand-back: a second process-like instance over the memory store that accepts it.
  const registry2 = new Registry();
  const m2 = new SequenceMetrics(registry2, { maxKeys: 0 });
  const seq2 = await openSequences(createMemoryStore('metrics-d'), {
    autoCreate: true,
    defaultStep: 50,
    onEvent: m2.onEvent,
  });
  m2.attach(seq2);
  await seq2.get('back').batch(10);
  const { handedBack } = await seq2.close();
  const text2 = await registry2.metrics();
  assert.equal(valueOf(text2, 'flurry_segment_keys'), 0, 'a closed key is not open any more');
  assert.equal(valueOf(text2, 'flurry_segment_issued_total', OTHER_KEYS), 10);
  assert.equal(valueOf(text2, 'flurry_segment_handed_back_total', OTHER_KEYS), Number(handedBack));
  assert.ok(handedBack > 0n, 'the memory store takes the unused remainder back');
});

test('GIVEN flurry serve --sequences memory://… THEN /metrics has the per-key segment metrics', async () => {
  const svc = await startFlurry({ args: ['--sequences', 'memory://metrics-serve', '--auto-create'] });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await httpGet(svc.port, '/v1/sequences/ticket/next')).status, 200);
    const r = await httpGet(svc.port, '/metrics');
    assert.equal(r.status, 200);
    assert.equal(valueOf(r.body, 'flurry_segment_issued_total', 'ticket'), 5);
    assert.equal(valueOf(r.body, 'flurry_segment_fetches_total', 'ticket'), 1);
    assert.ok((valueOf(r.body, 'flurry_segment_buffered', 'ticket') ?? 0) > 0);
    assert.equal(valueOf(r.body, 'flurry_segment_keys'), 1);
  } finally {
    await svc.stop();
  }
});
