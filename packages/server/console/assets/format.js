// Formatting for the page: numbers, times, durations. Every value is shown with textContent.

const nf = new Intl.NumberFormat('en');

/** 1234567 → '1,234,567'; null → '–'. */
export function num(n) {
  return n === null || n === undefined ? '–' : nf.format(n);
}

/** A decimal string (64-bit) grouped in thousands. */
export function big(s) {
  return s === null || s === undefined ? '–' : String(s).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Unix ms → '2026-11-25 06:10:47Z'. */
export function time(ms) {
  if (ms === null || ms === undefined) return '–';
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Unix ms → ISO 8601 with milliseconds. */
export function iso(ms) {
  return ms === null || ms === undefined ? '–' : new Date(ms).toISOString();
}

/** A duration in ms → '850 ms', '12.3 s', '4 min 2 s', '3 h 5 min', '52 years'. */
export function dur(ms) {
  if (ms === null || ms === undefined) return '–';
  const a = Math.abs(ms);
  const sign = ms < 0 ? '−' : '';
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(1)} s`;
  if (a < 3_600_000) return `${sign}${Math.floor(a / 60_000)} min ${Math.floor((a % 60_000) / 1000)} s`;
  if (a < 86_400_000) return `${sign}${Math.floor(a / 3_600_000)} h ${Math.floor((a % 3_600_000) / 60_000)} min`;
  if (a < 2 * 365.25 * 86_400_000) return `${sign}${Math.floor(a / 86_400_000)} days`;
  return `${sign}${(a / (365.25 * 86_400_000)).toFixed(1)} years`;
}

/** Milliseconds with a sign, for clock offsets: '+3 ms', '−120 ms'. */
export function offset(ms) {
  if (ms === null || ms === undefined) return '–';
  return `${ms > 0 ? '+' : ms < 0 ? '−' : '±'}${num(Math.abs(Math.round(ms)))} ms`;
}

/** { datacenter: 1, worker: 3 } → 'datacenter 1 · worker 3'. */
export function node(n) {
  if (!n) return '–';
  const parts = Object.entries(n).map(([k, v]) => `${k} ${v}`);
  return parts.length ? parts.join(' · ') : '–';
}

/** Sets an element's text by id. */
export function text(id, value) {
  const el = document.getElementById(id);
  if (el && el.textContent !== value) el.textContent = value;
}

/** A new element with text and optional class. */
export function el(tag, value, cls) {
  const e = document.createElement(tag);
  if (value !== undefined && value !== null) e.textContent = String(value);
  if (cls) e.className = cls;
  return e;
}

/** Draws a layout's fields as a bar: one span per field, flex-grow = its bits. */
export function drawBar(bar, fields, totalBits) {
  bar.replaceChildren();
  for (const f of fields) {
    const s = el('span');
    s.style.flexGrow = String(f.bits);
    s.title = `${f.name}: ${f.bits} bits, shift ${f.shift ?? ''}`;
    s.append(el('b', f.name), el('span', `${f.bits}`));
    bar.append(s);
  }
  const unused = 64 - totalBits;
  if (unused > 0) {
    const s = el('span', undefined, 'unused');
    s.style.flexGrow = String(unused);
    s.title = `${unused} unused bit${unused === 1 ? '' : 's'} (sign)`;
    s.append(el('b', 'unused'), el('span', `${unused}`));
    bar.append(s);
  }
  bar.setAttribute(
    'aria-label',
    `${totalBits} bits: ` +
      fields.map((f) => `${f.name} ${f.bits}`).join(', ') +
      (unused > 0 ? `, ${unused} unused` : ''),
  );
}
