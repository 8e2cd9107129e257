/**
 * The ID routes: `GET /v1/ids/next`, `GET /v1/ids?count=N` and `GET /v1/ids/{id}`. IDs are
 * always decimal strings in JSON, so no client rounds them through a double.
 *
 * @example
 * ```ts
 * idsNext(ctx, res, 'text/plain'); // writes the bare decimal ID
 * ```
 */
import type { ServerResponse } from 'node:http';
import { parseId } from '@flurry/core';
import { serverError } from '../../errors.js';
import type { HttpContext } from '../context.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../respond.js';

/**
 * True when the client asked for plain text (`Accept: text/plain`, without JSON).
 *
 * @example
 * ```ts
 * wantsText('text/plain'); // true
 * wantsText('*\/*');       // false
 * ```
 */
export function wantsText(accept: string | undefined): boolean {
  return accept !== undefined && accept.indexOf('text/plain') !== -1 && accept.indexOf('json') === -1;
}

/**
 * `GET /v1/ids/next` → `{"id":"…"}`, or the bare decimal with `Accept: text/plain`.
 *
 * @example
 * ```ts
 * idsNext(ctx, res, undefined); // {"id":"1859…"}
 * ```
 */
export function idsNext(ctx: HttpContext, res: ServerResponse, accept: string | undefined): number {
  const id = ctx.nextString();
  if (accept !== undefined && wantsText(accept)) return sendAscii(res, 200, TEXT_TYPE, id);
  return sendAscii(res, 200, JSON_TYPE, '{"id":"' + id + '"}');
}

/**
 * Parses `count` from a query string: one decimal integer from 1 to `max`.
 *
 * @throws FlurryError `FLURRY_E_BATCH_COUNT` for anything else.
 * @example
 * ```ts
 * parseCount('count=100', 10_000); // 100
 * ```
 */
export function parseCount(query: string, max: number): number {
  let raw: string | null = null;
  let seen = 0;
  if (query.length > 0) {
    for (const [k, v] of new URLSearchParams(query)) {
      if (k === 'count') {
        raw = v;
        seen++;
      }
    }
  }
  const allowed = `count must be one integer from 1 to ${max}, e.g. /v1/ids?count=100`;
  if (raw === null)
    throw serverError('BATCH_COUNT', `the query parameter count is missing; ${allowed}`, { min: 1, max });
  if (seen > 1)
    throw serverError('BATCH_COUNT', `the query parameter count is given ${seen} times; ${allowed}`, { min: 1, max });
  const shown = raw.length > 24 ? raw.slice(0, 24) + '…' : raw;
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

/**
 * `GET /v1/ids?count=N` → `{"ids":["…",…]}`, N increasing IDs.
 *
 * @example
 * ```ts
 * idsBatch(ctx, res, 'count=3'); // {"ids":["…","…","…"]}
 * ```
 */
export function idsBatch(ctx: HttpContext, res: ServerResponse, query: string): number {
  const body = ctx.batchBody(parseCount(query, ctx.maxBatch));
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length });
  // 'finish': the socket has taken the bytes, so the buffer can be written again.
  res.once('finish', () => ctx.recycleBody(body));
  res.end(body);
  return 200;
}

/**
 * The JSON of a decoded ID: `{"id","unixMs","timestamp","fields":{…},"sequence"}`.
 *
 * @example
 * ```ts
 * decodedJson(ctx.layout, '1859214170478923776');
 * ```
 */
export function decodedJson(ctx: Pick<HttpContext, 'layout'>, raw: string): string {
  const id = parseId(raw, ctx.layout);
  const d = ctx.layout.decode(id);
  return JSON.stringify({
    id: d.id.toString(),
    unixMs: d.unixMs,
    timestamp: d.timestamp,
    fields: d.fields,
    sequence: d.sequence,
  });
}

/**
 * `GET /v1/ids/{id}` → the decoded ID under this service's layout; 400 for a malformed,
 * negative or too wide ID.
 *
 * @example
 * ```ts
 * idsDecode(ctx, res, '1859214170478923776');
 * ```
 */
export function idsDecode(ctx: HttpContext, res: ServerResponse, segment: string): number {
  return sendText(res, 200, JSON_TYPE, decodedJson(ctx, pathSegment(segment)));
}

/**
 * Percent-decodes one path segment.
 *
 * @throws FlurryError `FLURRY_E_BAD_REQUEST` for a malformed escape.
 * @example
 * ```ts
 * pathSegment('%31%32'); // '12'
 * ```
 */
export function pathSegment(segment: string): string {
  if (segment.indexOf('%') === -1) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw serverError(
      'BAD_REQUEST',
      'the path has a malformed percent-escape; escape "%" as %25 and use valid UTF-8 escapes',
    );
  }
}
