// SQL from a layout: functions that decode and bound IDs inside PostgreSQL or MySQL/MariaDB, bit for bit as the
// library does (docs/sql.md#the-functions: IMMUTABLE/DETERMINISTIC, SQLSTATE 22008, numeric(20,0) for 64 bits).
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions } from '../known-options.js';
import { describeRange, nonTimeMask } from '../layout/bounds.js';
import type { Layout } from '../layout/layout.js';
import { TO_MS, checkDialect, functionSet, toTime, type LayoutSql, type SqlDialect } from './functions.js';

export type { LayoutSql, SqlDialect, SqlFunction } from './functions.js';

/** Options of {@link layoutSql}. */
export interface LayoutSqlOptions {
  readonly dialect: SqlDialect;
  /** Prefix of every function name: lower-case letters, digits and `_`, starting with a letter; default `flurry_`. */
  readonly prefix?: string;
}

const PREFIX_RE = /^[a-z][a-z0-9_]{0,39}$/;
/** Function names the generated DDL uses itself (node fields may not take them). */
const RESERVED =
  'unix_ms timestamp sequence min_id max_id min_id_ms max_id_ms now_ms next_id next_ids release_node generator'.split(
    ' ',
  );

/** A checked function-name prefix (default `flurry_`), else `FLURRY_E_INVALID_OPTION`. */
export function sqlPrefix(prefix: string | undefined): string {
  const p = prefix ?? 'flurry_';
  if (typeof p !== 'string' || !PREFIX_RE.test(p)) {
    throw new FlurryError(
      ErrorCode.INVALID_OPTION,
      `The SQL prefix ${JSON.stringify(p)} is not allowed; use a lower-case letter followed by up to 39 lower-case letters, digits or _ (e.g. flurry_ or orders_).`,
      { prefix: String(p) },
    );
  }
  return p;
}

/**
 * The DDL of the decode and bound functions for `layout` (docs/sql.md#the-functions). Throws `FLURRY_E_INVALID_OPTION`
 * for an unknown dialect, a bad prefix, or a node field named like a generated function (`min_id`, `timestamp`, …).
 */
