// The ID routes. IDs are always decimal strings in JSON, so no client rounds them through a double.
import { parseId, type DecodedId } from '@flurry/core';
import { clip, serverError } from '../../errors.js';
import { BatchBodyWriter, type FillIds } from '../batch-body.js';
import { BAD, COMMON, FENCED, countParam, jsonOk, oneOk, param } from '../openapi-parts.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../respond.js';
import { ISSUE, READ, type Route } from '../route.js';

/** True when the client asked for plain text (`Accept: text/plain`, without JSON). */
export function wantsText(accept: string | undefined): boolean {
  return accept !== undefined && accept.indexOf('text/plain') !== -1 && accept.indexOf('json') === -1;
}

/** `GET /v1/ids/next` → `{"id":"…"}`, or the bare decimal with `Accept: text/plain`. */
export const idsNextRoute: Route = {
  name: 'ids_next',
  path: '/v1/ids/next',
  methods: ISSUE,
  create: (ctx) => {
    const ids = ctx.ids;
    return (res, input) => {
      const id = ids.nextString();
      const accept = input.headers.accept;
      if (accept !== undefined && wantsText(accept)) return sendAscii(res, 200, TEXT_TYPE, id);
      return sendAscii(res, 200, JSON_TYPE, '{"id":"' + id + '"}');
    };
  },
  openapi: {
    operationId: 'nextId',
    summary: 'Issue one ID.',
    description: 'With "Accept: text/plain" the body is the bare decimal ID.',
    responses: {
      ...oneOk('A new ID.', 'id', { $ref: '#/components/schemas/DecimalId' }, '1859214170478923776'),
      ...FENCED,
    },
  },
};

/** Parses `count` from a query string: one integer from 1 to `max`, else `FLURRY_E_BATCH_COUNT`. */
export function parseCount(query: string, max: number, path = '/v1/ids'): number {
  const all = new URLSearchParams(query).getAll('count');
  const allowed = `count must be one integer from 1 to ${max}, e.g. ${path}?count=100`;
  if (all.length !== 1) {
    const what = all.length === 0 ? 'is missing' : `is given ${all.length} times`;
    throw serverError('BATCH_COUNT', `the query parameter count ${what}; ${allowed}`, { min: 1, max });
  }
  const raw = all[0];
  const shown = clip(raw, 24);
  if (!/^[0-9]{1,9}$/.test(raw))
    throw serverError('BATCH_COUNT', `count "${shown}" is not a whole number; ${allowed}`, {
      value: shown,
      min: 1,
      max,
    });
  const n = Number(raw);
  if (n < 1 || n > max)
    throw serverError('BATCH_COUNT', `count ${n} is out of range; ${allowed}`, { value: n, min: 1, max });
  return n;
}

/** `GET /v1/ids?count=N` → `{"ids":["…",…]}`, N increasing IDs, written by the route's own {@link BatchBodyWriter}. */
export const idsBatchRoute: Route = {
  name: 'ids_batch',
  path: '/v1/ids',
  methods: ISSUE,
  create: (ctx) => {
    const max = ctx.limits.maxBatch;
    // One fill() call per tick's worth of IDs: see BatchBodyWriter's `chunk`.
    const writer = new BatchBodyWriter(max, Math.min(max, ctx.layout.maxSequence + 1));
    const ids = ctx.ids;
    const fill: FillIds = (a, o, n) => ids.fill(a, o, n);
    return (res, input) => {
      const body = writer.write(parseCount(input.query, max), fill);
      res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length });
      // 'finish': the socket has taken the bytes, so the buffer can be written again.
      res.once('finish', () => writer.recycle(body));
      res.end(body);
      return 200;
    };
  },
  openapi: {
    operationId: 'nextIds',
    summary: 'Issue a batch of increasing IDs.',
    parameters: [countParam('IDs')],
    responses: {
      ...jsonOk(
        'count IDs in increasing order.',
        {
          type: 'object',
          required: ['ids'],
          properties: { ids: { type: 'array', items: { $ref: '#/components/schemas/DecimalId' } } },
        },
        { ids: ['1859214170478923776', '1859214170478923777'] },
      ),
      ...BAD,
      ...FENCED,
    },
  },
};

/** A decoded ID as the API answers it: `{"id","unixMs","timestamp","fields":{…},"sequence"}`. */
export const decodedBody = (d: DecodedId) => ({
  id: d.id.toString(),
  unixMs: d.unixMs,
  timestamp: d.timestamp,
  fields: d.fields,
  sequence: d.sequence,
});

/** `GET /v1/ids/{id}` → the decoded ID under this service's layout; 400 for a malformed, negative or too wide ID. */
export const idsDecodeRoute: Route = {
  name: 'ids_decode',
  path: '/v1/ids/{id}',
  methods: READ,
  create: (ctx) => (res, input) => {
    const d = ctx.layout.decode(parseId(pathSegment(input.params[0]), ctx.layout));
    return sendText(res, 200, JSON_TYPE, JSON.stringify(decodedBody(d)));
  },
  openapi: {
    operationId: 'decodeId',
    summary: "Decode an ID under this service's layout.",
    parameters: [param('path', 'id', true, { $ref: '#/components/schemas/DecimalId' }, 'A decimal ID.')],
    responses: {
      ...jsonOk('The fields of the ID.', { $ref: '#/components/schemas/DecodedId' }),
      ...BAD,
      ...COMMON,
    },
  },
};

/** Percent-decodes one path segment; `FLURRY_E_BAD_REQUEST` (or `code` with `message`) for a malformed escape. */
export function pathSegment(
  segment: string,
  code: 'BAD_REQUEST' | 'QUERY' = 'BAD_REQUEST',
  message = 'the path has a malformed percent-escape; escape "%" as %25 and use valid UTF-8 escapes',
): string {
  if (segment.indexOf('%') === -1) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw serverError(code, message);
  }
}
