// Pieces of OpenAPI operations shared by the route declarations.

export const errorResponse = (description: string, headers?: Record<string, unknown>): Record<string, unknown> => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** Responses any route can give: 401, 405, 413, 414. */
export const COMMON = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  '405': { $ref: '#/components/responses/MethodNotAllowed' },
  '413': { $ref: '#/components/responses/BodyTooLarge' },
  '414': { $ref: '#/components/responses/UrlTooLong' },
} as const;

/** {@link COMMON} and the 503 of routes that issue IDs or report readiness. */
export const FENCED = { ...COMMON, '503': { $ref: '#/components/responses/Unavailable' } } as const;

/** The 400 of routes that read input. */
export const BAD = { '400': { $ref: '#/components/responses/BadRequest' } } as const;

/** The 404 of the public-ID routes (public IDs off). */
export const NOT_FOUND = { '404': { $ref: '#/components/responses/NotFound' } } as const;

/** The `200` of a route that answers JSON: `schema`, and an `example` when given. */
export const jsonOk = (description: string, schema: unknown, example?: unknown): Record<string, unknown> => ({
  '200': { description, content: { 'application/json': example === undefined ? { schema } : { schema, example } } },
});

/** A parameter object; `required` and `description` only when given (the document's key order). */
export const param = (
  where: 'query' | 'path',
  name: string,
  required: boolean | undefined,
  schema: unknown,
  description?: string,
): Record<string, unknown> => ({
  name,
  in: where,
  ...(required === undefined ? {} : { required }),
  ...(description === undefined ? {} : { description }),
  schema,
});

/** The `count` of a batch route: `what` names the items, e.g. `IDs`. */
export const countParam = (what: string): Record<string, unknown> =>
  param(
    'query',
    'count',
    true,
    { type: 'integer', minimum: 1, maximum: 10000 },
    `How many ${what}: an integer from 1 to the configured maximum (maxBatch, default 10000).`,
  );

/** The `200` of a route that issues one value: `{"<key>": value}`, or the bare value with `Accept: text/plain`. */
export const oneOk = (
  description: string,
  key: string,
  schema: unknown,
  example?: string,
): Record<string, unknown> => ({
  '200': {
    description,
    content: {
      'application/json': {
        schema: { type: 'object', required: [key], properties: { [key]: schema } },
        ...(example === undefined ? {} : { example: { [key]: example } }),
      },
      'text/plain': example === undefined ? { schema } : { schema, example },
    },
  },
});
