import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { GeneratorEvent } from '@flurry/core';
import { EpisodeLog, type EpisodeLogOptions, type Schedule } from './log-throttle.js';
import { ServiceMetrics } from './metrics.js';
import { generatorEventLogging } from './issuing.js';

/** A fake timer: `due()` lists the pending timers' due times; `run()` fires those due by now. */
function fakeTimers(now: () => number) {
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  const schedule: Schedule = (fn, ms) => {
    const timer = { at: now() + ms, fn, live: true };
    timers.push(timer);
    return () => void (timer.live = false);
  };
  return {
    schedule,
    due: () => timers.filter((x) => x.live).map((x) => x.at),
    run: () => {
      for (const x of timers) {
        if (x.live && x.at <= now()) {
          x.live = false;
          x.fn();
        }
      }
    },
  };
}

function setup(endMessage: string | null = 'issuing resumed', more: Partial<EpisodeLogOptions> = {}) {
  let t = 1000;
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string | undefined }> = [];
  const logger = {
    warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    info: (obj: object, msg?: string) => lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
  };
  const timers = fakeTimers(() => t);
  const log = new EpisodeLog({
    logger,
    message: 'refused to issue: lease deadline passed',
    noun: 'refusals',
    ...(endMessage !== null ? { endMessage } : {}),
    now: () => t,
    schedule: timers.schedule,
    ...more,
  });
  return { log, lines, timers, advance: (ms: number) => (t += ms) };
}

test('GIVEN thousands of refusals in one episode THEN the first is logged at warn, then at most one summary per 10 s with the count since the last line', () => {
  const { log, lines, advance } = setup();
  log.event({ code: 'FLURRY_E_LEASE_EXPIRED' });
  assert.deepEqual(lines.slice(), [
    { level: 'warn', obj: { code: 'FLURRY_E_LEASE_EXPIRED' }, msg: 'refused to issue: lease deadline passed' },
  ]);
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
  assert.deepEqual(lines[1], {
    level: 'info',
    obj: { total: 3, unlogged: 2, durationMs: 4000 },
    msg: 'issuing resumed (3 refusals in 4 s, 2 of them since the last line)',
  });
  assert.equal(log.active, false);
  log.end();
  assert.equal(lines.length, 2, 'ending twice logs once');
  advance(100);
  log.event({ again: true });
  assert.deepEqual(lines[2], { level: 'warn', obj: { again: true }, msg: 'refused to issue: lease deadline passed' });
});

test('GIVEN no end message THEN end() writes only the summary of the pending events, and re-arms the first-event line', () => {
  const { log, lines } = setup(null);
  log.event({});
  log.end();
  assert.equal(lines.length, 1, 'nothing pending: silent');
  log.event({});
  log.event({});
  log.end();
  assert.equal(lines.length, 3);
  assert.equal(lines[2].msg, 'refused to issue: lease deadline passed (1 more refusals in the last 0 s)');
  log.event({});
  assert.equal(lines.length, 4);
  assert.equal(lines[3].msg, 'refused to issue: lease deadline passed');
});

test('GIVEN an event more than the interval after the previous event of its episode THEN it starts a new episode, logged at warn again, after the summary of the pending ones', () => {
  const { log, lines, advance } = setup('issuing resumed', { schedule: null });
  log.event({ n: 1 });
  advance(10_000);
  log.event({ n: 2 }); // exactly the interval: same episode, summed up (10 s since the first line)
  advance(3_000);
  log.event({ n: 3 }); // counted
  advance(10_001);
  log.event({ n: 4 }); // a quiet gap: new episode
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, l.obj.n]),
    [
      ['warn', 'refused to issue: lease deadline passed', 1],
      ['warn', 'refused to issue: lease deadline passed (1 more refusals in the last 10 s)', 2],
      ['warn', 'refused to issue: lease deadline passed (1 more refusals in the last 13 s)', 3],
      ['warn', 'refused to issue: lease deadline passed', 4],
    ],
  );
  assert.equal(lines[2].obj.episodeTotal, 3);
  advance(3_600_000);
  log.event({ n: 5 });
  assert.deepEqual(
    lines[4],
    { level: 'warn', obj: { n: 5 }, msg: 'refused to issue: lease deadline passed' },
    'an hour later: a first line, not "1 more in the last 3600 s"',
  );
  log.end();
  assert.equal(lines[5].msg, 'issuing resumed (1 refusals in 0 s)', 'the end line counts the new episode only');
});

test('GIVEN events pending when the service stops THEN flush() sums them up in one line, keeps the episode going, and writes nothing when nothing is pending', () => {
  const { log, lines, advance } = setup('issuing resumed', { schedule: null });
  log.flush();
  assert.equal(lines.length, 0, 'no episode: nothing');
  log.event({});
  log.flush();
  assert.equal(lines.length, 1, 'only the first line, nothing pending');
  for (let i = 0; i < 500; i++) {
    advance(10);
    log.event({ code: 'FLURRY_E_LEASE_EXPIRED' });
  }
  assert.equal(lines.length, 1);
  log.flush();
  assert.deepEqual(lines[1], {
    level: 'warn',
    obj: { code: 'FLURRY_E_LEASE_EXPIRED', suppressed: 500, sinceLastLineMs: 5000, episodeTotal: 501 },
    msg: 'refused to issue: lease deadline passed (500 more refusals in the last 5 s)',
  });
  log.flush();
  assert.equal(lines.length, 2, 'flushing twice writes once');
  assert.equal(log.active, true, 'the episode goes on');
  advance(1000);
  log.event({});
  log.end();
  assert.equal(lines[2].msg, 'issuing resumed (502 refusals in 6 s, 1 of them since the last line)');
});

