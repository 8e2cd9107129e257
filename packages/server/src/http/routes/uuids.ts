// The UUIDv7 routes (docs/uuids.md), from the service's UUID generator on its lease (../../issuing.ts).
import { decodeUuid, type UuidTextForm } from '@flurry/core';
import { clip, serverError } from '../../errors.js';
import { FeatureSlot, type HttpContext, type UuidSource } from '../context.js';
import { BAD, COMMON, FENCED, countParam, jsonOk, oneOk, param } from '../openapi-parts.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../respond.js';
import { ISSUE, READ, type Route } from '../route.js';
import { parseCount, pathSegment, wantsText } from './ids.js';

const TEXT_FORMS: readonly UuidTextForm[] = ['canonical', 'hex', 'base32', 'base58', 'base62'];

/** UUIDv7 on the routes' context (absent: the UUID routes answer 503). */
export const UUIDS = new FeatureSlot<UuidSource>('uuids');

/** `uuids`, or the 503 of a service built without a UUID generator. */
export function requireUuids(uuids: UuidSource | undefined): UuidSource {
  if (uuids === undefined)
    throw serverError('UNAVAILABLE', 'this service issues no UUIDs (it was built without a UUID generator)');
  return uuids;
}

const source = (ctx: HttpContext): UuidSource => requireUuids(UUIDS.get(ctx));

/** Reads the optional `format` query parameter; `FLURRY_E_UUID_FORMAT` for another value or a repeated one. */
export function parseUuidForm(query: string): UuidTextForm | undefined {
  if (query.indexOf('format') === -1) return undefined;
  const all = new URLSearchParams(query).getAll('format');
  if (all.length === 0) return undefined;
  const allowed = `format must be one of ${TEXT_FORMS.join(', ')} (default canonical), given once`;
  const v = all[0];
  if (all.length > 1) throw serverError('UUID_FORMAT', `format is given ${all.length} times; ${allowed}`);
  if (!(TEXT_FORMS as readonly string[]).includes(v)) {
    const shown = clip(v, 24);
    throw serverError('UUID_FORMAT', `format "${shown}" is not a UUID text form; ${allowed}`, { value: shown });
  }
  return v as UuidTextForm;
}

const UUID_SCHEMA = {
  type: 'string',
  description: 'A UUIDv7: canonical lowercase (36 characters) unless format says otherwise.',
  example: '017f22e2-79b0-7cc3-98c4-dc0c0c07398f',
};
const FORMAT_PARAM = param(
  'query',
  'format',
  false,
  { type: 'string', enum: [...TEXT_FORMS], default: 'canonical' },
  'The text form: canonical (default), hex (32), base32 (26, Crockford: a valid ULID that sorts like the UUID), base58 or base62 (22).',
);

/** `GET /v1/uuids/next` → `{"uuid":"…"}`, or the bare UUID with `Accept: text/plain`. */
export const uuidsNextRoute: Route = {
  name: 'uuids_next',
  path: '/v1/uuids/next',
  methods: ISSUE,
  create: (ctx) => (res, input) => {
    const src = source(ctx);
    const form = input.query.length === 0 ? undefined : parseUuidForm(input.query);
    const uuid = form === undefined ? src.next() : src.nextAs(form);
    const accept = input.headers.accept;
    if (accept !== undefined && wantsText(accept)) return sendAscii(res, 200, TEXT_TYPE, uuid);
    return sendAscii(res, 200, JSON_TYPE, '{"uuid":"' + uuid + '"}');
  },
  openapi: {
    operationId: 'nextUuid',
    summary: 'Issue one UUIDv7 (time-ordered, unique by construction: the node ID of the lease is inside).',
    description: 'With "Accept: text/plain" the body is the bare UUID.',
    parameters: [FORMAT_PARAM],
    responses: {
      ...oneOk('A new UUIDv7.', 'uuid', UUID_SCHEMA, '017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
      ...BAD,
      ...FENCED,
    },
  },
};

/** `GET /v1/uuids?count=N` → `{"uuids":["…",…]}`, N strictly increasing UUIDs. */
export const uuidsBatchRoute: Route = {
  name: 'uuids_batch',
  path: '/v1/uuids',
  methods: ISSUE,
  create: (ctx) => {
    const max = ctx.limits.maxBatch;
    return (res, input) => {
      const src = source(ctx);
      const n = parseCount(input.query, max, '/v1/uuids');
      const uuids = src.batch(n, parseUuidForm(input.query));
      return sendAscii(res, 200, JSON_TYPE, '{"uuids":["' + uuids.join('","') + '"]}');
    };
  },
  openapi: {
    operationId: 'nextUuids',
    summary: 'Issue a batch of strictly increasing UUIDv7.',
    parameters: [countParam('UUIDs'), FORMAT_PARAM],
    responses: {
      ...jsonOk(
        'count UUIDs in increasing order.',
        {
          type: 'object',
          required: ['uuids'],
          properties: { uuids: { type: 'array', items: UUID_SCHEMA } },
        },
        { uuids: ['017f22e2-79b0-7cc3-98c4-dc0c0c07398f', '017f22e2-79b0-7cc3-98c4-dc0c0c17d4a1'] },
      ),
      ...BAD,
      ...FENCED,
    },
  },
};

/** `GET /v1/uuids/{uuid}` → the fields of a UUIDv7 under the service's widths; 400 for anything that is not one. */
export const uuidsDecodeRoute: Route = {
  name: 'uuids_decode',
  path: '/v1/uuids/{uuid}',
  methods: READ,
  create: (ctx) => (res, input) => {
    const { nodeBits, sequenceBits } = source(ctx).format;
    const form = parseUuidForm(input.query);
    const d = decodeUuid(pathSegment(input.params[0]), {
      nodeBits,
      sequenceBits,
      ...(form === undefined ? {} : { form }),
    });
    return sendText(res, 200, JSON_TYPE, JSON.stringify({ ...d, random: undefined })); // every field but the random bits
  },
  openapi: {
    operationId: 'decodeUuid',
    summary: "Decode a UUIDv7 under this service's node and sequence widths.",
    description:
      'Reads canonical (either case, with or without urn:uuid:), hex and base32 by their length; base58 and base62 (both 22 characters) need format.',
    parameters: [param('path', 'uuid', true, UUID_SCHEMA, 'A UUIDv7 in any text form.'), FORMAT_PARAM],
    responses: {
      ...jsonOk(
        'The fields of the UUID.',
        {
          type: 'object',
          required: ['uuid', 'version', 'unixMs', 'timestamp', 'node', 'sequence'],
          properties: {
            uuid: UUID_SCHEMA,
            version: { type: 'integer', enum: [7] },
            variant: { type: 'string', enum: ['RFC 9562'] },
            unixMs: { type: 'integer', description: 'unix_ts_ms: Unix milliseconds.' },
            timestamp: { type: 'string', format: 'date-time' },
            node: { type: 'integer', description: 'The node ID of the issuing lease.' },
            sequence: { type: 'integer', description: 'The sequence within the millisecond.' },
            nodeBits: { type: 'integer' },
            sequenceBits: { type: 'integer' },
          },
        },
        {
          uuid: '017f22e2-79b0-7cc3-98c4-dc0c0c07398f',
          version: 7,
          variant: 'RFC 9562',
          unixMs: 1645557742000,
          timestamp: '2022-02-22T19:22:22.000Z',
          node: 19904,
          sequence: 3345804,
          nodeBits: 16,
          sequenceBits: 22,
        },
      ),
      ...BAD,
      ...COMMON,
    },
  },
};
