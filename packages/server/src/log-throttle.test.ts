import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GeneratorEvent } from '@flurry/core';
import { EpisodeLog } from './log-throttle.js';
import { ServiceMetrics } from './metrics.js';
import { generatorEventLogging } from './service.js';

function setup(endMessage: string | null = 'issuing resumed') {
  let t = 1000;
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string | undefined }> = [];
  const logger = {
    warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    info: (obj: object, msg?: string) => lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
  };
  const log = new EpisodeLog({ logger, message: 'refused to issue: lease deadline passed', noun: 'refusals', ...(endMessage !== null ? { endMessage } : {}), now: () => t });
  return { log, lines, advance: (ms: number) => (t += ms) };
}

test('GIVEN thousands of refusals in one episode THEN the first is logged at warn, then at most one summary per 10 s with the count since the last line', () => {
  const { log, lines, advance } = setup();
  log.event({ code: 'FLURRY_E_LEASE_EXPIRED' });
  assert.deepEqual(lines.slice(), [{ level: 'warn', obj: { code: 'FLURRY_E_LEASE_EXPIRED' }, msg: 'refused to issue: lease deadline passed' }]);
  for (let i = 0; i < 4811; i++) {
    advance(2); // 4811 × 2 ms = 9.6 s: still inside the first interval
    log.event({ code: 'FLURRY_E_LEASE_EXPIRED' });
  }
  assert.equal(lines.length, 1, 'nothing more within 10 s');
  advance(400); // 10.02 s since the first line
  log.event({ code: 'FLURRY_E_LEASE_EXPIRED' });
  assert.equal(lines.length, 2);
  assert.equal(lines[1].level, 'warn');
  assert.equal(lines[1].msg, 'refused to issue: lease deadline passed (4,812 more refusals in the last 10 s)');
  assert.equal(lines[1].obj.suppressed, 4812);
  assert.equal(lines[1].obj.episodeTotal, 4813);
  advance(5000);
  log.event({});
  assert.equal(lines.length, 2, 'the interval restarts at the summary');
  advance(5000);
  log.event({});
  assert.equal(lines.at(-1)?.msg, 'refused to issue: lease deadline passed (2 more refusals in the last 10 s)');
});

test('GIVEN an episode ends THEN one info line gives its total, and the next refusal is logged again at once', () => {
  const { log, lines, advance } = setup();
  log.end();
  assert.equal(lines.length, 0, 'no episode, no line');
  log.event({});
  advance(3000);
  log.event({});
  log.event({});
  advance(1000);
  log.end();
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[1], { level: 'info', obj: { total: 3, unlogged: 2, durationMs: 4000 }, msg: 'issuing resumed (3 refusals in 4 s, 2 of them since the last line)' });
  assert.equal(log.active, false);
  log.end();
  assert.equal(lines.length, 2, 'ending twice logs once');
  advance(100);
  log.event({ again: true });
  assert.deepEqual(lines[2], { level: 'warn', obj: { again: true }, msg: 'refused to issue: lease deadline passed' });
});

test('GIVEN no end message THEN end() is silent but re-arms the first-event line', () => {
  const { log, lines } = setup(null);
  log.event({});
  log.event({});
  log.end();
  assert.equal(lines.length, 1);
  log.event({});
  assert.equal(lines.length, 2);
  assert.equal(lines[1].msg, 'refused to issue: lease deadline passed');
});

test('GIVEN a fenced service refusing 5,000 calls and clock refusals under throw THEN the metrics count every one while the log has a few lines, and issuing again ends both episodes', async () => {
  let t = 0;
  const lines: Array<[string, string | undefined]> = [];
  const logger = { warn: (_o: object, m?: string) => lines.push(['warn', m]), info: (_o: object, m?: string) => lines.push(['info', m]) };
  const metrics = new ServiceMetrics({ issued: () => 0, lease: () => undefined, ready: () => true, node: () => undefined });
  const { onEvent, issuedOk } = generatorEventLogging(logger, (e) => metrics.onGeneratorEvent(e), () => t);
  const fenced: GeneratorEvent = { type: 'fenced', code: 'FLURRY_E_LEASE_EXPIRED' };
  for (let i = 0; i < 5000; i++) {
    t += 3; // 15 s in all
    onEvent(fenced);
  }
  for (let i = 0; i < 100; i++) onEvent({ type: 'clock-backwards', byMs: 40, action: 'threw' });
  issuedOk();
  issuedOk();
  onEvent({ type: 'clock-backwards', byMs: 5, action: 'tolerated' });
  issuedOk();
  const text = await metrics.text();
  assert.match(text, /^flurry_fenced_total 5000$/m, 'every refusal counted');
  assert.match(text, /^flurry_clock_regression_ms_count 101$/m);
  assert.deepEqual(lines, [
    ['warn', 'refused to issue: lease deadline passed'],
    ['warn', 'refused to issue: lease deadline passed (3,334 more refusals in the last 10 s)'],
    ['warn', 'the wall clock stepped backwards'],
    ['info', 'issuing resumed: the lease is valid again (5,000 refusals in 15 s, 1,665 of them since the last line)'],
    ['info', 'issuing resumed after the clock stepped backwards (100 refusals in 0 s, 99 of them since the last line)'],
    ['warn', 'the wall clock stepped backwards'],
  ]);
});
