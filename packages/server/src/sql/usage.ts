/**
 * How to use the in-database generator for a table's key, as `flurry sql --generate` prints
 * it: statements that work as written on each engine. PostgreSQL takes a function call as a
 * column `DEFAULT`; MySQL and MariaDB refuse a stored function there (MariaDB: ERROR 1901
 * "Function or expression … cannot be used in the DEFAULT clause"), so there a
 * `BEFORE INSERT` trigger fills the key (a key given explicitly is kept). See docs/sql.md.
 */
import type { LayoutSql } from '@flurry/core';

/**
 * The statements that create an example table `table` (default `t`) whose `id` comes from
 * the generator, for the dialect, prefix and ID type of `sql`.
 */
export function generatorUsage(sql: Pick<LayoutSql, 'dialect' | 'prefix' | 'idType'>, table = 't'): string[] {
  if (sql.dialect === 'postgres')
    return [`CREATE TABLE ${table} (id ${sql.idType} PRIMARY KEY DEFAULT ${sql.prefix}next_id(), body text)`];
  return [
    `CREATE TABLE ${table} (id ${sql.idType} NOT NULL DEFAULT 0 PRIMARY KEY, body TEXT)`,
    `CREATE TRIGGER ${table}_${sql.prefix}id BEFORE INSERT ON ${table} FOR EACH ROW SET NEW.id = COALESCE(NULLIF(NEW.id, 0), ${sql.prefix}next_id())`,
  ];
}

/**
 * The comment lines `flurry sql --generate` prints about using the generator: the example
 * statements (one a line, after `--   `) and how to free the node.
 */
export function usageComment(sql: Pick<LayoutSql, 'dialect' | 'prefix' | 'idType'>): string {
  const how =
    sql.dialect === 'postgres'
      ? '-- Use: a column DEFAULT, e.g. for a table t:\n'
      : '-- Use: a BEFORE INSERT trigger (MySQL/MariaDB take no stored function in a DEFAULT), e.g. for a table t:\n';
  return (
    how +
    generatorUsage(sql)
      .map((s) => `--   ${s};\n`)
      .join('') +
    `-- Free the node: SELECT ${sql.prefix}release_node();  or  flurry sql --release --registry URL` +
    (sql.prefix === 'flurry_' ? '' : ` --prefix ${sql.prefix}`) +
    '\n'
  );
}
