// The run's table (printed) and its JSON (torture-report-<profile>.json at the repo root).
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from './util.mjs';

/**
 * One row of the report. Scenarios fill it and call `fail(reason)` for every broken
 * **safety** promise (a duplicate, a decreasing ID, an overlap of two holders of one node
 * ID, an ID past a fencing deadline or the borrow bound, a crash): a safety failure is
 * final. A **liveness** expectation (how long a stall, how soon a takeover, that a process
 * issued at all) is judged with `within(what, measured, bound)` or `liveness(reason)`:
 * the bound comes from the scenario's own settings and is printed beside the measurement;
 * a row that misses only liveness is run once more (scripts/torture.mjs) and passes if the
 * second attempt does. A row passes when it has neither.
 * @example const row = new Row('fleet', 'redis'); row.within('takeover', 2100, 6700); row.pass; // true
 */
export class Row {
  constructor(scenario, backend) {
    this.scenario = scenario;
    this.backend = backend;
    this.processes = 0;
    this.idsChecked = 0;
    this.duplicates = 0;
    this.decreasing = 0;
    this.refusals = {};
    this.maxStallMs = 0;
    this.failures = [];
    this.livenessMisses = [];
    this.checks = [];
    this.attempts = [];
    this.notes = [];
    this.details = {};
    this.durationMs = 0;
    this.done = false;
    this.cutShort = null;
  }
  /** The scenario finished this row: every check it makes has been made. */
  finish() {
    this.done = true;
  }
  /**
   * The row did not run to completion (its scenario hit its time limit): its IDs were not
   * all checked, so it can neither pass nor be re-run (the cut-off body may still be running).
   */
  cut(reason) {
    this.cutShort = reason;
  }
  /** A broken safety promise: final, never retried. */
  fail(reason) {
    this.failures.push(reason);
  }
  /** A missed liveness expectation (retried once by the runner). */
  liveness(reason) {
    this.livenessMisses.push(reason);
  }
  /**
   * A liveness measurement against its bound (both in ms unless `unit` says otherwise),
   * recorded for the report; a measurement outside `[min, bound]` is a liveness miss.
   * `how` says where the bound comes from (printed beside it).
   */
  within(what, measured, bound, { min = -Infinity, how = '', unit = 'ms' } = {}) {
    const ok = Number.isFinite(measured) && measured <= bound && measured >= min;
    const range = Number.isFinite(min) ? `${Math.round(min)}–${Math.round(bound)}` : `≤ ${Math.round(bound)}`;
    const text = `${what}: ${Number.isFinite(measured) ? Math.round(measured) : 'never'} ${unit} (bound ${range} ${unit}${how ? `: ${how}` : ''})`;
    this.checks.push({ what, measured, bound, min: Number.isFinite(min) ? min : null, unit, how, ok });
    if (ok) this.note(text);
    else this.liveness(text);
    return ok;
  }
  note(text) {
    this.notes.push(text);
  }
  refuse(code, n = 1) {
    if (!n) return;
    this.refusals[code] = (this.refusals[code] ?? 0) + n;
  }
  addRefusals(map) {
    for (const [k, v] of Object.entries(map ?? {})) this.refuse(k, v);
  }
  stall(ms) {
    if (Number.isFinite(ms) && ms > this.maxStallMs) this.maxStallMs = ms;
  }
  /** No safety failure. */
  get safe() {
    return this.failures.length === 0;
  }
  get pass() {
    return this.failures.length === 0 && this.livenessMisses.length === 0 && this.cutShort === null;
  }
  toJSON() {
    return {
      scenario: this.scenario,
      backend: this.backend,
      processes: this.processes,
      idsChecked: this.idsChecked,
      duplicates: this.duplicates,
      decreasing: this.decreasing,
      refusals: this.refusals,
      maxStallMs: Math.round(this.maxStallMs * 10) / 10,
      pass: this.pass,
      notRun: this.cutShort,
      failures: this.failures,
      livenessMisses: this.livenessMisses,
      livenessChecks: this.checks,
      attempts: this.attempts,
      notes: this.notes,
      durationMs: Math.round(this.durationMs),
      details: this.details,
    };
  }
}

const fmtInt = (n) => n.toLocaleString('en-US');
const shortCode = (c) => c.replace(/^FLURRY_E_/, '');

function refusalText(map) {
  const e = Object.entries(map).filter(([, v]) => v > 0);
  if (!e.length) return '–';
  return e.map(([k, v]) => `${shortCode(k)} ${fmtInt(v)}`).join(', ');
}

