/**
 * SQL for UUIDv7 columns (docs/sql.md, "UUIDv7 columns"): functions that read a UUIDv7's time, node and sequence inside
 * the database and turn times into UUID bounds (PostgreSQL `uuid`; MySQL/MariaDB `BINARY(16)` and `CHAR(36)`). Decoders
 * return NULL for what is not a v7 UUID; a time outside 0 .. 2^48 − 1 raises SQLSTATE `22008`.
 */
import { assertKnownOptions } from '../known-options.js';
import { MAX_UNIX_MS as MAX_MS, UuidFormat } from '../uuid/format.js';
import { sqlPrefix } from './ddl.js';
import { TO_MS, checkDialect, functionSet, lit, toTime, type LayoutSql, type SqlDialect } from './functions.js';

/** Options of {@link uuidSql}. */
export interface UuidSqlOptions {
  readonly dialect: SqlDialect;
  /** Prefix of every function name (as for `layoutSql`); default `flurry_`. */
  readonly prefix?: string;
  /** The cluster's UUID node width (default 16): where `uuid_node` and `uuid_sequence` read. */
  readonly nodeBits?: number;
  /** The cluster's UUID sequence width (default 22). */
  readonly sequenceBits?: number;
}

/**
 * The DDL of the UUIDv7 functions (same shape as {@link layoutSql}'s; `idType` is the column type: `uuid` or
 * `BINARY(16)`).
 *
 * Functions (prefix `flurry_`): `uuid_unix_ms(u)`, `uuid_timestamp(u)`, `uuid_node(u)`, `uuid_sequence(u)`,
 * `uuid_min_at(t)`, `uuid_max_at(t)`, `uuid_min_at_ms(ms)`, `uuid_max_at_ms(ms)`; MySQL adds
 * `uuid_unix_ms_text(CHAR(36))`, `uuid_timestamp_text(CHAR(36))`, `uuid_min_at_text(t)` and `uuid_max_at_text(t)`.
 */
export function uuidSql(options: UuidSqlOptions): LayoutSql {
  assertKnownOptions(options, ['dialect', 'prefix', 'nodeBits', 'sequenceBits'], 'uuidSql options');
  const p = sqlPrefix(options.prefix);
  const format = UuidFormat.from({
    ...(options.nodeBits === undefined ? {} : { nodeBits: options.nodeBits }),
    ...(options.sequenceBits === undefined ? {} : { sequenceBits: options.sequenceBits }),
  });
  return checkDialect(options.dialect) === 'mysql' ? mysqlUuidSql(p, format) : postgresUuidSql(p, format);
}

const widths = (f: UuidFormat): string => `nodeBits ${f.nodeBits}, sequenceBits ${f.sequenceBits}`;
const OUT_OF_RANGE = `FLURRY_E_TIME_OUT_OF_RANGE: Unix ms %s is outside what a UUIDv7 holds (0 to ${MAX_MS}, 1970-01-01T00:00:00.000Z to 10889-08-02T05:31:50.655Z). Give a time in that range.`;

