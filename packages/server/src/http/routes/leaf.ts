// Meituan Leaf's snowflake endpoints and bodies, so Leaf clients work unchanged; the bodies honour the
// layout where Leaf hard-codes Twitter's (docs/service-api.md#leaf-compatibility).
import { parseId, type DecodedId, type Layout } from '@flurry/core';
import { serverError } from '../../errors.js';
import { BAD, COMMON, FENCED, jsonOk, param } from '../openapi-parts.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../respond.js';
import { ISSUE, READ, type Route } from '../route.js';

/** `GET /api/snowflake/get/{key}`: the bare decimal ID as text. */
export const leafGetRoute: Route = {
  name: 'leaf_get',
  path: '/api/snowflake/get/{key}',
  methods: ISSUE,
  create: (ctx) => {
    const ids = ctx.ids;
    return (res) => sendAscii(res, 200, TEXT_TYPE, ids.nextString()); // the key is ignored, as in Leaf's snowflake mode
  },
  openapi: {
    operationId: 'leafGet',
    summary:
      "Meituan Leaf compatible: one ID as bare decimal text. The key (Leaf's biz tag) is required and ignored, as in Leaf's snowflake mode.",
    parameters: [param('path', 'key', true, { type: 'string', minLength: 1 })],
    responses: {
      '200': {
        description: 'A new ID.',
        content: { 'text/plain': { schema: { $ref: '#/components/schemas/DecimalId' } } },
      },
      ...FENCED,
    },
  },
};

/** `GET /decodeSnowflakeId?snowflakeId=…` (given exactly once). */
export const leafDecodeRoute: Route = {
  name: 'leaf_decode',
  path: '/decodeSnowflakeId',
  methods: READ,
  create: (ctx) => (res, input) => {
    const all = new URLSearchParams(input.query).getAll('snowflakeId');
    if (all.length !== 1) {
      throw serverError(
        'QUERY',
        `give the ID to decode once as the query parameter snowflakeId, e.g. /decodeSnowflakeId?snowflakeId=1859214170478923776${all.length > 1 ? ` (it was given ${all.length} times)` : ''}`,
      );
    }
    return sendText(res, 200, JSON_TYPE, leafDecodeBody(ctx.layout.decode(parseId(all[0], ctx.layout)), ctx.layout));
  },
  openapi: {
    operationId: 'leafDecode',
    summary: "Meituan Leaf compatible decoder, honouring this service's layout and epoch.",
    parameters: [param('query', 'snowflakeId', true, { $ref: '#/components/schemas/DecimalId' })],
    responses: {
      ...jsonOk(
        "Leaf's decode body. workerId is the node fields read as one integer (datacenter<<5|worker for twitter); the date is in the server's local time zone.",
        {
          type: 'object',
          required: ['timestamp', 'sequenceId', 'workerId'],
          properties: {
            timestamp: { type: 'string', example: '1732262400000(2024-11-22 08:00:00.000)' },
            sequenceId: { type: 'string' },
            workerId: { type: 'string' },
          },
        },
      ),
      ...BAD,
      ...COMMON,
    },
  },
};

/** Formats Unix ms as Leaf does: `yyyy-MM-dd HH:mm:ss.SSS` in the local time zone. */
export function leafDate(unixMs: number): string {
  const d = new Date(unixMs);
  const p = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${p(d.getFullYear(), 4)}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** The node fields as one integer, most significant field first (Leaf's `workerId`), in decimal (it can exceed 2^53). */
export function leafWorkerId(fields: Readonly<Record<string, number>>, layout: Layout): string {
  let acc = 0n;
  for (const f of layout.nodeFields) acc = (acc << BigInt(f.bits)) | BigInt(fields[f.name] ?? 0);
  return acc.toString();
}

/** The JSON body of Leaf's `/decodeSnowflakeId` for a decoded ID. */
export function leafDecodeBody(decoded: DecodedId, layout: Layout): string {
  return JSON.stringify({
    timestamp: `${decoded.unixMs}(${leafDate(decoded.unixMs)})`,
    sequenceId: String(decoded.sequence),
    workerId: leafWorkerId(decoded.fields, layout),
  });
}
