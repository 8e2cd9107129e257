import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '@flurry/core';
import { exitCodeFor } from './cli/io.js';
import { failureKind } from './errors.js';
import { retryOutage, type RetryTimers, type StartWait } from './start-retry.js';

/** Timers that fire only when the test says so. */
function manualTimers(): RetryTimers & { pending: number[]; fire(): void } {
  const queue: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
  return {
    get pending() {
      return queue.filter((t) => !t.cleared).map((t) => t.ms);
    },
    setTimeout(fn, ms) {
      const t = { fn, ms, cleared: false };
      queue.push(t);
      return t;
    },
    clearTimeout(h) {
      (h as { cleared: boolean }).cleared = true;
    },
    fire() {
      const t = queue.find((x) => !x.cleared);
      assert.ok(t, 'a timer is pending');
      t.cleared = true;
      t.fn();
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test('GIVEN coded errors of every package THEN one classification: outages, bad input (exit 2) and the rest (exit 1)', () => {
  const kind = (code: string) => failureKind(new FlurryError(code, 'x'));
  for (const code of ['FLURRY_E_REGISTRY_UNREACHABLE', 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE']) {
    assert.equal(kind(code), 'outage', code);
    assert.equal(exitCodeFor(new FlurryError(code, 'x')), 1, code);
  }
  for (const code of [
    'FLURRY_E_USAGE',
    'FLURRY_E_CONFIG',
    'FLURRY_E_REGISTRY_URL',
    'FLURRY_E_REGISTRY_OPTION',
    'FLURRY_E_REGISTRY_AUTH',
    'FLURRY_E_REGISTRY_CLIENT_MISSING',
    'FLURRY_E_SEQUENCE_URL',
    'FLURRY_E_SEQUENCE_AUTH',
    'FLURRY_E_SEQUENCE_CLIENT_MISSING',
    'FLURRY_E_SEQUENCE_STORE_CORRUPT',
    'FLURRY_E_SEQUENCE_STORE_VOLATILE',
    'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
    'FLURRY_E_LAYOUT_SPEC',
  ]) {
    assert.equal(kind(code), 'bad-input', code);
    assert.equal(exitCodeFor(new FlurryError(code, 'x')), 2, code);
  }
  for (const code of [
    'FLURRY_E_REGISTRY_EXHAUSTED',
    'FLURRY_E_REGISTRY_CORRUPT',
    'FLURRY_E_CLOCK_BEHIND_HIGH_WATER',
    'FLURRY_E_LISTEN',
    'FLURRY_E_SEQUENCE_EXHAUSTED',
    'FLURRY_E_SEQUENCE_CLOSED',
  ]) {
    assert.equal(kind(code), 'other', code);
    assert.equal(exitCodeFor(new FlurryError(code, 'x')), 1, code);
  }
  assert.equal(failureKind(new Error('boom')), 'other');
});

test('GIVEN a step failing with outages THEN it is retried with doubling delays up to the maximum, reporting each wait, until it answers', async () => {
  const timers = manualTimers();
  const waits: StartWait[] = [];
  let calls = 0;
  const done = retryOutage(
    'store',
    () => {
      calls++;
      if (calls <= 4) return Promise.reject(new FlurryError('FLURRY_E_SEQUENCE_STORE_UNAVAILABLE', `down ${calls}`));
      return Promise.resolve('open');
    },
    { timers, initialMs: 100, maxMs: 300, now: () => 42, onWait: (w) => waits.push(w) },
  );
  for (const want of [100, 200, 300, 300]) {
    await tick();
    assert.deepEqual(timers.pending, [want]);
    timers.fire();
  }
  assert.equal(await done, 'open');
  assert.equal(calls, 5);
  assert.deepEqual(
    waits.map((w) => [w.step, w.error.message, w.attempt, w.retryInMs, w.since]),
    [
      ['store', 'down 1', 1, 100, 42],
      ['store', 'down 2', 2, 200, 42],
      ['store', 'down 3', 3, 300, 42],
      ['store', 'down 4', 4, 300, 42],
    ],
  );
});

test('GIVEN a step failing with bad input or another error THEN it is not retried', async () => {
  for (const err of [
    new FlurryError('FLURRY_E_SEQUENCE_AUTH', 'refused'),
    new FlurryError('FLURRY_E_REGISTRY_EXHAUSTED', 'all held'),
    new Error('boom'),
  ]) {
    const timers = manualTimers();
    let calls = 0;
    await assert.rejects(
      retryOutage(
        'registry',
        () => {
          calls++;
          return Promise.reject(err);
        },
        { timers },
      ),
      (e) => e === err,
    );
    assert.equal(calls, 1);
    assert.deepEqual(timers.pending, []);
  }
});

test('GIVEN the signal aborts while waiting THEN the wait ends with FLURRY_E_UNAVAILABLE and no timer is left', async () => {
  const timers = manualTimers();
  const stop = new AbortController();
  const done = retryOutage(
    'registry',
    () => Promise.reject(new FlurryError('FLURRY_E_REGISTRY_UNREACHABLE', 'refused')),
    { timers, signal: stop.signal },
  );
  await tick();
  assert.deepEqual(timers.pending, [500]);
  stop.abort();
  await assert.rejects(
    done,
    (e: FlurryError) => e.code === 'FLURRY_E_UNAVAILABLE' && /node-ID registry/.test(e.message),
  );
  assert.deepEqual(timers.pending, []);
});

test('GIVEN the signal aborts while a try runs THEN no wait follows its outage: the start ends at once', async () => {
  const timers = manualTimers();
  const stop = new AbortController();
  await assert.rejects(
    retryOutage(
      'store',
      () => {
        stop.abort();
        return Promise.reject(new FlurryError('FLURRY_E_SEQUENCE_STORE_UNAVAILABLE', 'refused'));
      },
      { timers, signal: stop.signal },
    ),
    (e: FlurryError) => e.code === 'FLURRY_E_UNAVAILABLE' && /sequence store/.test(e.message),
  );
  assert.deepEqual(timers.pending, []);
});
