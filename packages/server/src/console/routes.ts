// The web console as a feature in the routes' context, and its data routes; each console route is declared
// through consoleRoute, so it answers 404 saying why while the console is off and no other module knows the rule.
import type { ServerResponse } from 'node:http';
import { serverError } from '../errors.js';
import { FeatureSlot, type HttpContext } from '../http/context.js';
import { COMMON, FENCED, jsonOk, param } from '../http/openapi-parts.js';
import { JSON_TYPE, sendError, sendText } from '../http/respond.js';
import { ISSUE, READ, type Route } from '../http/route.js';

/** The console as its routes see it: `access.why` is the 404's message while it is off ('' when on). */
export interface ConsoleFeature {
  readonly access: { readonly on: boolean; readonly why: string };
  readonly data: { status(): unknown; cluster(): Promise<unknown> };
  readonly streams: { open(res: ServerResponse): number };
}

export const CONSOLE = new FeatureSlot<ConsoleFeature>('console');

/** The console of `ctx`; 503 on a context built without one (a bare test context). */
export function consoleOf(ctx: HttpContext): ConsoleFeature {
  const c = CONSOLE.get(ctx);
  if (!c) throw serverError('UNAVAILABLE', 'this service was built without console data (no ServiceCore console)');
  return c;
}

/** A console route: while the console is off, 404 saying why, whatever the token. */
export function consoleRoute(route: Route): Route {
  return {
    ...route,
    create: (ctx) => {
      const access = CONSOLE.get(ctx)?.access;
      if (access?.on === false)
        return () => {
          throw serverError('NOT_FOUND', access.why);
        };
      return route.create(ctx);
    },
  };
}

/** `auto` shows the console when a token protects it or on loopback (docs/console.md#who-can-see-it---token-and---console). */
export function consoleAccess(
  setting: 'auto' | 'on' | 'off',
  host: string,
  token: string | undefined,
): ConsoleFeature['access'] {
  if (setting === 'on') return { on: true, why: '' };
  if (setting === 'off')
    return {
      on: false,
      why: 'the web console and its data routes (/v1/status, /v1/cluster, /v1/events) are off (--console off / FLURRY_CONSOLE=off); set it to auto or on',
    };
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback =
    h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
  if (token !== undefined || loopback) return { on: true, why: '' };
  return {
    on: false,
    why: `the web console and its data routes (/v1/status, /v1/cluster, /v1/events) are off: this service listens on ${host} (not loopback) without a token, and they would show its hosts, pids and registry to anyone who reaches the port; set --token (FLURRY_TOKEN) to protect them, or --console on to show them anyway (see docs/console.md)`,
  };
}

const n = { type: 'number' };
const nn = { type: ['number', 'null'] };
const s = { type: 'string' };
const sn = { type: ['string', 'null'] };

// `GET /v1/status`: this node at a glance (`StatusBody`, console/data.ts).
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  additionalProperties: true,
  properties,
  ...extra,
});
const required = ['now', 'version', 'layout', 'lease', 'generator', 'refusals', 'routes', 'protocols', 'sequences'];

export const statusRoute: Route = consoleRoute({
  name: 'status',
  path: '/v1/status',
  methods: READ,
  create: (ctx) => (res) => sendText(res, 200, JSON_TYPE, JSON.stringify(consoleOf(ctx).data.status())),
  openapi: {
    operationId: 'status',
    summary:
      'This node for the console: version, uptime, layout, lease (registry without password, slot, deadline, renewals), generator (IDs issued, IDs per second over the last second, exhaustions, borrow, clock-backwards events), refusals by code, per-route rates and p99, sequences.',
    responses: {
      ...jsonOk(
        'The status. All times are Unix ms; 64-bit numbers are decimal strings.',
        obj(
          {
            now: n,
            version: s,
            host: s,
            pid: n,
            startedAt: n,
            uptimeMs: n,
            layout: obj({
              name: s,
              totalBits: n,
              epochMs: n,
              unitMs: n,
              endOfLifeMs: n,
              endOfLifeWarning: { type: 'boolean' },
              fields: { type: 'array', items: obj({ name: s, bits: n, shift: n, kind: s }) },
            }),
            lease: {
              type: ['object', 'null'],
              properties: {
                registry: s,
                kind: s,
                cluster: s,
                slot: n,
                node: { type: 'object', additionalProperties: { type: 'integer' } },
                deadlineMs: nn,
                ttlMs: n,
                renewIntervalMs: n,
                renewals: n,
                lastRenewalAt: nn,
                lastRenewalLatencyMs: nn,
                fenced: { type: 'boolean' },
              },
            },
            generator: obj({ issued: s, idsPerSecond: n, exhaustions: n, borrowMs: n, clockBackwards: n }),
            refusals: { type: 'object', additionalProperties: { type: 'integer' } },
            publicIds: obj(
              { issue: { type: 'boolean' }, decode: { type: 'boolean' } },
              {
                description:
                  'Whether this service issues public IDs (a public-ID key) and decodes them (the key and a bearer token).',
              },
            ),
            routes: { type: 'array', items: obj({ name: s, requests: n, perSecond: n, p99Ms: nn }) },
            protocols: {
              type: 'array',
              description:
                'The non-HTTP front-ends (protocol grpc, grpc-web, connect, memcached), one entry per command with requests: total, failed, per second over the last second, p99 since the start (ms).',
              items: obj({ protocol: s, command: s, requests: n, errors: n, perSecond: n, p99Ms: nn }),
            },
            sequences: { type: ['array', 'null'], items: { type: 'object' } },
            workers: {
              type: 'array',
              items: { type: 'object' },
              description:
                'Only with flurry serve --workers N: one entry per worker process (slot, pid, restarts, ready, state, node, lease, issued, idsPerSecond, notReady, reportedAt).',
            },
            notReady: {
              type: ['object', 'null'],
              description:
                "Why the service is not ready (/readyz's code and message: starting, waiting for a sequence store or registry that does not answer, fenced…); null while ready.",
              properties: { code: s, message: s },
            },
          },
          { required },
        ),
      ),
      ...COMMON,
    },
  },
});