function postgresUuidSql(p: string, f: UuidFormat): LayoutSql {
  const { add, done } = functionSet('postgres', p);
  // The 128 bits, most significant first; bit i of the RFC's figures is position 128 − i.
  const bits = `('x' || replace(u::text, '-', ''))::bit(128)`;
  const isV7 = `substring(b from 49 for 4) = B'0111' AND substring(b from 65 for 2) = B'10'`;
  const read = (expr: string): string => `SELECT CASE WHEN ${isV7} THEN ${expr} END FROM (SELECT ${bits} AS b) s`;
  const E = f.extBits;
  add(
    'uuid_unix_ms',
    'u uuid',
    'bigint',
    read(`substring(b from 1 for 48)::bit(48)::bigint`),
    'Unix milliseconds of a UUIDv7 (unix_ts_ms, its first 48 bits); NULL when not a v7 UUID.',
  );
  add(
    'uuid_timestamp',
    'u uuid',
    'timestamptz',
    `SELECT ${toTime('postgres', `${p}uuid_unix_ms(u)`)}`,
    'The time of a UUIDv7 (millisecond precision); NULL when not a v7 UUID.',
  );
  add(
    'uuid_node',
    'u uuid',
    'bigint',
    read(`substring(b from ${67 + E} for ${f.nodeBits})::bit(${f.nodeBits})::bigint`),
    `The Flurry node ID of a UUIDv7 (${widths(f)}); NULL when not a v7 UUID.`,
  );
  add(
    'uuid_sequence',
    'u uuid',
    'bigint',
    read(
      `(substring(b from 53 for 12)${E > 0 ? ` || substring(b from 67 for ${E})` : ''})::bit(${f.sequenceBits})::bigint`,
    ),
    `The Flurry sequence of a UUIDv7 within its millisecond (${widths(f)}); NULL when not a v7 UUID.`,
  );
  const bound = (tail: string): string => `DECLARE
  h text;
BEGIN
  IF ms < 0 OR ms > ${MAX_MS} THEN
    RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = format(${lit(OUT_OF_RANGE)}, ms);
  END IF;
  h := lpad(to_hex(ms), 12, '0');
  RETURN (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '${tail}')::uuid;
END`;
  const edges = [
    ['uuid_min_at', 'smallest', '-7000-8000-000000000000'],
    ['uuid_max_at', 'largest', '-7fff-bfff-ffffffffffff'],
  ] as const;
  for (const [name, what, tail] of edges) {
    const description = `The ${what} UUIDv7 of the Unix ms instant; SQLSTATE 22008 outside 0 .. 2^48 - 1.`;
    add(`${name}_ms`, 'ms bigint', 'uuid', bound(tail), description, 'LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE');
  }
  for (const [name, what] of edges) {
    const scan = name === 'uuid_min_at' ? `: WHERE id >= ${p}${name}(from) AND id < ${p}${name}(to).` : '.';
    const description = `The ${what} UUIDv7 of the instant t (rounded down to the ms)${scan}`;
    add(name, 't timestamptz', 'uuid', `SELECT ${p}${name}_ms(${TO_MS.postgres})`, description);
  }
  return done(
    'uuid',
    `-- Flurry SQL functions for UUIDv7 uuid columns (${widths(f)}); PostgreSQL 11+.\n` +
      `-- Generated by flurry sql --dialect postgres; see docs/sql.md.\n`,
  );
}

