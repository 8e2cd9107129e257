/** `flurry status`: the cluster table in a terminal, from the registry or `--url` (see {@link STATUS_HELP}). */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { systemClock } from '@flurry/core';
import { openRegistry, redactUrl } from '@flurry/coordination';
import { loadServeConfig, registryOptionsOf } from '../../config/index.js';
import { ClusterCache } from '../../console/cluster.js';
import type { ClusterBody, ClusterEntry } from '../../console/types.js';
import { serverError } from '../../errors.js';
import {
  flagsOf,
  allStrings,
  hasFlag,
  lastString,
  noArguments,
  type FlagSpecs,
  type ParsedCommandLine,
} from '../args.js';
import { command, LAYOUT_FLAGS, onSignals, write, type CliIo } from '../io.js';
import type { WorkerEntry } from '../../workers/types.js';

/** The `flurry serve` settings that pick the registry, the namespace and the staleness rule: passed on to it. */
const SETTING_FLAGS = [...Object.keys(LAYOUT_FLAGS), 'registry', 'cluster', 'node', 'lease-ttl-ms', 'lease-renew-ms'];

const FLAGS: FlagSpecs = {
  ...flagsOf('string', ...SETTING_FLAGS, 'url', 'token', 'ca'),
  watch: { type: 'boolean', short: 'w' },
  'interval-ms': { type: 'string' },
  json: { type: 'boolean' },
};

export const STATUS_HELP = `Usage: flurry status [--registry URL] [--cluster NAME] [layout] [--node FIELD=V,...]
       flurry status --url http[s]://HOST:PORT [--token TOKEN] [--ca FILE]
       [--watch] [--interval-ms N] [--json]

Prints every live holder of a node ID in the cluster: node, host, pid, version, held since,
time since its last renewal, high-water mark, clock offset from this machine, and live or
stale (not renewed for longer than the renewal interval plus a slack), or reserved (sql
generator): a node reserved for in-database generation by flurry sql --generate, held until
released (flurry sql --release) and never renewed. An expired holder is not listed.

  --registry URL      The registry (default $FLURRY_REGISTRY or file:), as for flurry serve.
  --cluster NAME      The cluster (default $FLURRY_CLUSTER or default).
  --layout, --fields, --epoch, --unit, --node
                      The layout and pinned node fields, as for flurry serve: they pick the
                      namespace (e.g. orders/datacenter-1) and name each slot's node fields.
  --lease-renew-ms N  The cluster's renewal interval, for the staleness rule (default TTL/3).
  --url URL           Read GET /v1/cluster from a running service instead of the registry
                      (token from --token or $FLURRY_TOKEN).
  --ca FILE           With an https:// URL: also trust the CA certificate(s) in this PEM file
                      (the service's own certificate, if self-signed); NODE_EXTRA_CA_CERTS works too.
  --watch, -w         Redraw until Ctrl-C.
  --interval-ms N     Redraw period, 100 to 600000 (default 1000).
  --json              Print the /v1/cluster JSON body (one line per redraw).
`;

type WithWorkers = ClusterBody & { workers?: WorkerEntry[] };
type Source = { read(): Promise<WithWorkers>; close?(): Promise<void> };

function intervalOf(args: ParsedCommandLine): number {
  const raw = lastString(args, 'interval-ms');
  if (raw === undefined) return 1000;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 100 || n > 600_000)
    throw serverError('USAGE', `--interval-ms must be an integer from 100 to 600000 (ms); got "${raw.slice(0, 40)}"`, {
      flag: 'interval-ms',
    });
  return n;
}

async function registrySource(args: ParsedCommandLine, io: CliIo): Promise<Source> {
  const config = loadServeConfig(
    SETTING_FLAGS.flatMap((f) => allStrings(args, f).flatMap((v) => [`--${f}`, v])),
    io.env,
  );
  const registry = await openRegistry(config.registry, registryOptionsOf(config));
  const cache = new ClusterCache({
    core: { registry },
    config,
    clock: systemClock,
    cacheMs: 0,
    query: { layout: config.layout, pin: { ...config.node } },
    self: () => undefined,
  });
  return { read: () => cache.body(), close: () => registry.close() };
}