// `GET /v1/cluster`: the `ClusterBody` (console/cluster.ts), or 503 with the code of a registry that cannot be read.
export const clusterRoute: Route = consoleRoute({
  name: 'cluster',
  path: '/v1/cluster',
  methods: READ,
  create: (ctx) => (res) =>
    consoleOf(ctx)
      .data.cluster()
      .then(
        (body) => sendText(res, 200, JSON_TYPE, JSON.stringify(body)),
        (err: unknown) => sendError(res, err),
      ),
  openapi: {
    operationId: 'cluster',
    summary:
      "Every live holder of a node ID in this service's cluster (from the registry, cached about 1 s and shared by all callers): node, host, pid, version, held since, last renewal, expiry, high-water mark, clock offset from this node, live or stale, or reserved (a node reserved for in-database generation by flurry sql --generate: held until released, never renewed, role `sql generator`). An expired holder is not listed.",
    responses: {
      ...jsonOk('The cluster. All times are Unix ms on this node’s clock.', {
        type: 'object',
        additionalProperties: true,
        required: ['now', 'cluster', 'registry', 'kind', 'ttlMs', 'renewIntervalMs', 'holders'],
        properties: {
          now: n,
          cluster: { type: 'string' },
          registry: { type: 'string' },
          kind: { type: 'string' },
          ttlMs: n,
          renewIntervalMs: n,
          holders: {
            type: 'array',
            items: obj({
              slot: n,
              node: { type: ['object', 'null'], additionalProperties: { type: 'integer' } },
              id: sn,
              hostname: sn,
              pid: nn,
              version: sn,
              address: sn,
              heldSinceMs: nn,
              renewedAtMs: nn,
              expiresAtMs: nn,
              highWaterMs: n,
              clockOffsetMs: nn,
              ageMs: nn,
              state: { enum: ['live', 'stale', 'reserved'] },
              role: sn,
              self: { type: 'boolean' },
            }),
          },
        },
      }),
      ...FENCED,
    },
  },
});

// `GET /v1/events`: the console's Server-Sent Events (console/events.ts); this route alone also takes `?token=`.
const TOKEN_HELP = 'The bearer token, for clients that cannot send headers (EventSource). Only on this route.';

export const eventsRoute: Route = consoleRoute({
  name: 'events',
  path: '/v1/events',
  // GET only: a HEAD would open a stream nobody reads.
  methods: ISSUE,
  auth: 'token-or-query',
  create: (ctx) => (res) => consoleOf(ctx).streams.open(res),
  openapi: {
    operationId: 'events',
    summary:
      'Server-Sent Events for the console: `event: status` (the /v1/status body) and `event: cluster` (the /v1/cluster body, or `event: cluster-error` with {code, message}) at least every second, a `: ping` comment every 15 s. At most 64 streams per service (then 503 with Retry-After). Besides the Authorization header, this route alone accepts the token as the `token` query parameter, because EventSource cannot send headers.',
    parameters: [param('query', 'token', false, { type: 'string' }, TOKEN_HELP)],
    responses: {
      '200': {
        description: 'The event stream (until the client disconnects or the service stops).',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...FENCED,
    },
  },
});
