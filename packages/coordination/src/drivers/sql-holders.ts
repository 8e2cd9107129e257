/**
 * `holders()` of the SQL registries: one `SELECT` of a namespace's live rows with the server's
 * `now()` (timing: docs/node-ids.md, "Listing holders").
 */
import type { HolderInfo, HolderRecord } from '../driver.js';
import { jsonObject } from './common.js';

/** One row of the `holders` statement (sql-statements.ts) as a {@link HolderRecord}. */
export function holderFromRow(row: Record<string, unknown>): HolderRecord {
  type Stored = HolderInfo & { since: unknown; renewedAtMs: unknown; ttlMs: unknown };
  const h = (
    typeof row.holder === 'object' && row.holder ? row.holder : jsonObject(String(row.holder))
  ) as Partial<Stored>;
  const { since, renewedAtMs, ttlMs: _ttl, ...holder } = h;
  const now = Number(row.now_ms);
  const updated = Number(row.updated_ms);
  const expires = Number(row.expires_ms);
  const claimed = typeof since === 'string' ? Date.parse(since) : NaN;
  return {
    slot: Number(row.slot),
    holder,
    heldSinceMs: Number.isFinite(claimed) ? claimed : null,
    renewedAtMs: typeof renewedAtMs === 'number' ? renewedAtMs : null,
    sinceRenewalMs: Number.isFinite(now - updated) ? Math.max(0, Math.round(now - updated)) : null,
    sinceRenewalErrorMs: 1,
    expiresInMs: Number.isFinite(expires - now) ? Math.max(0, Math.round(expires - now)) : null,
    ttlMs: row.ttl_ms === null || row.ttl_ms === undefined ? null : Number(row.ttl_ms),
    highWaterMs: Number(row.high_water_ms) || 0,
  };
}