export function layoutSql(layout: Layout, options: LayoutSqlOptions): LayoutSql {
  assertKnownOptions(options, ['dialect', 'prefix'], 'layoutSql options');
  const dialect = checkDialect(options?.dialect);
  const p = sqlPrefix(options.prefix);
  for (const f of layout.nodeFields) {
    if (RESERVED.includes(f.name.toLowerCase()) || f.name.toLowerCase().startsWith('uuid_')) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `The node field ${f.name} would be decoded by a function named ${p}${f.name.toLowerCase()}, which the generated SQL uses for something else (${RESERVED.join(', ')}, uuid_…); rename the field.`,
        { field: f.name },
      );
    }
  }
  // The same functions, types and descriptions in both dialects.
  const [epochIso, expiresIso] = [new Date(layout.epochMs).toISOString(), layout.expiresAt.toISOString()];
  const pg = dialect === 'postgres';
  const wide = pg && layout.totalBits === 64;
  const idType = pg ? (wide ? 'numeric(20,0)' : 'bigint') : 'BIGINT UNSIGNED';
  const [big, int, time, utc, ret] = pg
    ? ['bigint', 'integer', 'timestamptz', '', 'SELECT ']
    : ['BIGINT', 'INT', 'DATETIME(3)', 'UTC ', 'RETURN '];
  const { add, done } = functionSet(dialect, p);
  /** `(id >> shift) & mask` on the ID type. */
  const field = (shift: number, bits: number): string =>
    wide
      ? `mod(div(id, ${1n << BigInt(shift)}), ${1n << BigInt(bits)})`
      : `((id >> ${shift}) & ${(1n << BigInt(bits)) - 1n})`;
  const note = `layout ${layout.name} (${layout.toFieldsString()}, epoch ${epochIso}, unit ${layout.unit})`;
  const id = `id ${idType}`;
  const unixMs = `${layout.epochMs} + ${field(layout.timestampField.shift, layout.timestampBits)} * ${layout.unitMs}`;
  const tick = `(the start of its tick) under the ${note}.`;
  add('unix_ms', id, big, pg ? `SELECT (${unixMs})::bigint` : `RETURN ${unixMs}`, `Unix milliseconds of an ID ${tick}`);
  add('timestamp', id, time, ret + toTime(dialect, `${p}unix_ms(id)`), `The ${utc}time of an ID ${tick}`);
  // The node fields, then the sequence (at most 30 bits, so an integer).
  for (const f of [...layout.nodeFields, layout.sequenceField]) {
    const t = f.bits <= 31 ? int : big;
    const what = f.kind === 'node' ? `${f.name} node field` : 'sequence';
    const about = `The ${what} (${f.bits} bits at bit ${f.shift}) of an ID under the ${note}.`;
    add(f.name.toLowerCase(), id, t, `${ret}${field(f.shift, f.bits)}${pg ? `::${t}` : ''}`, about);
  }
  add(
    'min_id_ms',
    `ms ${big}`,
    idType,
    minIdMsBody(layout, pg, wide, epochIso, expiresIso),
    `The smallest ID of the Unix ms instant (rounded down to the unit) under the ${note}; SQLSTATE 22008 outside ${epochIso} .. ${expiresIso}.`,
    'LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE',
  );
  add(
    'max_id_ms',
    `ms ${big}`,
    idType,
    `${ret}${p}min_id_ms(ms) ${wide ? '+' : '|'} ${nonTimeMask(layout)}`,
    `The largest ID of the Unix ms instant (every field but the timestamp all ones) under the ${note}.`,
  );
  for (const name of ['min_id', 'max_id'] as const) {
    const what = name === 'min_id' ? 'smallest' : 'largest';
    const scan = name === 'min_id' ? `: WHERE id >= ${p}min_id(from) AND id < ${p}min_id(to).` : '.';
    const description = `The ${what} ID of the ${utc}instant t (rounded down to the unit) under the ${note}${scan}`;
    add(name, `t ${time}`, idType, `${ret}${p}${name}_ms(${TO_MS[dialect]})`, description);
  }
  return done(
    idType,
    pg
      ? `-- Flurry SQL functions for the ${note}; PostgreSQL 11+.\n` +
          `-- IDs are ${idType}. Generated by flurry sql --dialect postgres; see docs/sql.md.\n`
      : `-- Flurry SQL functions for the ${note}; MySQL 8 / MariaDB 10.5+.\n` +
          `-- IDs are ${idType}; times are UTC DATETIME(3). Generated by flurry sql --dialect mysql; see docs/sql.md.\n`,
  );
}

/** The body of `min_id_ms`: the range check (SQLSTATE 22008) and the tick shifted into place. */
function minIdMsBody(layout: Layout, pg: boolean, wide: boolean, epochIso: string, expiresIso: string): string {
  const { epochMs: epoch, unitMs: unit } = layout;
  const [expires, shift] = [layout.expiresAt.getTime(), layout.timestampField.shift];
  const shiftTick = wide ? `tick::numeric * ${1n << BigInt(shift)}` : `tick << ${shift}`;
  // MySQL's SIGNAL MESSAGE_TEXT holds 128 characters: the code, the time and the allowed range.
  return pg
    ? `DECLARE
  tick bigint;
BEGIN
  IF ms < ${epoch} OR ms >= ${expires} THEN
    RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = format(
      'FLURRY_E_TIME_OUT_OF_RANGE: Unix ms %s is %s; the ${layout.name} layout holds times from ${describeRange(layout)}. Give a time in that range.',
      ms, CASE WHEN ms < ${epoch} THEN 'before the layout''s epoch' ELSE 'past the layout''s end of life' END);
  END IF;
  tick := (ms - ${epoch}) / ${unit};
  RETURN ${shiftTick};
END`
    : `BEGIN
  IF ms < ${epoch} OR ms >= ${expires} THEN
    BEGIN
      DECLARE msg VARCHAR(128) DEFAULT LEFT(CONCAT('FLURRY_E_TIME_OUT_OF_RANGE: ms ', ms, ' not in [${epochIso}, ${expiresIso})'), 128);
      SIGNAL SQLSTATE '22008' SET MESSAGE_TEXT = msg;
    END;
  END IF;
  RETURN CAST((ms - ${epoch}) DIV ${unit} AS UNSIGNED) << ${shift};
END`;
}
