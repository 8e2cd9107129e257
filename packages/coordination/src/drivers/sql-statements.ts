/**
 * The SQL of the shared SQL registry driver, per dialect: the table probe, the namespace scan,
 * the slot read, and the conditional insert, take, renew and release (sql-common.ts says how
 * they keep "never two holders"), plus the holders listing (its rows: sql-holders.ts).
 */
import type { SqlDialect } from './sql-table.js';

/**
 * The statements of one dialect on one table (`?` placeholders; `t` already quoted). The
 * comments give each statement's parameters in order.
 */
export function registryStatements(dialect: SqlDialect, t: string) {
  const pg = dialect === 'postgres';
  const now = pg ? 'now()' : 'CURRENT_TIMESTAMP(3)';
  const plusMs = pg
    ? `now() + (?::float8 * interval '1 millisecond')`
    : 'CURRENT_TIMESTAMP(3) + INTERVAL (? * 1000) MICROSECOND';
  const big = pg ? '?::bigint' : '?';
  const bool = pg ? '?::boolean' : '?';
  const c = (name: string): string => (pg ? name : `\`${name}\``);
  const ms = (expr: string): string =>
    pg ? `(extract(epoch from ${expr}) * 1000)::float8` : `(UNIX_TIMESTAMP(${expr}) * 1000)`;
  return {
    // A namespace's live rows, times as Unix ms: slot, holder, high_water_ms, ttl_ms, now_ms, updated_ms, expires_ms.
    holders:
      `SELECT ${c('slot')} AS slot, ${c('holder')} AS holder, ${c('high_water_ms')} AS high_water_ms, ${c('ttl_ms')} AS ttl_ms, ` +
      `${ms(now)} AS now_ms, ${ms(c('updated_at'))} AS updated_ms, ${ms(c('expires_at'))} AS expires_ms ` +
      `FROM ${t} WHERE ${c('namespace')} = ? AND ${c('token')} IS NOT NULL AND ${c('expires_at')} > ${now} ORDER BY ${c('slot')}`,
    probe: `SELECT * FROM ${t} WHERE 1 = 0`,
    scan:
      `SELECT ${c('slot')} AS slot, ${c('slots')} AS slots, (${c('token')} IS NOT NULL AND ${c('expires_at')} > ${now}) AS live, ` +
      `${c('holder')} AS holder FROM ${t} WHERE ${c('namespace')} = ?`,
    readSlot:
      `SELECT ${c('slots')} AS slots, (${c('token')} IS NOT NULL AND ${c('expires_at')} > ${now}) AS live, ` +
      `${c('high_water_ms')} AS high_water_ms, ${c('released_cleanly')} AS released_cleanly, ${c('ttl_ms')} AS ttl_ms, ` +
      `${c('version')} AS version FROM ${t} WHERE ${c('namespace')} = ? AND ${c('slot')} = ?`,
    // namespace, slot, slots, token, ttl, holder, hw, ttl_ms
    insert:
      // MySQL: INSERT IGNORE: under mysql2's CLIENT_FOUND_ROWS, ON DUPLICATE KEY UPDATE reports 1 row
      // for a duplicate, so two claimers racing for a new slot both believed they had inserted it.
      `INSERT ${pg ? '' : 'IGNORE '}INTO ${t} (${['namespace', 'slot', 'slots', 'token', 'expires_at', 'holder', 'high_water_ms', 'released_cleanly', 'ttl_ms', 'version', 'updated_at'].map(c).join(', ')}) ` +
      `VALUES (?, ?, ?, ?, ${plusMs}, ?, ${big}, false, ${big}, 1, ${now}) ` +
      (pg ? 'ON CONFLICT (namespace, slot) DO NOTHING' : ''),
    // slots, token, ttl, holder, hw, ttl_ms, namespace, slot, version read
    take:
      `UPDATE ${t} SET ${c('slots')} = ?, ${c('token')} = ?, ${c('expires_at')} = ${plusMs}, ${c('holder')} = ?, ` +
      `${c('high_water_ms')} = GREATEST(${c('high_water_ms')}, ${big}), ${c('released_cleanly')} = false, ${c('ttl_ms')} = ${big}, ` +
      `${c('version')} = ${c('version')} + 1, ${c('updated_at')} = ${now} WHERE ${c('namespace')} = ? AND ${c('slot')} = ? ` +
      `AND ${c('version')} = ${big} AND (${c('token')} IS NULL OR ${c('expires_at')} <= ${now})`,
    // ttl, hw, ttl_ms, holder, namespace, slot, token
    renew:
      `UPDATE ${t} SET ${c('expires_at')} = ${plusMs}, ${c('high_water_ms')} = GREATEST(${c('high_water_ms')}, ${big}), ` +
      `${c('released_cleanly')} = false, ${c('ttl_ms')} = ${big}, ${c('holder')} = ?, ${c('version')} = ${c('version')} + 1, ${c('updated_at')} = ${now} ` +
      `WHERE ${c('namespace')} = ? AND ${c('slot')} = ? AND ${c('token')} = ? AND ${c('expires_at')} > ${now}`,
    // hw, clean, ttl_ms, namespace, slot, token
    release:
      `UPDATE ${t} SET ${c('token')} = NULL, ${c('expires_at')} = NULL, ${c('holder')} = NULL, ` +
      `${c('high_water_ms')} = GREATEST(${c('high_water_ms')}, ${big}), ${c('released_cleanly')} = ${bool}, ${c('ttl_ms')} = ${big}, ` +
      `${c('version')} = ${c('version')} + 1, ${c('updated_at')} = ${now} ` +
      `WHERE ${c('namespace')} = ? AND ${c('slot')} = ? AND ${c('token')} = ? AND ${c('expires_at')} > ${now}`,
  };
}
