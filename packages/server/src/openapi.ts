/**
 * The OpenAPI 3.1 document of the HTTP API, served at `/openapi.json` and kept in the
 * repository as `docs/openapi.json` (a test checks the two are identical; regenerate the
 * file with `node packages/server/dist/openapi.js > docs/openapi.json`).
 *
 * @example
 * ```ts
 * import { openApiDocument } from '@flurry/server';
 * openApiDocument().paths['/v1/ids/next'];
 * ```
 */
import { fileURLToPath } from 'node:url';

const errorResponse = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', example: 1 } },
};
const allow = { Allow: { description: 'The methods the route accepts.', schema: { type: 'string', example: 'GET' } } };

const common = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  '405': { $ref: '#/components/responses/MethodNotAllowed' },
  '413': { $ref: '#/components/responses/BodyTooLarge' },
  '414': { $ref: '#/components/responses/UrlTooLong' },
};
const fenced = { '503': { $ref: '#/components/responses/Unavailable' } };
const bad = { '400': { $ref: '#/components/responses/BadRequest' } };

/**
 * Builds the OpenAPI document (a fresh plain object each call).
 *
 * @example
 * ```ts
 * JSON.stringify(openApiDocument(), null, 2);
 * ```
 */
export function openApiDocument(): Record<string, any> {
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
    paths: {
      '/v1/ids/next': {
        get: {
          operationId: 'nextId',
          summary: 'Issue one ID.',
          description: 'With "Accept: text/plain" the body is the bare decimal ID.',
          responses: {
            '200': {
              description: 'A new ID.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['id'],
                    properties: { id: { $ref: '#/components/schemas/DecimalId' } },
                  },
                  example: { id: '1859214170478923776' },
                },
                'text/plain': { schema: { $ref: '#/components/schemas/DecimalId' }, example: '1859214170478923776' },
              },
            },
            ...common,
            ...fenced,
          },
        },
      },
      '/v1/ids': {
        get: {
          operationId: 'nextIds',
          summary: 'Issue a batch of increasing IDs.',
          parameters: [
            {
              name: 'count',
              in: 'query',
              required: true,
              description: 'How many IDs: an integer from 1 to the configured maximum (maxBatch, default 10000).',
              schema: { type: 'integer', minimum: 1, maximum: 10000 },
            },
          ],
          responses: {
            '200': {
              description: 'count IDs in increasing order.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['ids'],
                    properties: { ids: { type: 'array', items: { $ref: '#/components/schemas/DecimalId' } } },
                  },
                  example: { ids: ['1859214170478923776', '1859214170478923777'] },
                },
              },
            },
            ...bad,
            ...common,
            ...fenced,
          },
        },
      },
      '/v1/ids/range': {
        get: {
          operationId: 'idRange',
          summary:
            "The half-open ID interval [min, maxExclusive) holding exactly the IDs of this service's layout whose time (rounded down to the unit) is in [from, to): for range scans and time partitions on an ID column. See docs/layouts.md#time-to-id-bounds.",
          parameters: [
            {
              name: 'from',
              in: 'query',
              required: true,
              description: 'First instant inside: an ISO 8601 date (zone-less is UTC) or Unix milliseconds.',
              schema: { type: 'string', example: '2026-11-01' },
            },
            {
              name: 'to',
              in: 'query',
              required: true,
              description:
                "First instant outside (not before from; at most the layout's end of life): an ISO 8601 date or Unix milliseconds.",
              schema: { type: 'string', example: '2026-12-01' },
            },
          ],
          responses: {
            '200': {
              description: 'The bounds; 64-bit values are decimal strings.',
              content: {
                'application/json': {
                  schema: {
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
                  example: {
                    layout: 'twitter',
                    from: '2026-11-01T00:00:00.000Z',
                    to: '2026-12-01T00:00:00.000Z',
                    fromMs: 1793491200000,
                    toMs: 1796083200000,
                    min: '2116681624581046272',
                    maxExclusive: '2127553260549046272',
                    maxInclusive: '2127553260549046271',
                  },
                },
              },
            },
            ...bad,
            ...common,
          },
        },
      },
      '/v1/ids/{id}': {
        get: {
          operationId: 'decodeId',
          summary: "Decode an ID under this service's layout.",
          parameters: [
            {
              name: 'id',
              in: 'path',
              required: true,
              description: 'A decimal ID.',
              schema: { $ref: '#/components/schemas/DecimalId' },
            },
          ],
          responses: {
            '200': {
              description: 'The fields of the ID.',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/DecodedId' } } },
            },
            ...bad,
            ...common,
          },
        },
      },
      '/v1/layout': {
        get: {
          operationId: 'layout',
          summary: "This service's layout: fields, epoch, unit, end of life, capacity, and its current node.",
          responses: {
            '200': {
              description: 'The layout.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    additionalProperties: true,
                    properties: { node: { type: ['object', 'null'], additionalProperties: { type: 'integer' } } },
                  },
                },
              },
            },
            ...common,
          },
        },
      },
      '/v1/public-ids/next': {
        get: {
          operationId: 'nextPublicId',
          summary:
            'Issue one ID as a public ID (keyed, reversible obfuscation). Only when a public-ID key is configured (else 404 FLURRY_E_PUBLIC_IDS_DISABLED).',
          responses: {
            '200': {
              description: 'A new public ID.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['publicId'],
                    properties: { publicId: { $ref: '#/components/schemas/PublicId' } },
                  },
                },
                'text/plain': { schema: { $ref: '#/components/schemas/PublicId' } },
              },
            },
            '404': { $ref: '#/components/responses/NotFound' },
            ...common,
            ...fenced,
          },
        },
      },
      '/v1/public-ids/{publicId}': {
        get: {
          operationId: 'decodePublicId',
          summary:
            'Decode a public ID back to the ID and its fields. Needs the bearer token; disabled (403) when the service has no token.',
          description:
            'Bad input is 400, never a wrong ID: FLURRY_E_PUBLIC_ID_MALFORMED (length, characters, made for another layout width), FLURRY_E_PUBLIC_ID_CHECKSUM (a typo: ' +
            'one changed character or two swapped ones), FLURRY_E_PUBLIC_ID_UNKNOWN_KEY (its key ID is not in the keyring), FLURRY_E_PUBLIC_ID_WRONG_KEY (its authentication ' +
            'tag does not match the key of that key ID: the service has a different key under the same key ID).',
          parameters: [
            { name: 'publicId', in: 'path', required: true, schema: { $ref: '#/components/schemas/PublicId' } },
          ],
          responses: {
            '200': {
              description: 'The ID behind the public ID.',
              content: {
                'application/json': {
                  schema: {
                    allOf: [
                      { $ref: '#/components/schemas/DecodedId' },
                      {
                        type: 'object',
                        required: ['publicId'],
                        properties: { publicId: { $ref: '#/components/schemas/PublicId' } },
                      },
                    ],
                  },
                },
              },
            },
            ...bad,
            '403': errorResponse(
              'Decoding is disabled because no bearer token is configured (FLURRY_E_PUBLIC_DECODE_DISABLED).',
            ),
            '404': { $ref: '#/components/responses/NotFound' },
            ...common,
          },
        },
      },
      '/api/snowflake/get/{key}': {
        get: {
          operationId: 'leafGet',
          summary:
            "Meituan Leaf compatible: one ID as bare decimal text. The key (Leaf's biz tag) is required and ignored, as in Leaf's snowflake mode.",
          parameters: [{ name: 'key', in: 'path', required: true, schema: { type: 'string', minLength: 1 } }],
          responses: {
            '200': {
              description: 'A new ID.',
              content: { 'text/plain': { schema: { $ref: '#/components/schemas/DecimalId' } } },
            },
            ...common,
            ...fenced,
          },
        },
      },
      '/decodeSnowflakeId': {
        get: {
          operationId: 'leafDecode',
          summary: "Meituan Leaf compatible decoder, honouring this service's layout and epoch.",
          parameters: [
            { name: 'snowflakeId', in: 'query', required: true, schema: { $ref: '#/components/schemas/DecimalId' } },
          ],
          responses: {
            '200': {
              description:
                "Leaf's decode body. workerId is the node fields read as one integer (datacenter<<5|worker for twitter); the date is in the server's local time zone.",
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['timestamp', 'sequenceId', 'workerId'],
                    properties: {
                      timestamp: { type: 'string', example: '1732262400000(2024-11-22 08:00:00.000)' },
                      sequenceId: { type: 'string' },
                      workerId: { type: 'string' },
                    },
                  },
                },
              },
            },
            ...bad,
            ...common,
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'healthz',
          summary: 'Liveness: 200 while the process serves requests.',
          security: [{}],
          responses: {
            '200': {
              description: 'Alive.',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
            },
            ...common,
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readyz',
          summary:
            'Readiness: 200 only while the node-ID lease is valid and the clock is sane; 503 (with the reason code) otherwise.',
          security: [{}],
          responses: {
            '200': {
              description: 'Ready.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      status: { const: 'ready' },
                      node: { type: 'object', additionalProperties: { type: 'integer' } },
                    },
                  },
                },
              },
            },
            ...common,
            ...fenced,
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus text exposition.',
          security: [{}],
          responses: {
            '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
            ...common,
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          security: [{}],
          responses: {
            '200': {
              description: 'The OpenAPI document.',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
    },
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

/**
 * The document as served: two-space indented JSON with a final newline (the same bytes as
 * docs/openapi.json).
 *
 * @example
 * ```ts
 * res.end(openApiJson());
 * ```
 */
export function openApiJson(): string {
  return JSON.stringify(openApiDocument(), null, 2) + '\n';
}

// `node dist/openapi.js` prints the document (to regenerate docs/openapi.json).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.stdout.write(openApiJson());