/** 'pass', 'FAIL', or with a re-run: 'pass (2nd try)' / 'FAIL (2 tries)'. */
function resultText(j) {
  const retried = (j.attempts?.length ?? 0) > 0;
  if (j.notRun) return 'NOT RUN (cut short)';
  if (j.pass) return retried ? 'pass (2nd try)' : 'pass';
  if (!retried) return (j.failures?.length ?? 0) ? 'FAIL' : 'FAIL (liveness)';
  return 'FAIL (2 tries)';
}

/**
 * Rows as plain cells (for the console and for docs/reliability.md).
 * @example const { head, body } = cells(rows);
 */
export function cells(rows) {
  const head = [
    'scenario',
    'backend',
    'processes',
    'IDs checked',
    'duplicates',
    'decreasing',
    'refusals by code',
    'longest stall',
    'result',
  ];
  const body = rows.map((r) => {
    const j = typeof r.toJSON === 'function' ? r.toJSON() : r;
    return [
      j.scenario,
      j.backend,
      String(j.processes),
      fmtInt(j.idsChecked),
      fmtInt(j.duplicates),
      fmtInt(j.decreasing),
      refusalText(j.refusals),
      `${fmtInt(Math.round(j.maxStallMs))} ms`,
      resultText(j),
    ];
  });
  return { head, body };
}

/**
 * A plain-text table for the console.
 * @example console.log(textTable(rows));
 */
export function textTable(rows) {
  const { head, body } = cells(rows);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i >= 2 && i <= 5 ? c.padStart(w[i]) : c.padEnd(w[i]))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

/**
 * A Markdown table (for docs/reliability.md).
 * @example writeFileSync('table.md', markdownTable(rows));
 */
export function markdownTable(rows) {
  const { head, body } = cells(rows);
  const esc = (c) => c.replace(/\|/g, '\\|');
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i >= 2 && i <= 5 ? '---:' : '---')).join('|')}|`,
    ...body.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

/**
 * Writes the JSON report and returns its path.
 * @example const { file } = writeJson('short', rows, { startedAt, durationMs });
 */
export function writeJson(profile, rows, meta) {
  const file = path.join(root, `torture-report-${profile}.json`);
  const doc = {
    profile,
    startedAt: meta.startedAt,
    durationMs: Math.round(meta.durationMs),
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? '',
    },
    pass: rows.every((r) => r.pass),
    rows: rows.map((r) => r.toJSON()),
  };
  writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  return { file, doc };
}

/**
 * Rewrites the "latest full run" section of docs/reliability.md (between the
 * `<!-- torture:full:start -->` and `<!-- torture:full:end -->` markers) from a report.
 * @example writeDocsSection(JSON.parse(readFileSync('torture-report-full.json', 'utf8')));
 */
export function writeDocsSection(doc, docsFile = path.join(root, 'docs', 'reliability.md')) {
  let text;
  try {
    text = readFileSync(docsFile, 'utf8');
  } catch {
    return false;
  }
  const start = '<!-- torture:full:start -->';
  const end = '<!-- torture:full:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return false;
  const rows = doc.rows;
  const failed = rows.filter((r) => !r.pass);
  const body = [
    '',
    `Run of ${doc.startedAt.slice(0, 16).replace('T', ' ')} UTC, \`npm run torture\` (profile \`${doc.profile}\`), ${(doc.durationMs / 60_000).toFixed(1)} minutes on ${doc.machine.cpus} × ${doc.machine.cpuModel.trim()} (Node ${doc.machine.node}, ${doc.machine.platform}), a machine shared with other work: ${rows.reduce((s, r) => s + r.idsChecked, 0).toLocaleString('en-US')} IDs checked, ${failed.length ? `**${failed.length} row(s) failed**` : 'every row passed'}.`,
    '',
    markdownTable(rows),
    '',
    ...(failed.length
      ? [
          'Failures:',
          '',
          ...failed.flatMap((r) =>
            [...r.failures, ...(r.livenessMisses ?? [])]
              .slice(0, 3)
              .map((f) => `- ${r.scenario} / ${r.backend}: ${f.replace(/\|/g, '\\|').slice(0, 400)}`),
          ),
          '',
        ]
      : []),
  ].join('\n');
  writeFileSync(docsFile, text.slice(0, a + start.length) + '\n' + body + '\n' + text.slice(b));
  return true;
}
