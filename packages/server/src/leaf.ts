// Leaf's snowflake bodies, honouring the layout where Leaf hard-codes Twitter's (docs/service-api.md#leaf-compatibility).
import type { DecodedId, Layout } from '@flurry/core';

/** Formats Unix ms as Leaf does: `yyyy-MM-dd HH:mm:ss.SSS` in the local time zone. */
export function leafDate(unixMs: number): string {
  const d = new Date(unixMs);
  const p = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${p(d.getFullYear(), 4)}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
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

/** The JSON body of Leaf's `/decodeSnowflakeId` for a decoded ID. */
export function leafDecodeBody(decoded: DecodedId, layout: Layout): string {
  return JSON.stringify({
    timestamp: `${decoded.unixMs}(${leafDate(decoded.unixMs)})`,
    sequenceId: String(decoded.sequence),
    workerId: leafWorkerId(decoded.fields, layout),
  });
}
