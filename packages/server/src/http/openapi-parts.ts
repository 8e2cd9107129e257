/**
 * Pieces of OpenAPI operations shared by the route declarations (responses every route
 * can give). The document itself is assembled in `../openapi.ts`.
 */

/** An error response object with an optional headers object. */
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

/** The 503 of routes that issue IDs or report readiness. */
export const FENCED = { '503': { $ref: '#/components/responses/Unavailable' } } as const;

/** The 400 of routes that read input. */
export const BAD = { '400': { $ref: '#/components/responses/BadRequest' } } as const;

/** The 404 of the public-ID routes (public IDs off). */
export const NOT_FOUND = { '404': { $ref: '#/components/responses/NotFound' } } as const;

/** The `200` of a route that answers JSON: `schema`, and an `example` when given. */
export const jsonOk = (description: string, schema: unknown, example?: unknown): Record<string, unknown> => ({
  '200': { description, content: { 'application/json': example === undefined ? { schema } : { schema, example } } },
});
