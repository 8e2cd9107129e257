// Rendering /v1/status and /v1/cluster frames into the page (textContent only).
import { big, drawBar, dur, el, iso, node, num, offset, text, time } from './format.js';

let layoutKey = '';
let lease = null;
let skew = 0; // this browser's clock minus the service's

/** This node: layout, lease, generator, refusals, routes, sequences. */
export function renderStatus(s, chart) {
  skew = Date.now() - s.now;
  text('who', `${s.host} · pid ${s.pid} · v${s.version} · up ${dur(s.uptimeMs)}`);
  const L = s.layout;
  const key = JSON.stringify(L);
  if (key !== layoutKey) {
    layoutKey = key;
    text('layout-name', `${L.name}, ${L.totalBits} bits`);
    drawBar(document.getElementById('layout-bar'), L.fields, L.totalBits);
    text('layout-epoch', iso(L.epochMs));
    text('layout-unit', `${L.unitMs} ms`);
  }
  text('layout-eol', `${time(L.endOfLifeMs)} (in ${dur(L.endOfLifeMs - s.now)})`);
  // Within a year of the end of life (docs/operations.md): the warning colour, and say so.
  const eol = document.getElementById('layout-eol');
  eol.className = L.endOfLifeWarning ? 'warn' : '';
  eol.title = L.endOfLifeWarning ? 'less than a year left: plan a move to a new layout' : '';
  lease = s.lease;
  text('node-held', lease ? node(lease.node) : 'none (no lease)');
  if (lease) {
    text('lease-registry', `${lease.registry} (${lease.kind})`);
    text('lease-cluster', lease.cluster);
    text('lease-slot', String(lease.slot));
    text('lease-renewals', `${num(lease.renewals)} every ${dur(lease.renewIntervalMs)}, TTL ${dur(lease.ttlMs)}`);
    text(
      'lease-latency',
      lease.lastRenewalAt === null
        ? 'none yet'
        : `${time(lease.lastRenewalAt)}, took ${num(lease.lastRenewalLatencyMs)} ms`,
    );
    text('lease-fenced', lease.fenced ? 'yes: the node issues nothing until the lease is renewed' : 'no');
    document.getElementById('lease-fenced').className = lease.fenced ? 'error' : '';
  } else {
    for (const id of [
      'lease-registry',
      'lease-cluster',
      'lease-slot',
      'lease-renewals',
      'lease-latency',
      'lease-fenced',
    ])
      text(id, '–');
  }
  tickDeadline();

  const g = s.generator;
  text('rate-now', num(Math.round(g.idsPerSecond)));
  text('gen-issued', big(g.issued));
  text('gen-exhaustions', num(g.exhaustions));
  text('gen-borrow', `${num(g.borrowMs)} ms`);
  text('gen-backwards', num(g.clockBackwards));
  chart.push(s.now, g.idsPerSecond);

  const refusals = Object.entries(s.refusals ?? {}).sort((a, b) => b[1] - a[1]);
  fill(
    'refusals',
    refusals.length ? refusals.map(([code, n]) => [el('td', code), el('td', num(n), 'num')]) : [[none(2)]],
  );
  // HTTP routes, then the gRPC / gRPC-Web / Connect methods and memcached commands.
  const routeRow = (protocol, name, r) => [
    el('td', protocol),
    el('td', r.errors ? `${name} (${num(r.errors)} failed)` : name),
    el('td', num(r.requests), 'num'),
    el('td', num(Math.round(r.perSecond * 10) / 10), 'num'),
    el('td', r.p99Ms === null ? '–' : `${r.p99Ms.toFixed(2)} ms`, 'num'),
  ];
  fill('routes', [
    ...(s.routes ?? []).filter((r) => r.requests > 0).map((r) => routeRow('http', r.name, r)),
    ...(s.protocols ?? []).map((p) => routeRow(p.protocol, p.command, p)),
  ]);
  renderWorkers(s.workers, s.now);
  renderSequences(s.sequences);
  // Decoding a public ID needs the service's key and token (GET /v1/public-ids/{id}).
  document.getElementById('public').hidden = !s.publicIds?.decode;
}

