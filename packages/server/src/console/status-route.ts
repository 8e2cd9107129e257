// `GET /v1/status`: this node at a glance (`StatusBody`, console/data.ts).
import { consoleOf, consoleRoute } from './feature.js';
import type { HttpContext } from '../http/context.js';
import { COMMON, jsonOk } from '../http/openapi-parts.js';
import { JSON_TYPE, sendText } from '../http/respond.js';
import { READ, type Route } from '../http/route.js';

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  additionalProperties: true,
  properties,
  ...extra,
});
const n = { type: 'number' };
const nn = { type: ['number', 'null'] };
const s = { type: 'string' };
const required = ['now', 'version', 'layout', 'lease', 'generator', 'refusals', 'routes', 'protocols', 'sequences'];

export const statusRoute: Route = consoleRoute({
  name: 'status',
  path: '/v1/status',
  methods: READ,
  auth: 'token',
  create: (ctx: HttpContext) => (res) => sendText(res, 200, JSON_TYPE, JSON.stringify(consoleOf(ctx).data.status())),
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
