/** The SQL registry table (also `flurry sql`'s lease table): DDL, quoting, statements (docs/node-ids.md, "`postgres://` and `mysql://`"). */
import { quoteSqlTable, validTableName, type SqlDialect } from '@flurry/core';
import type { HolderInfo, HolderRecord } from '../driver.js';
import { registryError } from '../errors.js';
import { jsonObject } from './common.js';

export { validTableName, type SqlDialect } from '@flurry/core';

/** The registry table's name when the URL gives no `?table=`. */
export const DEFAULT_REGISTRY_TABLE = 'flurry_nodes';

/** The registry table's columns, in order, with their types in PostgreSQL and in MySQL. */
const COLUMN_TYPES = {
  namespace: ['varchar(255) NOT NULL', 'VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL'],
  slot: ['integer NOT NULL CHECK (slot >= 0)', 'INT NOT NULL'],
  slots: ['integer NOT NULL DEFAULT 0', 'INT NOT NULL DEFAULT 0'],
  token: ['varchar(64) NULL', 'VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL'],
  expires_at: ['timestamptz(3) NULL', 'TIMESTAMP(3) NULL DEFAULT NULL'],
  holder: ['text NULL', 'TEXT NULL'],
  high_water_ms: ['bigint NOT NULL DEFAULT 0', 'BIGINT NOT NULL DEFAULT 0'],
  released_cleanly: ['boolean NOT NULL DEFAULT true', 'BOOLEAN NOT NULL DEFAULT TRUE'],
  ttl_ms: ['bigint NOT NULL DEFAULT 0', 'BIGINT NOT NULL DEFAULT 0'],
  version: ['bigint NOT NULL DEFAULT 0', 'BIGINT NOT NULL DEFAULT 0'],
  updated_at: ['timestamptz(3) NOT NULL DEFAULT now()', 'TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)'],
} as const;

/** The columns of the registry table, in order (the drivers check that an existing table has them all). */
export const REGISTRY_COLUMNS = Object.keys(COLUMN_TYPES) as readonly (keyof typeof COLUMN_TYPES)[];

/** Quotes a table name for the dialect; `FLURRY_E_REGISTRY_URL` for an invalid one. */
export function quoteTable(dialect: SqlDialect, table: string): string {
  if (!validTableName(table)) {
    throw registryError(
      'URL_INVALID',
      `the registry table name "${String(table)}" is invalid: use letters, digits and "_" (not starting with a digit, ` +
        `at most 63 characters), optionally prefixed by a schema: flurry_nodes or ops.flurry_nodes`,
      { table },
    );
  }
  return quoteSqlTable(dialect, table);
}

/** The `CREATE TABLE IF NOT EXISTS` statement of the registry table; `FLURRY_E_REGISTRY_URL` for an invalid name. */
export function registryTableDdl(dialect: SqlDialect, table: string): string {
  const t = quoteTable(dialect, table);
  const pg = dialect === 'postgres';
  const c = (name: string): string => (pg ? name : `\`${name}\``);
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (`,
    ...REGISTRY_COLUMNS.map((name) => `  ${c(name)} ${COLUMN_TYPES[name][pg ? 0 : 1]},`),
    `  PRIMARY KEY (${c('namespace')}, ${c('slot')})`,
    pg ? ')' : ') ENGINE=InnoDB',
  ].join('\n');
}

/** The statements of one dialect on quoted table `t` (`?` placeholders, in the order each comment gives). */
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
      `INSERT ${pg ? '' : 'IGNORE '}INTO ${t} (${REGISTRY_COLUMNS.map(c).join(', ')}) ` +
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
