/**
 * Public IDs (keyed, reversible obfuscation; issue 7): `GET /v1/public-ids/next` and
 * `GET /v1/public-ids/{publicId}`. Present only when a public-ID key is configured;
 * decoding reveals the real ID, so it needs the bearer token, and is disabled when the
 * service has no token configured.
 *
 * @example
 * ```ts
 * publicNext(ctx, res, undefined); // {"publicId":"…"}
 * ```
 */
import type { ServerResponse } from 'node:http';
import { serverError } from '../../errors.js';
import type { HttpContext, PublicIds } from '../context.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../respond.js';
import { pathSegment, wantsText } from './ids.js';

function codec(ctx: HttpContext): PublicIds {
  if (ctx.publicIds === undefined) {
    throw serverError(
      'PUBLIC_IDS_DISABLED',
      'public IDs are off: start the service with a public-ID key (--public-key or FLURRY_PUBLIC_KEY; make one with "flurry key new")',
    );
  }
  return ctx.publicIds;
}

/**
 * `GET /v1/public-ids/next` → `{"publicId":"…"}`, or the bare string with `Accept: text/plain`.
 *
 * @example
 * ```ts
 * publicNext(ctx, res, 'text/plain');
 * ```
 */
export function publicNext(ctx: HttpContext, res: ServerResponse, accept: string | undefined): number {
  const p = codec(ctx).next();
  if (wantsText(accept)) return sendText(res, 200, TEXT_TYPE, p);
  return sendText(res, 200, JSON_TYPE, JSON.stringify({ publicId: p }));
}

/**
 * `GET /v1/public-ids/{publicId}` → `{"publicId","id","unixMs","timestamp","fields","sequence"}`.
 * The caller has already passed the bearer-token check. Bad input is 400 with the core's
 * code, never a wrong ID: `FLURRY_E_PUBLIC_ID_MALFORMED` (length, characters, another
 * width), `FLURRY_E_PUBLIC_ID_CHECKSUM` (a typo), `FLURRY_E_PUBLIC_ID_UNKNOWN_KEY` (key ID
 * not in the keyring), `FLURRY_E_PUBLIC_ID_WRONG_KEY` (the key of that key ID did not issue
 * it: its authentication tag does not match).
 *
 * @example
 * ```ts
 * publicDecode(ctx, res, 'C7cuyYGf9Ydxv7Tb');
 * ```
 */
export function publicDecode(ctx: HttpContext, res: ServerResponse, segment: string): number {
  const c = codec(ctx);
  if (ctx.token === undefined) {
    throw serverError(
      'PUBLIC_DECODE_DISABLED',
      'decoding public IDs reveals the real IDs, so it needs a bearer token, and this service has none: start it with --token / FLURRY_TOKEN and send "Authorization: Bearer <token>"',
    );
  }
  const publicId = pathSegment(segment);
  const id = c.decode(publicId);
  const d = ctx.layout.decode(id);
  return sendText(
    res,
    200,
    JSON_TYPE,
    JSON.stringify({
      publicId,
      id: d.id.toString(),
      unixMs: d.unixMs,
      timestamp: d.timestamp,
      fields: d.fields,
      sequence: d.sequence,
    }),
  );
}
