/**
 * Meituan Leaf compatibility: the bodies of Leaf's snowflake HTTP endpoints.
 *
 * - `GET /api/snowflake/get/{key}` answers the bare decimal ID (Leaf ignores the key in
 *   snowflake mode; so do we).
 * - `GET /decodeSnowflakeId?snowflakeId=…` answers
 *   `{"timestamp":"<ms>(<yyyy-MM-dd HH:mm:ss.SSS>)","sequenceId":"…","workerId":"…"}`.
 *   Leaf's own decoder hard-codes Twitter's epoch and its 10-bit worker ID; this one
 *   honours the configured layout: `timestamp` is the ID's Unix ms, `sequenceId` its
 *   sequence and `workerId` the node fields read as one integer, most significant field
 *   first (for `twitter` that is `datacenter << 5 | worker`, exactly the 10 bits Leaf
 *   reports). The date is in the process's local time zone (the `TZ` variable), as
 *   Java's `SimpleDateFormat` uses the JVM's default zone.
 */
import type { DecodedId, Layout } from '@flurry/core';

/**
 * Formats Unix ms as Leaf does: `yyyy-MM-dd HH:mm:ss.SSS` in the local time zone.
 *
 * @example
 * ```ts
 * process.env.TZ = 'UTC';
 * leafDate(0); // '1970-01-01 00:00:00.000'
 * ```
 */
export function leafDate(unixMs: number): string {
  const d = new Date(unixMs);
  return (
    pad(d.getFullYear(), 4) +
    '-' +
    pad(d.getMonth() + 1, 2) +
    '-' +
    pad(d.getDate(), 2) +
    ' ' +
    pad(d.getHours(), 2) +
    ':' +
    pad(d.getMinutes(), 2) +
    ':' +
    pad(d.getSeconds(), 2) +
    '.' +
    pad(d.getMilliseconds(), 3)
  );
}

/**
 * The node fields of a decoded ID as one integer, most significant field first (Leaf's
 * `workerId`). Returned as a decimal string (it can exceed 2^53 in exotic layouts).
 *
 * @example
 * ```ts
 * leafWorkerId({ datacenter: 1, worker: 7 }, Layout.from('twitter')); // '39'
 * ```
 */
export function leafWorkerId(fields: Readonly<Record<string, number>>, layout: Layout): string {
  let acc = 0n;
  for (const f of layout.nodeFields) acc = (acc << BigInt(f.bits)) | BigInt(fields[f.name] ?? 0);
  return acc.toString();
}

/**
 * The JSON body of Leaf's `/decodeSnowflakeId` for a decoded ID.
 *
 * @example
 * ```ts
 * const layout = Layout.from('twitter');
 * leafDecodeBody(layout.decode(1n << 22n), layout);
 * ```
 */
export function leafDecodeBody(decoded: DecodedId, layout: Layout): string {
  return JSON.stringify({
    timestamp: `${decoded.unixMs}(${leafDate(decoded.unixMs)})`,
    sequenceId: String(decoded.sequence),
    workerId: leafWorkerId(decoded.fields, layout),
  });
}

function pad(n: number, width: number): string {
  const s = String(n);
  return s.length >= width ? s : '0'.repeat(width - s.length) + s;
}