function mysqlUuidSql(p: string, f: UuidFormat): LayoutSql {
  const { add, done } = functionSet('mysql', p);
  const E = f.extBits;
  // Bytes 7 and 9 (1-based) hold the version and the variant; the low 64 bits are bytes 9..16.
  const isV7 = `LENGTH(u) = 16 AND (ASCII(SUBSTRING(u, 7, 1)) >> 4) = 7 AND (ASCII(SUBSTRING(u, 9, 1)) >> 6) = 2`;
  const lo = `CAST(CONV(HEX(SUBSTRING(u, 9, 8)), 16, 10) AS UNSIGNED)`;
  const randA = `(CAST(CONV(HEX(SUBSTRING(u, 7, 2)), 16, 10) AS UNSIGNED) & 4095)`;
  const when = (expr: string): string => `RETURN CASE WHEN ${isV7} THEN ${expr} END`;
  const text = `UNHEX(REPLACE(u, '-', ''))`;
  add(
    'uuid_unix_ms',
    'u BINARY(16)',
    'BIGINT',
    when(`CAST(CONV(HEX(SUBSTRING(u, 1, 6)), 16, 10) AS UNSIGNED)`),
    'Unix milliseconds of a UUIDv7 stored as BINARY(16); NULL when not a v7 UUID.',
  );
  add(
    'uuid_unix_ms_text',
    'u CHAR(36)',
    'BIGINT',
    `RETURN ${p}uuid_unix_ms(${text})`,
    'Unix milliseconds of a UUIDv7 stored as CHAR(36) text; NULL when not a v7 UUID.',
  );
  const time = (ms: string): string => `RETURN ${toTime('mysql', ms)}`;
  add(
    'uuid_timestamp',
    'u BINARY(16)',
    'DATETIME(3)',
    time(`${p}uuid_unix_ms(u)`),
    'The UTC time of a UUIDv7 stored as BINARY(16); NULL when not a v7 UUID.',
  );
  add(
    'uuid_timestamp_text',
    'u CHAR(36)',
    'DATETIME(3)',
    time(`${p}uuid_unix_ms_text(u)`),
    'The UTC time of a UUIDv7 stored as CHAR(36) text; NULL when not a v7 UUID.',
  );
  add(
    'uuid_node',
    'u BINARY(16)',
    'BIGINT',
    when(`(${lo} >> ${62 - E - f.nodeBits}) & ${2 ** f.nodeBits - 1}`),
    `The Flurry node ID of a UUIDv7 stored as BINARY(16) (${widths(f)}); NULL when not a v7 UUID.`,
  );
  add(
    'uuid_sequence',
    'u BINARY(16)',
    'BIGINT',
    when(E > 0 ? `(${randA} << ${E}) | ((${lo} >> ${62 - E}) & ${2 ** E - 1})` : randA),
    `The Flurry sequence of a UUIDv7 stored as BINARY(16) (${widths(f)}); NULL when not a v7 UUID.`,
  );
  const bound = (tail: string, asText: boolean): string => {
    const hex = `CONCAT(LPAD(HEX(ms), 12, '0'), '${tail}')`;
    const value = asText
      ? `LOWER(CONCAT(SUBSTRING(${hex}, 1, 8), '-', SUBSTRING(${hex}, 9, 4), '-', SUBSTRING(${hex}, 13, 4), '-', SUBSTRING(${hex}, 17, 4), '-', SUBSTRING(${hex}, 21, 12)))`
      : `UNHEX(${hex})`;
    return `BEGIN
  IF ms < 0 OR ms > ${MAX_MS} THEN
    BEGIN
      DECLARE msg VARCHAR(128) DEFAULT LEFT(CONCAT('FLURRY_E_TIME_OUT_OF_RANGE: ms ', ms, ' not in [0, ${MAX_MS}] (UUIDv7)'), 128);
      SIGNAL SQLSTATE '22008' SET MESSAGE_TEXT = msg;
    END;
  END IF;
  RETURN ${value};
END`;
  };
  const bounds = ['uuid_min_at', 'uuid_max_at', 'uuid_min_at_text', 'uuid_max_at_text'] as const;
  const type = (name: string): string => (name.endsWith('text') ? 'CHAR(36)' : 'BINARY(16)');
  const least = (name: string): string => (name.includes('min') ? 'smallest' : 'largest');
  for (const name of bounds) {
    const asText = name.endsWith('text');
    const what = `${least(name)} UUIDv7 (${asText ? 'canonical lowercase CHAR(36)' : 'BINARY(16)'})`;
    const tail = name.includes('min') ? '70008000000000000000' : '7FFFBFFFFFFFFFFFFFFF';
    add(`${name}_ms`, 'ms BIGINT', type(name), bound(tail, asText), `The ${what} of the Unix ms instant.`);
  }
  for (const name of bounds) {
    add(
      name,
      't DATETIME(3)',
      type(name),
      `RETURN ${p}${name}_ms(${TO_MS.mysql})`,
      `The ${least(name)} UUIDv7 (${type(name)}) of the UTC instant t (rounded down to the ms)` +
        (name.startsWith('uuid_min') ? `: WHERE id >= ${p}${name}(from) AND id < ${p}${name}(to).` : '.'),
    );
  }
  return done(
    'BINARY(16)',
    `-- Flurry SQL functions for UUIDv7 columns, BINARY(16) and CHAR(36) (${widths(f)}); MySQL 8 / MariaDB 10.5+.\n` +
      `-- Times are UTC DATETIME(3). Generated by flurry sql --dialect mysql; see docs/sql.md.\n`,
  );
}
