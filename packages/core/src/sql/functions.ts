// What the generated SQL of every kind shares: the dialects, one function's entry and statements, the script for the
// dialect's client, SQL literals and time conversions.
import { ErrorCode, FlurryError } from '../errors.js';

/** The SQL dialects DDL is generated for (`mysql` covers MySQL 8 and MariaDB 10.5+). */
export type SqlDialect = 'postgres' | 'mysql';

/** One generated SQL function. */
export interface SqlFunction {
  readonly name: string;
  readonly signature: string;
  readonly returns: string;
  readonly description: string;
}

/** The DDL of a layout's functions: each statement alone (for a driver) and as a script (`psql -f`, `mysql <`). */
export interface LayoutSql {
  readonly dialect: SqlDialect;
  readonly prefix: string;
  /** The SQL type IDs are taken and returned as (`bigint`, `numeric(20,0)` or `BIGINT UNSIGNED`). */
  readonly idType: string;
  readonly functions: readonly SqlFunction[];
  readonly statements: readonly string[];
  readonly script: string;
}

/** Refuses a dialect other than `postgres` or `mysql`. */
export function checkDialect(dialect: unknown): SqlDialect {
  if (dialect !== 'postgres' && dialect !== 'mysql') {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `Unknown SQL dialect ${JSON.stringify(dialect)}; use postgres or mysql (mysql covers MariaDB too).`,
      { dialect: String(dialect) },
    );
  }
  return dialect;
}

/** A string literal of SQL (quotes doubled). */
export const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** One generated function's entry: `<prefix><name>(args)`. */
export const sqlFn = (p: string, name: string, args: string, returns: string, description: string): SqlFunction => ({
  name: p + name,
  signature: `${p}${name}(${args})`,
  returns,
  description,
});

/** Unix ms of the time `t` (PostgreSQL `timestamptz`, -1 when not finite; MySQL `DATETIME(3)` read as UTC). */
export const TO_MS: Readonly<Record<SqlDialect, string>> = {
  postgres: `CASE WHEN isfinite(t) THEN floor(extract(epoch FROM t) * 1000)::bigint ELSE -1 END`,
  mysql: `FLOOR(TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', t) / 1000)`,
};

/** The time of the Unix ms expression `ms` (PostgreSQL `timestamptz`, MySQL `DATETIME(3)` in UTC). */
export const toTime = (dialect: SqlDialect, ms: string): string =>
  dialect === 'postgres'
    ? `to_timestamp(${ms}::double precision / 1000)`
    : `TIMESTAMPADD(MICROSECOND, ${ms} * 1000, TIMESTAMP'1970-01-01 00:00:00')`;

/** The script of `statements` for the dialect's command-line client, after the `--` comment `header`. */
export function sqlScript(dialect: SqlDialect, header: string, statements: readonly string[]): string {
  return dialect === 'postgres'
    ? header + statements.map((s) => s + ';\n').join('\n')
    : `${header}DELIMITER $$\n${statements.map((s) => s + ' $$\n').join('\n')}DELIMITER ;\n`;
}

/** The functions of one `layoutSql` or `uuidSql` result: `add` declares one, `done` returns them with the script. */
export function functionSet(dialect: SqlDialect, p: string) {
  const functions: SqlFunction[] = [];
  const statements: string[] = [];
  const add = (
    name: string,
    args: string,
    returns: string,
    body: string,
    description: string,
    lang = 'LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE',
  ): void => {
    functions.push(sqlFn(p, name, args, returns, description));
    if (dialect === 'postgres') {
      statements.push(
        `CREATE OR REPLACE FUNCTION ${p}${name}(${args}) RETURNS ${returns}\n${lang} AS $flurry$\n${body}\n$flurry$`,
        `COMMENT ON FUNCTION ${p}${name}(${args.replace(/\w+ /g, '')}) IS ${lit(description)}`,
      );
    } else {
      statements.push(
        `DROP FUNCTION IF EXISTS ${p}${name}`,
        `CREATE FUNCTION ${p}${name}(${args}) RETURNS ${returns}\nDETERMINISTIC NO SQL COMMENT ${lit(description.slice(0, 1024))}\n${body}`,
      );
    }
  };
  const done = (idType: string, header: string): LayoutSql => ({
    dialect,
    prefix: p,
    idType,
    functions,
    statements,
    script: sqlScript(dialect, header, statements),
  });
  return { add, done };
}
