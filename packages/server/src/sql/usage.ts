// MySQL and MariaDB refuse a stored function in a column DEFAULT (MariaDB ERROR 1901), so there a
// BEFORE INSERT trigger fills the key; PostgreSQL takes the call as the DEFAULT.
import type { LayoutSql } from '@flurry/core';

/**
 * The comment lines `flurry sql --generate` prints about using the generator: the statements that create
 * an example table `t` whose `id` comes from it (one a line, after `--   `) and how to free the node.
 */
export function usageComment(sql: Pick<LayoutSql, 'dialect' | 'prefix' | 'idType'>): string {
  const p = sql.prefix;
  const [how, ...statements] =
    sql.dialect === 'postgres'
      ? [
          '-- Use: a column DEFAULT, e.g. for a table t:\n',
          `CREATE TABLE t (id ${sql.idType} PRIMARY KEY DEFAULT ${p}next_id(), body text)`,
        ]
      : [
          '-- Use: a BEFORE INSERT trigger (MySQL/MariaDB take no stored function in a DEFAULT), e.g. for a table t:\n',
          `CREATE TABLE t (id ${sql.idType} NOT NULL DEFAULT 0 PRIMARY KEY, body TEXT)`,
          `CREATE TRIGGER t_${p}id BEFORE INSERT ON t FOR EACH ROW SET NEW.id = COALESCE(NULLIF(NEW.id, 0), ${p}next_id())`,
        ];
  return (
    how +
    statements.map((s) => `--   ${s};\n`).join('') +
    `-- Free the node: SELECT ${p}release_node();  or  flurry sql --release --registry URL` +
    (p === 'flurry_' ? '' : ` --prefix ${p}`) +
    '\n'
  );
}
