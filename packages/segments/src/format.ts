/** Formatted serials (`ORD-{yyyyMMdd}-{seq:08}`): docs/segments.md ("Formatted serials"). */
import { sequenceError } from './errors.js';

/** When a serial's numbers restart. */
export type ResetPeriod = 'day' | 'month' | 'year' | 'never';

type Part = { kind: 'text'; text: string } | { kind: 'seq'; width: number } | { kind: 'date'; tokens: string[] };

/** A parsed serial format. */
export interface SerialFormat {
  readonly source: string;
  readonly reset: ResetPeriod;
  /** @internal */
  readonly parts: readonly Part[];
}

/** The calendar fields of an instant in a time zone. */
export type CalendarParts = Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>;

const TOKEN_RE = /yyyy|yy|MM|dd|HH|mm|ss|[-_./]/g;
/** An escaped brace, a placeholder, a brace alone, or text. */
const PART_RE = /\{\{|\}\}|\{([^}]*)\}|[{}]|[^{}]+/g;
/** The date fields a format must show for each reset period, and the key suffix of a period. */
const SHOWN_BY: Record<ResetPeriod, string[]> = {
  day: ['yyyy', 'MM', 'dd'],
  month: ['yyyy', 'MM'],
  year: ['yyyy'],
  never: [],
};

function formatError(source: string, why: string): Error {
  return sequenceError(
    'FORMAT',
    `the serial format ${JSON.stringify(source)} is not valid: ${why}. Placeholders: {seq} or {seq:0N} once, and date fields ` +
      `{yyyy} {yy} {MM} {dd} {HH} {mm} {ss} (run together like {yyyyMMdd} or {yyyy-MM-dd}); {{ and }} print braces`,
    { format: source },
  );
}

/** Parses and checks a format against its reset period (`{yyyyMM}` cannot reset daily); `FLURRY_E_SEQUENCE_FORMAT`. */
export function parseSerialFormat(source: string, reset: ResetPeriod): SerialFormat {
  if (typeof source !== 'string' || source.length === 0 || source.length > 200)
    throw formatError(String(source), 'a format is 1 to 200 characters');
  if (!['day', 'month', 'year', 'never'].includes(reset)) {
    const message = `reset must be one of day, month, year, never; got ${JSON.stringify(reset)}`;
    throw sequenceError('OPTION', message, { option: 'reset' });
  }
  const parts: Part[] = [];
  let text = '';
  let seqs = 0;
  const shown = new Set<string>();
  for (const { 0: token, 1: body, index } of source.matchAll(PART_RE)) {
    if (token === '}') throw formatError(source, `a lone "}" at position ${index + 1} (write }} for a brace)`);
    if (token === '{') throw formatError(source, `the "{" at position ${index + 1} is never closed`);
    if (body === undefined) {
      text += token === '{{' || token === '}}' ? token[0] : token;
      continue;
    }
    if (text) parts.push({ kind: 'text', text });
    text = '';
    const seq = /^seq(?::0([1-9]|[12][0-9]|30))?$/.exec(body);
    if (seq) {
      seqs++;
      parts.push({ kind: 'seq', width: seq[1] ? Number(seq[1]) : 0 });
      continue;
    }
    if (body.startsWith('seq'))
      throw formatError(source, `{${body}}: the sequence is {seq} or {seq:0N} with N from 1 to 30`);
    const tokens = body.match(TOKEN_RE) ?? [];
    if (!body || tokens.join('') !== body) throw formatError(source, `the placeholder {${body}} is unknown`);
    for (const t of tokens) shown.add(t === 'yy' ? 'yyyy' : t);
    parts.push({ kind: 'date', tokens });
  }
  if (text) parts.push({ kind: 'text', text });
  if (seqs !== 1) throw formatError(source, seqs === 0 ? 'it has no {seq}' : 'it has more than one {seq}');
  const missing = SHOWN_BY[reset].filter((t) => !shown.has(t));
  if (missing.length) {
    throw formatError(
      source,
      `it resets every ${reset} but does not show ${missing.map((m) => `{${m}}`).join(' ')}, so serials of different periods would repeat`,
    );
  }
  return { source, reset, parts };
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const TWO = '2-digit';
const PARTS = { hourCycle: 'h23', year: 'numeric', month: TWO, day: TWO, hour: TWO, minute: TWO, second: TWO } as const;

/** The formatter of an IANA time zone; `FLURRY_E_SEQUENCE_OPTION` for an unknown one. */
export function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone, ...PARTS });
    } catch {
      throw sequenceError(
        'OPTION',
        `the time zone ${JSON.stringify(timeZone)} is not an IANA time zone this Node.js knows (e.g. "UTC", "Europe/Paris", "Asia/Shanghai")`,
        { option: 'timeZone', value: String(timeZone) },
      );
    }
    formatters.set(timeZone, f);
  }
  return f;
}

/** The calendar fields of `unixMs` in `timeZone` (Intl.DateTimeFormat). */
export function periodOf(unixMs: number, timeZone: string): CalendarParts {
  const out: CalendarParts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const p of formatterFor(timeZone).formatToParts(unixMs)) {
    if (Object.hasOwn(out, p.type)) out[p.type as keyof CalendarParts] = Number(p.value);
  }
  return out;
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

const FIELDS: Record<string, (p: CalendarParts) => string> = {
  yyyy: (p) => pad(p.year, 4),
  yy: (p) => pad(p.year % 100, 2),
  MM: (p) => pad(p.month, 2),
  dd: (p) => pad(p.day, 2),
  HH: (p) => pad(p.hour, 2),
  mm: (p) => pad(p.minute, 2),
  ss: (p) => pad(p.second, 2),
};

/** `yyyyMMdd`, `yyyyMM`, `yyyy`, or '' for `never`. */
export function periodStamp(p: CalendarParts, reset: ResetPeriod): string {
  return SHOWN_BY[reset].map((t) => FIELDS[t](p)).join('');
}

/** Renders a serial: `T{yy}{MM}-{seq:04}` of March 2026 and 7 is `T2603-0007`. */
export function renderSerial(f: SerialFormat, p: CalendarParts, seq: bigint | number): string {
  let s = '';
  for (const part of f.parts) {
    if (part.kind === 'text') s += part.text;
    else if (part.kind === 'seq') s += String(seq).padStart(part.width, '0');
    else for (const t of part.tokens) s += Object.hasOwn(FIELDS, t) ? FIELDS[t](p) : t;
  }
  return s;
}
