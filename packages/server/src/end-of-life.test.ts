// The end of a layout's life, seen early (issue 29, part 4): the warning a year ahead in
// `flurry layout`, `flurry serve`'s log, the console's status and the
// `flurry_layout_end_of_life_seconds` gauge, each against an injected clock; `flurry serve`
// itself as a process with a layout that really ends within the year.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { Layout, ManualClock } from '@flurry/core';
import { runCli } from './cli/main.js';
import { loadServeConfig } from './config/index.js';
import { END_OF_LIFE_WARNING_MS, endOfLifeWarning, formatRemaining } from './end-of-life.js';
import { createServiceCore, type ServiceCore } from './service-core.js';
import type { ServiceLogger } from './service.js';
import { httpGet, startFlurry } from './test-support.js';

const DAY = 86_400_000;
/** 2^35 ms ≈ 397.7 days of life from its epoch. */
const SHORT_FIELDS = 'timestamp:35,worker:10,sequence:12';
const EPOCH = Date.UTC(2020, 0, 1);
const short = Layout.parse(SHORT_FIELDS, { epoch: EPOCH });
const END = short.expiresAt.getTime();

const quiet: ServiceLogger = { info() {}, warn() {}, error() {}, debug() {}, child: () => quiet };

async function cli(argv: string[], now: () => number): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  err.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await runCli({ argv, env: { TZ: 'UTC' }, stdout: out, stderr: err, now });
  return { code, stdout, stderr };
}

function gauge(text: string): number {
  const m = /^flurry_layout_end_of_life_seconds (\S+)$/m.exec(text);
  assert.ok(m, `the gauge is exposed:\n${text.slice(0, 400)}`);
  return Number(m[1]);
}

test('GIVEN durations THEN formatRemaining words them floored, largest units first', () => {
  assert.equal(formatRemaining(2 * 365 * DAY + 14 * DAY + 5000), '2 years 14 days');
  assert.equal(formatRemaining(365 * DAY + DAY), '1 year 1 day');
  assert.equal(formatRemaining(197 * DAY + 3 * 3_600_000 + 59_000), '197 days 3 h');
  assert.equal(formatRemaining(5 * 3_600_000 + 12 * 60_000), '5 h 12 min');
  assert.equal(formatRemaining(250_999), '4 min 10 s');
  assert.equal(formatRemaining(999), '0 s');
  assert.equal(formatRemaining(-5), '0 s');
});

test('GIVEN an injected clock THEN the warning starts exactly a year before the end of life and stops at it (past it the layout is refused instead)', () => {
  assert.equal(endOfLifeWarning(short, END - END_OF_LIFE_WARNING_MS), undefined, 'a year left: no warning yet');
  const w = endOfLifeWarning(short, END - END_OF_LIFE_WARNING_MS + 1);
  assert.match(w ?? '', /^layout custom \(timestamp:35,worker:10,sequence:12\) reaches its end of life at /);
  assert.match(w ?? '', /in 364 days 23 h \(less than a year\).*35-bit timestamp field.*FLURRY_E_LAYOUT_EXPIRED/);
  assert.match(w ?? '', /later epoch \(--epoch\) or a wider timestamp field/);
  assert.match(endOfLifeWarning(short, END - 1) ?? '', /in 0 s/);
  assert.equal(endOfLifeWarning(short, END), undefined, 'at the end: refused, not warned');
  assert.equal(endOfLifeWarning(Layout.from('twitter'), Date.UTC(2026, 0, 1)), undefined);
  assert.match(endOfLifeWarning(Layout.from('twitter'), Date.UTC(2080, 0, 1)) ?? '', /in 191 days 17 h/);
});