/** The CAs an https:// `--url` is checked against with `--ca FILE`: the system's and FILE's (undefined: Node's default). */
function trustedCas(file: string | undefined, url: URL): string[] | undefined {
  if (file === undefined) return undefined;
  if (url.protocol !== 'https:')
    throw serverError('USAGE', `--ca applies to an https:// --url only; got ${url.protocol}//`, { flag: 'ca' });
  const what = `give the PEM file of the CA that signed the service's certificate (its own certificate if self-signed)`;
  const refuse = (why: string): Error =>
    serverError('CONFIG', `--ca ${file.slice(0, 200)} cannot be used (${why}); ${what}`, { flag: 'ca' });
  let pem: string | undefined;
  try {
    pem = readFileSync(file, 'utf8');
    new X509Certificate(pem);
  } catch (e) {
    throw refuse(pem === undefined ? (e as Error).message : 'it holds no PEM certificate');
  }
  return [...tls.rootCertificates, pem];
}

/** GET `url` (`ca`: the trusted CAs), at most 5 s: the status and body, or {@link unreachable}'s error. */
function get(url: URL, token: string | undefined, ca: string[] | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const fail = (e: unknown): void => reject(unreachable(e, redactUrl(url.origin)));
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    const options: https.RequestOptions = { headers, agent: false, timeout: 5000, ca };
    const req = (url.protocol === 'https:' ? https : http).get(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', fail);
  });
}

/** The coded error of a request that got no answer: an untrusted certificate, or no service there. */
function unreachable(e: unknown, shown: string): Error {
  const code = String((e as NodeJS.ErrnoException).code ?? '');
  if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/.test(code))
    return serverError(
      'TLS_UNTRUSTED',
      `the service at ${shown} presented a certificate this machine does not trust (${code}: ${(e as Error).message}); ` +
        `pass the CA that signed it with --ca FILE (or NODE_EXTRA_CA_CERTS=FILE), and use a host name the certificate names`,
      { tlsError: code },
    );
  return serverError(
    'UNAVAILABLE',
    `the service at ${shown} could not be reached (${(e as Error).message}); check --url (https:// when it runs with --tls-cert) and that it runs`,
  );
}

function urlSource(base: string, token: string | undefined, caFile: string | undefined): Source {
  const url = URL.canParse('/v1/cluster', base) ? new URL('/v1/cluster', base) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    const got = redactUrl(base).slice(0, 80);
    throw serverError('USAGE', `--url must be the service's base URL, e.g. http://127.0.0.1:8080; got "${got}"`, {
      flag: 'url',
    });
  }
  const ca = trustedCas(caFile, url);
  const shown = redactUrl(url.origin);
  return {
    read: async () => {
      const res = await get(url, token, ca);
      if (res.status !== 200) {
        let detail = `HTTP ${res.status}`;
        try {
          const err = (JSON.parse(res.text) as { error?: { code?: string; message?: string } }).error;
          if (err?.code) detail = `${err.code}: ${err.message ?? ''}`;
        } catch {
          /* not JSON */
        }
        const code = res.status === 401 ? 'UNAUTHORIZED' : 'UNAVAILABLE';
        throw serverError(code, `${shown}/v1/cluster answered ${detail}`, { status: res.status });
      }
      const body = JSON.parse(res.text) as WithWorkers;
      // The worker processes behind this URL (best effort; /v1/status may need the token).
      const status = await get(new URL('/v1/status', base), token, ca).then(
        (r) => (r.status === 200 ? (JSON.parse(r.text) as WithWorkers) : undefined),
        () => undefined,
      );
      if (status?.workers) body.workers = status.workers;
      return body;
    },
  };
}

export const statusCommand = command(FLAGS, STATUS_HELP, async (args, io) => {
  noArguments(args, 'status');
  const intervalMs = intervalOf(args);
  const base = lastString(args, 'url');
  if (base === undefined && hasFlag(args, 'ca')) throw serverError('USAGE', '--ca applies to --url only');
  if (base !== undefined && hasFlag(args, 'registry'))
    throw serverError('USAGE', 'give either --url (a running service) or --registry (the registry itself), not both');
  const json = hasFlag(args, 'json');
  const source =
    base !== undefined
      ? urlSource(base, lastString(args, 'token') ?? io.env.FLURRY_TOKEN, lastString(args, 'ca'))
      : await registrySource(args, io);
  const render = (body: WithWorkers): string =>
    json ? JSON.stringify(body) + '\n' : clusterTable(body) + workersTable(body.workers);
  const watch = hasFlag(args, 'watch');
  const stopped = new AbortController();
  const offSignals = watch ? onSignals(() => stopped.abort()) : undefined;
  const tty = (io.stdout as { isTTY?: boolean }).isTTY === true && !json;
  try {
    if (!watch) return await write(io.stdout, render(await source.read()));
    while (!stopped.signal.aborted) {
      let frame: string;
      try {
        frame = render(await source.read());
      } catch (e) {
        const err = e as { code?: string; message?: string };
        frame = `flurry: ${err.code ?? 'FLURRY_E_INTERNAL'}: ${err.message ?? String(e)}\n`;
      }
      await write(io.stdout, (tty ? '\x1b[H\x1b[2J' : '') + frame + (tty || json ? '' : '\n'));
      await sleep(intervalMs, undefined, { signal: stopped.signal }).catch(() => undefined);
    }
  } finally {
    offSignals?.();
    await source.close?.();
  }
});

