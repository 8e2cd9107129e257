/**
 * The registry table of the SQL registries (also the lease table of `flurry sql`'s
 * `flurry_next_id()`): its DDL per dialect, the table-name rule and quoting. The columns:
 * docs/node-ids.md ("`postgres://` and `mysql://`").
 */
import { quoteSqlTable, validTableName, type SqlDialect } from '@flurry/core';
import { registryError } from '../errors.js';

export { validTableName, type SqlDialect } from '@flurry/core';

/** The registry table's name when the URL gives no `?table=`. */
export const DEFAULT_REGISTRY_TABLE = 'flurry_nodes';

/**
 * The columns of the registry table, in order (the drivers check that an existing table has
 * them all).
 */
export const REGISTRY_COLUMNS = [
  'namespace',
  'slot',
  'slots',
  'token',
  'expires_at',
  'holder',
  'high_water_ms',
  'released_cleanly',
  'ttl_ms',
  'version',
  'updated_at',
] as const;

/**
 * Quotes a (valid) table name for the dialect: `"ops"."flurry_nodes"` or `` `ops`.`flurry_nodes` ``.
 * Throws `FLURRY_E_REGISTRY_URL` for an invalid name.
 */
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

/**
 * The `CREATE TABLE IF NOT EXISTS` statement of the registry table (run on first use, or by
 * `flurry registry init URL`); `FLURRY_E_REGISTRY_URL` for an invalid table name.
 */
export function registryTableDdl(dialect: SqlDialect, table: string): string {
  const t = quoteTable(dialect, table);
  if (dialect === 'postgres') {
    return [
      `CREATE TABLE IF NOT EXISTS ${t} (`,
      `  namespace varchar(255) NOT NULL,`,
      `  slot integer NOT NULL CHECK (slot >= 0),`,
      `  slots integer NOT NULL DEFAULT 0,`,
      `  token varchar(64) NULL,`,
      `  expires_at timestamptz(3) NULL,`,
      `  holder text NULL,`,
      `  high_water_ms bigint NOT NULL DEFAULT 0,`,
      `  released_cleanly boolean NOT NULL DEFAULT true,`,
      `  ttl_ms bigint NOT NULL DEFAULT 0,`,
      `  version bigint NOT NULL DEFAULT 0,`,
      `  updated_at timestamptz(3) NOT NULL DEFAULT now(),`,
      `  PRIMARY KEY (namespace, slot)`,
      `)`,
    ].join('\n');
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (`,
    '  `namespace` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,',
    '  `slot` INT NOT NULL,',
    '  `slots` INT NOT NULL DEFAULT 0,',
    '  `token` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,',
    '  `expires_at` TIMESTAMP(3) NULL DEFAULT NULL,',
    '  `holder` TEXT NULL,',
    '  `high_water_ms` BIGINT NOT NULL DEFAULT 0,',
    '  `released_cleanly` BOOLEAN NOT NULL DEFAULT TRUE,',
    '  `ttl_ms` BIGINT NOT NULL DEFAULT 0,',
    '  `version` BIGINT NOT NULL DEFAULT 0,',
    '  `updated_at` TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),',
    '  PRIMARY KEY (`namespace`, `slot`)',
    ') ENGINE=InnoDB',
  ].join('\n');
}
