// The OpenAPI document, served at `/openapi.json` and kept as docs/openapi.json (a test compares them);
// its paths come from the route table.
import { fileURLToPath } from 'node:url';
import { errorResponse } from './http/openapi-parts.js';
import { ROUTES } from './http/routes/index.js';

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', example: 1 } },
};
const allow = { Allow: { description: 'The methods the route accepts.', schema: { type: 'string', example: 'GET' } } };

/** Builds the OpenAPI document (a fresh plain object each call). */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Flurry ID service',
      version: '0.1.0',
      description:
        'Distributed, time-ordered, 64-bit unique IDs (Snowflake family). IDs are always decimal strings in JSON so no client rounds them. ' +
        'Errors are {"error":{"code":"FLURRY_E_…","message":"…"}}. When a bearer token is configured, every route except /openapi.json ' +
        '(and, unless authHealth is set, /healthz, /readyz and /metrics) needs "Authorization: Bearer <token>". See docs/service-api.md.',
      license: { name: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    security: [{ bearer: [] }, {}],
    paths: Object.fromEntries(ROUTES.map((r) => [r.path, { get: structuredClone(r.openapi) }])),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The token given with --token / FLURRY_TOKEN.' },
      },
      schemas: {
        DecimalId: {
          type: 'string',
          pattern: '^[0-9]{1,20}$',
          description: 'An ID as a decimal string (up to 2^64-1).',
          example: '1859214170478923776',
        },
        PublicId: {
          type: 'string',
          pattern: '^[1-9A-HJ-NP-Za-km-z][0-9A-Za-z]{5,15}$',
          description:
            'A public ID (string format 2), fixed-width for a given layout: the key ID (one base58 character), the encrypted ID in base62 (11 characters for 63- and ' +
            '64-bit layouts, 9 for 53-bit), a 3-character keyed authentication tag and a check character: 16 characters for 63- and 64-bit layouts. See docs/public-ids.md.',
          example: 'K5P1wyqYb9IVBDrr',
        },
        DecodedId: {
          type: 'object',
          required: ['id', 'unixMs', 'timestamp', 'fields', 'sequence'],
          properties: {
            id: { $ref: '#/components/schemas/DecimalId' },
            unixMs: { type: 'integer', description: 'Unix milliseconds of the ID.' },
            timestamp: { type: 'string', format: 'date-time' },
            fields: {
              type: 'object',
              additionalProperties: { type: 'integer' },
              description: 'The node fields, e.g. {"datacenter":1,"worker":7}.',
            },
            sequence: { type: 'integer' },
          },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string', pattern: '^FLURRY_E_[A-Z0-9_]+$' }, message: { type: 'string' } },
            },
          },
          example: {
            error: {
              code: 'FLURRY_E_BATCH_COUNT',
              message: 'count 0 is out of range; count must be one integer from 1 to 10000, e.g. /v1/ids?count=100',
            },
          },
        },
      },
      responses: {
        BadRequest: errorResponse(
          'Bad input: a malformed, negative or too wide ID, a bad count or query, a public ID that is malformed, mistyped, of an unknown key or not issued by the key of its key ID (FLURRY_E_ID_*, FLURRY_E_BATCH_COUNT, FLURRY_E_QUERY, FLURRY_E_PUBLIC_ID_MALFORMED, FLURRY_E_PUBLIC_ID_CHECKSUM, FLURRY_E_PUBLIC_ID_UNKNOWN_KEY, FLURRY_E_PUBLIC_ID_WRONG_KEY).',
        ),
        Unauthorized: errorResponse(
          'A bearer token is configured and the request has none or a wrong one (FLURRY_E_UNAUTHORIZED).',
          { 'WWW-Authenticate': { schema: { type: 'string', example: 'Bearer realm="flurry"' } } },
        ),
        NotFound: errorResponse(
          'No such route (FLURRY_E_NOT_FOUND), or public IDs are off (FLURRY_E_PUBLIC_IDS_DISABLED).',
        ),
        MethodNotAllowed: errorResponse('Wrong method (FLURRY_E_METHOD_NOT_ALLOWED); see Allow.', allow),
        BodyTooLarge: errorResponse(
          'A request body larger than maxBodyBytes, or a chunked one (FLURRY_E_BODY_TOO_LARGE).',
        ),
        UrlTooLong: errorResponse('A request target longer than maxUrlBytes (FLURRY_E_URL_TOO_LONG).'),
        Unavailable: errorResponse(
          'Fenced or not ready: no valid lease, clock behind, sequence exhausted past its bound, shutting down (FLURRY_E_LEASE_EXPIRED, FLURRY_E_CLOCK_*, FLURRY_E_UNAVAILABLE…).',
          retryAfter,
        ),
      },
    },
  };
}

/** The document as served: two-space indented JSON with a final newline (the same bytes as docs/openapi.json). */
export function openApiJson(): string {
  return JSON.stringify(openApiDocument(), null, 2) + '\n';
}

// `node dist/openapi.js` prints the document (to regenerate docs/openapi.json).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.stdout.write(openApiJson());