test('GIVEN events pending and no further event THEN the timer sums them up one interval after the last line, and a line written first cancels it', () => {
  const { log, lines, timers, advance } = setup();
  log.event({});
  assert.deepEqual(timers.due(), [], 'nothing pending, no timer');
  advance(2000);
  log.event({});
  advance(1000);
  log.event({});
  assert.deepEqual(timers.due(), [11_000], 'one timer, due 10 s after the first line');
  advance(6999);
  timers.run();
  assert.equal(lines.length, 1);
  advance(1);
  timers.run();
  assert.equal(lines[1].msg, 'refused to issue: lease deadline passed (2 more refusals in the last 10 s)');
  assert.deepEqual(timers.due(), []);
  advance(2000);
  log.event({}); // 9 s after the previous event: the same episode
  assert.deepEqual(timers.due(), [21_000]);
  advance(1000);
  log.end(); // a line written before the timer: cancelled
  assert.deepEqual(timers.due(), []);
  assert.equal(lines.length, 3);
  advance(20_000);
  timers.run();
  assert.equal(lines.length, 3);
});

test('GIVEN the default timer THEN a pending summary does not keep the process alive', () => {
  const url = new URL('./log-throttle.js', import.meta.url).href;
  const script = `import { EpisodeLog } from ${JSON.stringify(url)};
const log = new EpisodeLog({ logger: { warn() {}, info() {} }, message: 'm', noun: 'n', intervalMs: 60000 });
log.event({}); log.event({}); log.event({});`;
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(Date.now() - started < 30_000, 'exited without waiting for the 60 s timer');
});

test('GIVEN summed-up events with maxOf byMs THEN the summary and the end line carry the largest byMs (and byMsMin the smallest) of the events they cover, not the latest', () => {
  const { log, lines, advance } = setup('resumed', { maxOf: 'byMs' });
  log.event({ byMs: 7, action: 'threw' });
  for (const byMs of [5, 4000, 30]) {
    advance(3400);
    log.event({ byMs, action: 'threw' });
  }
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[1].obj, {
    byMs: 4000,
    byMsMin: 5,
    action: 'threw',
    suppressed: 3,
    sinceLastLineMs: 10_200,
    episodeTotal: 4,
  });
  log.event({ byMs: 90 });
  log.event({ byMs: 12 });
  log.end();
  assert.deepEqual(lines[2].obj, { total: 6, unlogged: 2, durationMs: 10_200, byMs: 90, byMsMin: 12 });
  log.event({ byMs: 1 });
  advance(100);
  log.end();
  assert.deepEqual(lines[4].obj, { total: 1, unlogged: 0, durationMs: 100 }, 'the window restarts with each line');
});

test('GIVEN a fenced service refusing 5,000 calls and clock refusals under throw THEN the metrics count every one while the log has a few lines, and issuing again ends both episodes', async () => {
  let t = 0;
  const lines: Array<[string, string | undefined]> = [];
  const logger = {
    warn: (_o: object, m?: string) => lines.push(['warn', m]),
    info: (_o: object, m?: string) => lines.push(['info', m]),
  };
  const metrics = new ServiceMetrics({
    issued: () => 0,
    lease: () => undefined,
    ready: () => true,
    node: () => undefined,
  });
  const { onEvent, issuedOk } = generatorEventLogging(
    logger,
    (e) => metrics.onGeneratorEvent(e),
    () => t,
    null,
  );
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

test('GIVEN tolerated clock steps an hour apart, then one 5 s later, then a shutdown while fenced THEN each step is logged (the later one by the timer, with its byMs) and flush() writes the pending refusals', () => {
  let t = 0;
  const lines: Array<[string, string | undefined, Record<string, unknown>]> = [];
  const logger = {
    warn: (o: object, m?: string) => lines.push(['warn', m, o as Record<string, unknown>]),
    info: (o: object, m?: string) => lines.push(['info', m, o as Record<string, unknown>]),
  };
  const timers = fakeTimers(() => t);
  let counted = 0;
  const { onEvent, issuedOk, flush } = generatorEventLogging(
    logger,
    () => counted++,
    () => t,
    timers.schedule,
  );
  onEvent({ type: 'clock-backwards', byMs: 5, action: 'tolerated' });
  issuedOk();
  t = 3_600_000;
  onEvent({ type: 'clock-backwards', byMs: 900, action: 'tolerated' });
  issuedOk();
  t = 3_605_000;
  onEvent({ type: 'clock-backwards', byMs: 4000, action: 'waited' });
  issuedOk();
  t = 3_610_000;
  timers.run();
  t = 86_400_000;
  issuedOk();
  onEvent({ type: 'fenced', code: 'FLURRY_E_LEASE_EXPIRED' });
  t += 10_000;
  onEvent({ type: 'fenced', code: 'FLURRY_E_LEASE_EXPIRED' });
  for (let i = 0; i < 500; i++) {
    t += 10;
    onEvent({ type: 'fenced', code: 'FLURRY_E_LEASE_EXPIRED' });
  }
  flush(); // the service's close()
  assert.equal(counted, 505);
  assert.deepEqual(
    lines.map(([level, msg, o]) => [level, msg, o.byMs]),
    [
      ['warn', 'the wall clock stepped backwards', 5],
      ['warn', 'the wall clock stepped backwards', 900],
      ['warn', 'the wall clock stepped backwards (1 more clock-backwards events in the last 10 s)', 4000],
      ['warn', 'refused to issue: lease deadline passed', undefined],
      ['warn', 'refused to issue: lease deadline passed (1 more refusals in the last 10 s)', undefined],
      ['warn', 'refused to issue: lease deadline passed (500 more refusals in the last 5 s)', undefined],
    ],
  );
  assert.deepEqual(timers.due(), [], 'no timer left after flush()');
});