/** `field=value,…` of a node, or `none` when it has no fields (or there is no node). */
const nodeText = (node: Readonly<Record<string, number>> | null, none: string): string =>
  Object.entries(node ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || none;

/** A duration for humans: `850ms`, `4.2s`, `3m05s`, `2h04m`, `3d04h`. */
export function humanMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${two(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor(s / 3600) % 24)}h`;
}

const iso = (ms: number | null): string => (ms === null || ms <= 0 ? '-' : new Date(ms).toISOString());

function offsetText(h: ClusterEntry): string {
  if (h.clockOffsetMs === null) return '-';
  const sign = h.clockOffsetMs >= 0 ? '+' : '-';
  const err = h.clockOffsetErrorMs === null ? '' : ` ±${h.clockOffsetErrorMs}`;
  return `${sign}${Math.abs(Math.round(h.clockOffsetMs))} ms${err}`;
}

/** One row per holder under a header naming the cluster and the registry; `*` marks this process's own holder. */
export function clusterTable(body: ClusterBody): string {
  const head = `cluster ${body.cluster} on ${body.registry} (ttl ${body.ttlMs} ms, renew ${body.renewIntervalMs} ms), ${body.holders.length} holder${body.holders.length === 1 ? '' : 's'} at ${new Date(body.now).toISOString()}\n`;
  if (body.holders.length === 0) return `${head}(no live holders)\n`;
  const rows = [
    ['NODE', 'HOST', 'PID', 'VERSION', 'HELD SINCE', 'RENEWED', 'HIGH-WATER', 'CLOCK OFFSET', 'STATE'],
    ...body.holders.map((h) => [
      nodeText(h.node, `slot ${h.slot}`),
      h.hostname ?? '?',
      h.pid === null ? '?' : String(h.pid),
      h.version ?? '?',
      iso(h.heldSinceMs),
      h.state === 'reserved' || h.ageMs === null ? '-' : `${humanMs(h.ageMs)} ago`,
      iso(h.highWaterMs),
      offsetText(h),
      (h.state === 'reserved' ? `reserved (${h.role ?? 'sql generator'})` : h.state) + (h.self ? ' *' : ''),
    ]),
  ];
  const note = body.holders.some((h) => h.state === 'reserved')
    ? 'reserved: a node reserved for in-database generation (flurry sql --generate) by the host and pid shown, since HELD SINCE; held until released (flurry sql --release), never renewed\n'
    : '';
  return head + note + alignedRows(rows);
}

/** `rows` as lines of columns two spaces apart, each padded to its widest cell. */
function alignedRows(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]): string =>
    r
      .map((cell, c) => cell.padEnd(widths[c]))
      .join('  ')
      .trimEnd() + '\n';
  return rows.map(line).join('');
}

/** One row per worker process of a service run with `--workers N` ('' for none). */
function workersTable(workers: readonly WorkerEntry[] | undefined, now: number = Date.now()): string {
  if (!workers || workers.length === 0) return '';
  const ready = workers.filter((w) => w.ready).length;
  const rows = [
    ['WORKER', 'PID', 'NODE', 'STATE', 'LEASE SLOT', 'LEASE LEFT', 'RENEWALS', 'IDS/S', 'ISSUED', 'RESTARTS'],
    ...workers.map((w) => [
      String(w.slot),
      String(w.pid),
      nodeText(w.node, '-'),
      w.state,
      w.lease ? String(w.lease.slot) : '-',
      !w.lease
        ? '-'
        : w.lease.deadlineMs === null
          ? 'never expires'
          : `${Math.max(0, w.lease.deadlineMs - now)} ms${w.lease.fenced ? ' (fenced)' : ''}`,
      w.lease ? String(w.lease.renewals) : '-',
      String(w.idsPerSecond),
      w.issued,
      String(w.restarts),
    ]),
  ];
  return `${workers.length} worker processes (--workers), ${ready} ready:\n` + alignedRows(rows);
}
