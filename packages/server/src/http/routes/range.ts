// `GET /v1/ids/range?from=&to=`: the ID interval `[min, maxExclusive)` of the times `[from, to)`.
import { parseTime, type Layout } from '@flurry/core';
import { serverError } from '../../errors.js';
import { BAD, COMMON, jsonOk, param } from '../openapi-parts.js';
import { JSON_TYPE, sendText } from '../respond.js';
import { READ, type Route } from '../route.js';

/** A layout's bounds of `[fromMs, toMs)` as `flurry range --json` prints them (64-bit values as decimal strings). */
export function rangeJson(layout: Layout, fromMs: number, toMs: number) {
  const b = layout.bounds(fromMs, toMs);
  return {
    layout: layout.name,
    from: new Date(b.fromMs).toISOString(),
    to: new Date(b.toMs).toISOString(),
    fromMs: b.fromMs,
    toMs: b.toMs,
    min: b.min.toString(),
    maxExclusive: b.maxExclusive.toString(),
    maxInclusive: b.maxExclusive > b.min ? (b.maxExclusive - 1n).toString() : null,
  };
}

function oneParam(params: URLSearchParams, name: string): string {
  const all = params.getAll(name);
  const form = 'an ISO 8601 date or Unix ms, e.g. /v1/ids/range?from=2026-11-01&to=2026-12-01';
  if (all.length === 1) return all[0];
  throw serverError(
    'QUERY',
    all.length === 0
      ? `the query parameter ${name} is missing; give ${form}`
      : `the query parameter ${name} is given ${all.length} times; give it once, as ${form}`,
    { parameter: name },
  );
}

/** `GET /v1/ids/range?from=…&to=…` → {@link rangeJson} under the service's layout, or a coded 400. */
export const idsRangeRoute: Route = {
  name: 'ids_range',
  path: '/v1/ids/range',
  methods: READ,
  create: (ctx) => (res, input) => {
    const params = new URLSearchParams(input.query);
    for (const key of params.keys())
      if (key !== 'from' && key !== 'to')
        throw serverError(
          'QUERY',
          `unknown query parameter ${JSON.stringify(key.slice(0, 24))}; this route takes from and to`,
          { parameter: key.slice(0, 24) },
        );
    const from = parseTime(oneParam(params, 'from'), 'from');
    const to = parseTime(oneParam(params, 'to'), 'to');
    return sendText(res, 200, JSON_TYPE, JSON.stringify(rangeJson(ctx.layout, from, to)));
  },
  openapi: {
    operationId: 'idRange',
    summary:
      "The half-open ID interval [min, maxExclusive) holding exactly the IDs of this service's layout whose time (rounded down to the unit) is in [from, to): for range scans and time partitions on an ID column. See docs/layouts.md#time-to-id-bounds.",
    parameters: [
      param(
        'query',
        'from',
        true,
        { type: 'string', example: '2026-11-01' },
        'First instant inside: an ISO 8601 date (zone-less is UTC) or Unix milliseconds.',
      ),
      param(
        'query',
        'to',
        true,
        { type: 'string', example: '2026-12-01' },
        "First instant outside (not before from; at most the layout's end of life): an ISO 8601 date or Unix milliseconds.",
      ),
    ],
    responses: {
      ...jsonOk(
        'The bounds; 64-bit values are decimal strings.',
        {
          type: 'object',
          required: ['layout', 'from', 'to', 'fromMs', 'toMs', 'min', 'maxExclusive', 'maxInclusive'],
          properties: {
            layout: { type: 'string' },
            from: { type: 'string', format: 'date-time', description: 'from rounded down to the unit.' },
            to: { type: 'string', format: 'date-time', description: 'to rounded down to the unit.' },
            fromMs: { type: 'integer' },
            toMs: { type: 'integer' },
            min: { $ref: '#/components/schemas/DecimalId' },
            maxExclusive: {
              type: 'string',
              pattern: '^[0-9]{1,20}$',
              description: 'One past the last ID of the range (may be 2^totalBits).',
            },
            maxInclusive: { oneOf: [{ $ref: '#/components/schemas/DecimalId' }, { type: 'null' }] },
          },
        },
        {
          layout: 'twitter',
          from: '2026-11-01T00:00:00.000Z',
          to: '2026-12-01T00:00:00.000Z',
          fromMs: 1793491200000,
          toMs: 1796083200000,
          min: '2116681624581046272',
          maxExclusive: '2127553260549046272',
          maxInclusive: '2127553260549046271',
        },
      ),
      ...BAD,
      ...COMMON,
    },
  },
};
