// The tools: decode an ID or a UUIDv7, the IDs of a time range, the layout explorer, decode a public
// ID. Each calls a read-only route of this service; errors are the service's own.
import { getJson } from './api.js';
import { big, drawBar, dur, el, node, num, time } from './format.js';

function show(out, rows) {
  const dl = el('dl', undefined, 'kv');
  for (const [k, v] of rows) dl.append(el('dt', k), el('dd', v));
  out.replaceChildren(dl);
}

function fail(out, e) {
  out.replaceChildren(el('p', `${e.code}: ${e.message}`, 'error'));
}

function onSubmit(id, run) {
  const form = document.getElementById(id);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(form);
  });
}

/**
 * A UUIDv7 rather than a decimal ID: 22 characters or more (canonical 36, hex 32, base32 26)
 * and not all digits (a decimal ID has at most 20).
 */
function isUuidText(s) {
  return s.length >= 22 && !/^[0-9]+$/.test(s);
}

function showUuid(out, d) {
  show(out, [
    ['UUIDv7', d.uuid],
    ['Time', `${d.timestamp} (${d.unixMs})`],
    ['Node', `${num(d.node)} (${d.nodeBits} bits)`],
    ['Sequence', num(d.sequence)],
  ]);
  out.dataset.ok = 'true';
}

/** Wires every tool. */
export function setupTools() {
  onSubmit('decode', async () => {
    const out = document.getElementById('decode-out');
    const id = document.getElementById('decode-id').value.trim();
    try {
      if (isUuidText(id)) return showUuid(out, await getJson(`/v1/uuids/${encodeURIComponent(id)}`));
      const d = await getJson(`/v1/ids/${encodeURIComponent(id)}`);
      show(out, [
        ['ID', big(d.id)],
        ['Time', `${d.timestamp} (${d.unixMs})`],
        ['Node', node(d.fields)],
        ['Sequence', num(d.sequence)],
      ]);
      out.dataset.ok = 'true';
    } catch (e) {
      fail(out, e);
    }
  });

  const range = document.getElementById('range-from');
  if (!range.value) {
    const h = new Date();
    h.setUTCMinutes(0, 0, 0);
    range.value = h.toISOString();
    document.getElementById('range-to').value = new Date(h.getTime() + 3_600_000).toISOString();
  }
  onSubmit('range', async () => {
    const out = document.getElementById('range-out');
    const from = document.getElementById('range-from').value.trim();
    const to = document.getElementById('range-to').value.trim();
    try {
      const r = await getJson(`/v1/ids/range?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
      show(out, [
        ['From', r.from],
        ['To (excluded)', r.to],
        ['First ID', big(r.min)],
        ['Last ID', r.maxInclusive === null ? 'none (empty range)' : big(r.maxInclusive)],
        ['SQL', `id >= ${r.min} AND id < ${r.maxExclusive}`],
      ]);
    } catch (e) {
      fail(out, e);
    }
  });

  setupExplorer();

  onSubmit('public', async () => {
    const out = document.getElementById('public-out');
    const pid = document.getElementById('public-id').value.trim();
    try {
      const d = await getJson(`/v1/public-ids/${encodeURIComponent(pid)}`);
      const rows = [['ID', big(d.id)]];
      if (d.timestamp) rows.push(['Time', d.timestamp]);
      if (d.fields) rows.push(['Node', node(d.fields)]);
      if (d.sequence !== undefined) rows.push(['Sequence', num(d.sequence)]);
      show(out, rows);
    } catch (e) {
      fail(out, e);
    }
  });
}

const START = [
  ['timestamp', 41],
  ['datacenter', 5],
  ['worker', 5],
  ['sequence', 12],
];

let rows = 0; // ids stay unique when rows are removed and added

function fieldRow(container, name, bits) {
  const i = rows++;
  const row = el('div', undefined, 'field-row');
  const nl = el('label', `Field ${i + 1} name`);
  const n = el('input');
  n.id = `xf-name-${i}`;
  n.value = name;
  n.autocomplete = 'off';
  nl.htmlFor = n.id;
  const bl = el('label', 'bits');
  const b = el('input');
  b.id = `xf-bits-${i}`;
  b.type = 'number';
  b.min = '1';
  b.max = '64';
  b.value = String(bits);
  bl.htmlFor = b.id;
  const rm = el('button', 'Remove', 'secondary');
  rm.type = 'button';
  rm.setAttribute('aria-label', `Remove field ${i + 1}`);
  rm.addEventListener('click', () => {
    // Keep the focus in the form: on the next row's name, else on "Add a field".
    const next = row.nextElementSibling?.querySelector('input') ?? document.getElementById('explorer-add');
    row.remove();
    next.focus();
  });
  const nd = el('div');
  nd.append(nl, n);
  const bd = el('div');
  bd.append(bl, b);
  row.append(nd, bd, rm);
  container.append(row);
}

function setupExplorer() {
  const box = document.getElementById('explorer-fields');
  for (const [n, b] of START) fieldRow(box, n, b);
  document.getElementById('explorer-add').addEventListener('click', () => fieldRow(box, 'worker', 5));
  onSubmit('explorer', async () => {
    const out = document.getElementById('explorer-out');
    const bar = document.getElementById('explorer-bar');
    const fields = [...box.querySelectorAll('.field-row')]
      .map((r) => {
        const [n, b] = r.querySelectorAll('input');
        return `${n.value.trim()}:${b.value.trim()}`;
      })
      .join(',');
    const q = new URLSearchParams({ fields });
    const epoch = document.getElementById('explorer-epoch').value.trim();
    if (epoch) q.set('epoch', epoch);
    q.set('unit', document.getElementById('explorer-unit').value);
    try {
      const d = await getJson(`/v1/layouts/explain?${q}`);
      drawBar(bar, d.fields, d.totalBits);
      const eol = Date.parse(d.expiresAt);
      show(out, [
        ['Bits', `${d.totalBits} of 64`],
        ['Epoch', d.epoch],
        ['End of life', `${time(eol)} (in ${dur(eol - Date.now())})`],
        ['Nodes', num(d.nodeCount)],
        ['IDs per second per node', num(d.maxIdsPerSecondPerNode)],
        ['Largest ID', big(d.maxId)],
        ['Safe in a JS number', d.safeInteger ? 'yes' : 'no'],
      ]);
      out.dataset.state = 'ok';
    } catch (e) {
      bar.replaceChildren();
      fail(out, e);
      out.dataset.state = 'refused';
    }
  });
}
