// Operational routes: `/v1/layout`, `/healthz`, `/readyz`, `/metrics` and `/openapi.json`.
import { OPERATIONS } from './feature.js';
import { COMMON, FENCED, jsonOk } from '../http/openapi-parts.js';
import { JSON_TYPE, sendError, sendText } from '../http/respond.js';
import { READ, type Route } from '../http/route.js';

export const layoutRoute: Route = {
  name: 'layout',
  path: '/v1/layout',
  methods: READ,
  create: (ctx) => (res) => {
    const body = JSON.stringify({ ...(ctx.layout.describe() as object), node: OPERATIONS.get(ctx)?.node() ?? null });
    return sendText(res, 200, JSON_TYPE, body);
  },
  openapi: {
    operationId: 'layout',
    summary: "This service's layout: fields, epoch, unit, end of life, capacity, and its current node.",
    responses: {
      ...jsonOk('The layout.', {
        type: 'object',
        additionalProperties: true,
        properties: { node: { type: ['object', 'null'], additionalProperties: { type: 'integer' } } },
      }),
      ...COMMON,
    },
  },
};

export const healthzRoute: Route = {
  name: 'healthz',
  path: '/healthz',
  methods: READ,
  auth: 'health',
  create: () => (res) => sendText(res, 200, JSON_TYPE, '{"status":"ok"}'),
  openapi: {
    operationId: 'healthz',
    summary: 'Liveness: 200 while the process serves requests.',
    security: [{}],
    responses: {
      ...jsonOk('Alive.', { type: 'object', properties: { status: { const: 'ok' } } }),
      ...COMMON,
    },
  },
};

export const readyzRoute: Route = {
  name: 'readyz',
  path: '/readyz',
  methods: READ,
  auth: 'health',
  create: (ctx) => (res) => {
    const reason = ctx.notReady();
    if (reason) return sendError(res, reason);
    const ops = OPERATIONS.get(ctx);
    const body = { status: 'ready', node: ops?.node() ?? null, ...ops?.readyBody?.() };
    return sendText(res, 200, JSON_TYPE, JSON.stringify(body));
  },
  openapi: {
    operationId: 'readyz',
    summary:
      'Readiness: 200 only while the node-ID lease is valid and the clock is sane; 503 (with the reason code) otherwise.',
    security: [{}],
    responses: {
      ...jsonOk('Ready.', {
        type: 'object',
        properties: {
          status: { const: 'ready' },
          node: { type: 'object', additionalProperties: { type: 'integer' } },
          workers: {
            type: 'object',
            description:
              'With --workers N: how many worker processes are ready (hold a valid lease) of how many; the service is ready while one is.',
            properties: { ready: { type: 'integer' }, total: { type: 'integer' } },
          },
        },
      }),
      ...FENCED,
    },
  },
};

export const metricsRoute: Route = {
  name: 'metrics',
  path: '/metrics',
  methods: READ,
  auth: 'health',
  create: (ctx) => (res) => ctx.metrics.text().then((text) => sendText(res, 200, ctx.metrics.contentType, text)),
  openapi: {
    operationId: 'metrics',
    summary: 'Prometheus text exposition.',
    security: [{}],
    responses: {
      '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
      ...COMMON,
    },
  },
};

export const openapiRoute: Route = {
  name: 'openapi',
  path: '/openapi.json',
  methods: READ,
  auth: 'none',
  create: (ctx) => (res) => sendText(res, 200, JSON_TYPE, OPERATIONS.get(ctx)?.openapi ?? '{}'),
  openapi: {
    operationId: 'openapi',
    summary: 'This document.',
    security: [{}],
    responses: jsonOk('The OpenAPI document.', { type: 'object' }),
  },
};