test('GIVEN flurry layout and an injected clock THEN it prints the time left, marks it and warns on stderr within the year only', async () => {
  const args = ['layout', '--fields', SHORT_FIELDS, '--epoch', String(EPOCH)];
  const early = await cli(args, () => EPOCH + DAY);
  assert.equal(early.code, 0, early.stderr);
  assert.match(early.stdout, /^Time left: +1 year 31 days\n/m);
  assert.doesNotMatch(early.stdout, /LESS THAN A YEAR/);
  assert.equal(early.stderr, '');

  const late = await cli(args, () => END - 100 * DAY);
  assert.equal(late.code, 0, late.stderr);
  assert.match(late.stdout, /^Time left: +100 days 0 h {3}\*\* LESS THAN A YEAR: plan a move to a new layout \*\*\n/m);
  assert.match(late.stderr, /^flurry: warning: layout custom .* reaches its end of life at .*, in 100 days 0 h/);
  const json = await cli([...args, '--json'], () => END - 100 * DAY);
  assert.doesNotThrow(() => JSON.parse(json.stdout), 'stdout stays JSON');
  assert.match(json.stderr, /less than a year/);

  const past = await cli(args, () => END + 1);
  assert.match(past.stdout, /^Time left: +none\n/m);
  assert.match(past.stderr, /already past/);
  assert.doesNotMatch(past.stderr, /less than a year/);
});

test('GIVEN a service core on an injected clock THEN the gauge counts the seconds to the end of life and the console status turns to its warning within the year', async () => {
  const clock = new ManualClock(END - END_OF_LIFE_WARNING_MS - 10 * DAY);
  const config = loadServeConfig(
    ['--fields', SHORT_FIELDS, '--epoch', String(EPOCH), '--registry', 'file:/nonexistent-unused'],
    {},
    () => clock.now(),
  );
  const core: ServiceCore = createServiceCore(config, quiet, { clock });
  try {
    assert.equal(gauge(await core.metrics.text()), (END_OF_LIFE_WARNING_MS + 10 * DAY) / 1000);
    assert.equal(core.console.data.status().layout.endOfLifeWarning, false);
    clock.advance(10 * DAY + 1000);
    const left = gauge(await core.metrics.text());
    assert.equal(left, END_OF_LIFE_WARNING_MS / 1000 - 1);
    assert.ok(left < 31_536_000, 'the documented alert (flurry_layout_end_of_life_seconds < 31536000) fires');
    assert.equal(core.console.data.status().layout.endOfLifeWarning, true);
    clock.advance(END_OF_LIFE_WARNING_MS);
    assert.equal(gauge(await core.metrics.text()), -1, 'negative once past');
  } finally {
    core.console.data.close();
  }
});

test('GIVEN flurry serve with a layout ending within the year THEN it warns on stderr and in its log at start, serves, and its gauge is under the alert threshold', async () => {
  const epoch = Date.now() - 200 * DAY; // ends about 197 days from now
  const svc = await startFlurry({ args: ['--fields', SHORT_FIELDS, '--epoch', String(epoch)] });
  try {
    const end = Layout.parse(SHORT_FIELDS, { epoch }).expiresAt;
    assert.match(svc.stderr(), /^flurry: warning: layout custom .* reaches its end of life at .*, in 19\d days/m);
    const line = svc.logs.find((l) => l.level === 'warn' && typeof l.msg === 'string' && /end of life/.test(l.msg));
    assert.ok(line, `a warn log line: ${JSON.stringify(svc.logs)}`);
    assert.equal(line.endOfLife, end.toISOString());
    assert.ok(Math.abs(Number(line.endOfLifeSeconds) - (end.getTime() - Date.now()) / 1000) < 60);
    assert.equal((await httpGet(svc.port, '/v1/ids/next')).status, 200, 'it still issues');
    const left = gauge((await httpGet(svc.port, '/metrics')).body);
    assert.ok(left > 190 * 86_400 && left < 31_536_000, String(left));
    const status = JSON.parse((await httpGet(svc.port, '/v1/status')).body) as {
      layout: { endOfLifeWarning: boolean };
    };
    assert.equal(status.layout.endOfLifeWarning, true);
  } finally {
    await svc.stop();
  }
  const calm = await startFlurry();
  try {
    assert.doesNotMatch(calm.stderr(), /end of life/);
    assert.ok(!calm.logs.some((l) => typeof l.msg === 'string' && /end of life/.test(l.msg)));
    assert.ok(gauge((await httpGet(calm.port, '/metrics')).body) > 31_536_000);
  } finally {
    await calm.stop();
  }
});
