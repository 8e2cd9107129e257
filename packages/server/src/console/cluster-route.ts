// `GET /v1/cluster`: the `ClusterBody` (console/cluster.ts), or 503 with the code of a registry that cannot be read.
import { consoleOf, consoleRoute } from './feature.js';
import type { HttpContext } from '../http/context.js';
import { COMMON, FENCED, jsonOk } from '../http/openapi-parts.js';
import { JSON_TYPE, sendError, sendText } from '../http/respond.js';
import { READ, type Route } from '../http/route.js';

const n = { type: 'number' };
const nn = { type: ['number', 'null'] };
const sn = { type: ['string', 'null'] };

export const clusterRoute: Route = consoleRoute({
  name: 'cluster',
  path: '/v1/cluster',
  methods: READ,
  auth: 'token',
  create: (ctx: HttpContext) => (res) =>
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
            items: {
              type: 'object',
              additionalProperties: true,
              properties: {
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
              },
            },
          },
        },
      }),
      ...COMMON,
      ...FENCED,
    },
  },
});
