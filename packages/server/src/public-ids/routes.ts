// Public IDs (keyed, reversible obfuscation): on only with a public-ID key; decoding reveals the
// real ID, so it needs the bearer token (disabled without one).
import { serverError } from '../errors.js';
import type { HttpContext } from '../http/context.js';
import { BAD, COMMON, FENCED, NOT_FOUND, errorResponse, jsonOk, oneOk } from '../http/openapi-parts.js';
import { JSON_TYPE, TEXT_TYPE, sendText } from '../http/respond.js';
import { ISSUE, READ, type Route } from '../http/route.js';
import { decodedBody, pathSegment, wantsText } from '../http/routes/ids.js';
import { PUBLIC_IDS, requirePublicIds, type PublicIds } from './codec.js';

const codec = (ctx: HttpContext): PublicIds => requirePublicIds(PUBLIC_IDS.get(ctx));

export const publicNextRoute: Route = {
  name: 'public_next',
  path: '/v1/public-ids/next',
  methods: ISSUE,
  create: (ctx) => (res, input) => {
    const p = codec(ctx).next();
    if (wantsText(input.headers.accept)) return sendText(res, 200, TEXT_TYPE, p);
    return sendText(res, 200, JSON_TYPE, JSON.stringify({ publicId: p }));
  },
  openapi: {
    operationId: 'nextPublicId',
    summary:
      'Issue one ID as a public ID (keyed, reversible obfuscation). Only when a public-ID key is configured (else 404 FLURRY_E_PUBLIC_IDS_DISABLED).',
    responses: {
      ...oneOk('A new public ID.', 'publicId', { $ref: '#/components/schemas/PublicId' }),
      ...NOT_FOUND,
      ...FENCED,
    },
  },
};

export const publicDecodeRoute: Route = {
  name: 'public_decode',
  path: '/v1/public-ids/{publicId}',
  methods: READ,
  create: (ctx) => (res, input) => {
    const c = codec(ctx);
    if (ctx.limits.token === undefined) {
      throw serverError(
        'PUBLIC_DECODE_DISABLED',
        'decoding public IDs reveals the real IDs, so it needs a bearer token, and this service has none: start it with --token / FLURRY_TOKEN and send "Authorization: Bearer <token>"',
      );
    }
    const publicId = pathSegment(input.params[0]);
    const body = { publicId, ...decodedBody(ctx.layout.decode(c.decode(publicId))) };
    return sendText(res, 200, JSON_TYPE, JSON.stringify(body));
  },
  openapi: {
    operationId: 'decodePublicId',
    summary:
      'Decode a public ID back to the ID and its fields. Needs the bearer token; disabled (403) when the service has no token.',
    description:
      'Bad input is 400, never a wrong ID: FLURRY_E_PUBLIC_ID_MALFORMED (length, characters, made for another layout width), FLURRY_E_PUBLIC_ID_CHECKSUM (a typo: ' +
      'one changed character or two swapped ones), FLURRY_E_PUBLIC_ID_UNKNOWN_KEY (its key ID is not in the keyring), FLURRY_E_PUBLIC_ID_WRONG_KEY (its authentication ' +
      'tag does not match the key of that key ID: the service has a different key under the same key ID).',
    parameters: [{ name: 'publicId', in: 'path', required: true, schema: { $ref: '#/components/schemas/PublicId' } }],
    responses: {
      ...jsonOk('The ID behind the public ID.', {
        allOf: [
          { $ref: '#/components/schemas/DecodedId' },
          {
            type: 'object',
            required: ['publicId'],
            properties: { publicId: { $ref: '#/components/schemas/PublicId' } },
          },
        ],
      }),
      ...BAD,
      '403': errorResponse(
        'Decoding is disabled because no bearer token is configured (FLURRY_E_PUBLIC_DECODE_DISABLED).',
      ),
      ...NOT_FOUND,
      ...COMMON,
    },
  },
};
