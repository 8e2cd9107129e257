/**
 * `holders()` of the SQL registries: one `SELECT` of a namespace's live rows with the server's
 * `now()` (timing: docs/node-ids.md, "Listing holders").
 */
import type { HolderInfo, HolderRecord } from '../driver.js';
import { jsonObject } from './common.js';
import type { SqlDialect } from './sql-table.js';

/**
 * The `SELECT` of one namespace's live rows (one `?` placeholder: the namespace), with times as
 * Unix ms: `slot, holder, high_water_ms, ttl_ms, now_ms, updated_ms, expires_ms`.
 */
export function holdersStatement(dialect: SqlDialect, table: string): string {
  const pg = dialect === 'postgres';
  const c = (name: string): string => (pg ? name : `\`${name}\``);
  const now = pg ? 'now()' : 'CURRENT_TIMESTAMP(3)';
  const ms = (expr: string): string =>
    pg ? `(extract(epoch from ${expr}) * 1000)::float8` : `(UNIX_TIMESTAMP(${expr}) * 1000)`;
  return (
    `SELECT ${c('slot')} AS slot, ${c('holder')} AS holder, ${c('high_water_ms')} AS high_water_ms, ${c('ttl_ms')} AS ttl_ms, ` +
    `${ms(now)} AS now_ms, ${ms(c('updated_at'))} AS updated_ms, ${ms(c('expires_at'))} AS expires_ms ` +
    `FROM ${table} WHERE ${c('namespace')} = ? AND ${c('token')} IS NOT NULL AND ${c('expires_at')} > ${now} ORDER BY ${c('slot')}`
  );
}

/** One row of {@link holdersStatement} as a {@link HolderRecord}. */
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