/** `flurry serve --workers N`: one row per worker process. */
function renderWorkers(workers, now) {
  const on = Array.isArray(workers) && workers.length > 0;
  document.getElementById('workers').hidden = !on;
  document.getElementById('nav-workers').hidden = !on;
  if (!on) return;
  fill(
    'worker-rows',
    workers.map((w) => [
      el('td', String(w.slot), 'num'),
      el('td', String(w.pid), 'num'),
      el('td', w.node ? node(w.node) : '–'),
      el('td', w.state, w.ready ? '' : 'error'),
      el(
        'td',
        !w.lease
          ? '–'
          : w.lease.deadlineMs === null
            ? 'never'
            : `in ${dur(Math.max(0, w.lease.deadlineMs - now))}${w.lease.fenced ? ' (fenced)' : ''}`,
      ),
      el('td', num(Math.round(w.idsPerSecond)), 'num'),
      el('td', big(w.issued), 'num'),
      el('td', num(w.restarts), 'num'),
    ]),
  );
}

function renderSequences(seqs) {
  const on = Array.isArray(seqs);
  document.getElementById('sequences').hidden = !on;
  document.getElementById('nav-seq').hidden = !on;
  if (!on) return;
  // `to` is exclusive: show the last number the segment holds.
  const seg = (x) => (x ? `${big(x.from)} – ${big(String(BigInt(x.to) - 1n))}` : '–');
  fill(
    'seq-rows',
    seqs.map((q) => [
      el('td', q.key),
      el('td', seg(q.current)),
      el('td', seg(q.next)),
      el('td', big(q.position)),
      el('td', num(q.step), 'num'),
      el(
        'td',
        q.lastFetchAt === null ? '–' : `${time(q.lastFetchAt)} (${num(Math.round(q.lastFetchMs * 10) / 10)} ms)`,
      ),
    ]),
  );
}

/** The lease's deadline, counted down between frames. */
export function tickDeadline() {
  if (!lease) return;
  if (lease.deadlineMs === null) {
    text('lease-deadline', 'never (static node ID)');
    return;
  }
  const left = lease.deadlineMs - (Date.now() - skew);
  text('lease-deadline', left > 0 ? dur(left) : `passed ${dur(-left)} ago`);
}

/** The cluster table: one row per holder; stale rows marked, gone rows removed. */
export function renderCluster(c) {
  text('cluster-name', `${c.cluster} on ${c.registry}`);
  text(
    'cluster-note',
    `${c.holders.length} holder${c.holders.length === 1 ? '' : 's'}; a holder is stale after ${dur(c.renewIntervalMs)} without renewal (plus slack) and gone after its TTL of ${dur(c.ttlMs)}.`,
  );
  const tbody = document.getElementById('holders');
  tbody.replaceChildren(
    ...c.holders.map((h) => {
      const tr = document.createElement('tr');
      tr.dataset.slot = String(h.slot);
      tr.dataset.state = h.state;
      if (h.state === 'stale') tr.classList.add('stale');
      if (h.state === 'reserved') {
        tr.classList.add('reserved');
        tr.title = `Reserved for in-database generation (flurry sql --generate) by ${h.hostname ?? '?'} pid ${h.pid ?? '?'} since ${time(h.heldSinceMs)}; held until released (flurry sql --release), never renewed.`;
      }
      if (h.self) tr.classList.add('self');
      tr.append(
        el('td', h.node ? node(h.node) : `slot ${h.slot}`),
        el('td', h.hostname ?? '–'),
        el('td', h.pid ?? '–'),
        el('td', h.version ?? '–'),
        el('td', time(h.heldSinceMs)),
        el(
          'td',
          h.state === 'reserved'
            ? 'never (reserved)'
            : h.renewedAtMs === null
              ? '–'
              : `${dur(c.now - h.renewedAtMs)} ago`,
        ),
        el('td', time(h.highWaterMs)),
        el('td', offset(h.clockOffsetMs), 'num'),
        el(
          'td',
          h.state === 'stale' ? 'STALE' : h.state === 'reserved' ? `reserved (${h.role ?? 'sql generator'})` : 'live',
          'state',
        ),
      );
      return tr;
    }),
  );
}

/** Shows why the cluster cannot be read; the rows shown are no longer known to be live. */
export function renderClusterError(e) {
  text('cluster-note', `The registry cannot be read: ${e.code}: ${e.message}`);
  for (const tr of document.querySelectorAll('#holders tr')) {
    tr.dataset.state = 'unknown';
    tr.classList.add('unknown');
    const cell = tr.querySelector('td.state');
    if (cell) cell.textContent = 'unknown';
  }
}

/** A 'none' cell across `cols` columns. */
function none(cols) {
  const td = el('td', 'none', 'muted');
  td.colSpan = cols;
  return td;
}

function fill(id, rows) {
  const tbody = document.getElementById(id);
  tbody.replaceChildren(
    ...rows.map((cells) => {
      const tr = document.createElement('tr');
      tr.append(...cells);
      return tr;
    }),
  );
}
