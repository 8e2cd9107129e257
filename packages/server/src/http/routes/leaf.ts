/**
 * Meituan Leaf's snowflake endpoints, so Leaf clients work unchanged:
 * `GET /api/snowflake/get/{key}` → the bare decimal ID as text, and
 * `GET /decodeSnowflakeId?snowflakeId=…` → Leaf's JSON, honouring this service's layout and
 * epoch (see ../../leaf.ts).
 *
 * @example
 * ```ts
 * leafGet(ctx, res, 'order');
 * ```
 */
import type { ServerResponse } from 'node:http';
import { parseId } from '@flurry/core';
import { serverError } from '../../errors.js';
import { leafDecodeBody } from '../../leaf.js';
import type { HttpContext } from '../context.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../respond.js';

/**
 * `GET /api/snowflake/get/{key}`: the key (Leaf's biz tag) is required (an empty one is
 * 404) but, as in Leaf's snowflake mode, does not change the ID.
 *
 * @example
 * ```ts
 * leafGet(ctx, res, 'leaf-segment-test'); // "1859214170478923776"
 * ```
 */
export function leafGet(ctx: HttpContext, res: ServerResponse, key: string): number {
  void key; // Leaf's snowflake mode ignores the key too; the router guarantees it is non-empty.
  return sendAscii(res, 200, TEXT_TYPE, ctx.nextString());
}

/**
 * `GET /decodeSnowflakeId?snowflakeId=…`.
 *
 * @example
 * ```ts
 * leafDecode(ctx, res, 'snowflakeId=1859214170478923776');
 * ```
 */
export function leafDecode(ctx: HttpContext, res: ServerResponse, query: string): number {
  let raw: string | null = null;
  let seen = 0;
  if (query.length > 0) {
    for (const [k, v] of new URLSearchParams(query)) {
      if (k === 'snowflakeId') {
        raw = v;
        seen++;
      }
    }
  }
  if (raw === null || seen !== 1) {
    throw serverError(
      'QUERY',
      `give the ID to decode once as the query parameter snowflakeId, e.g. /decodeSnowflakeId?snowflakeId=1859214170478923776${seen > 1 ? ` (it was given ${seen} times)` : ''}`,
    );
  }
  const id = parseId(raw, ctx.layout);
  return sendText(res, 200, JSON_TYPE, leafDecodeBody(ctx.layout.decode(id), ctx.layout));
}
