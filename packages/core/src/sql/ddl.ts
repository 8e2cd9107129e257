/**
 * SQL from a layout: DDL for functions that decode and bound IDs inside PostgreSQL or MySQL/MariaDB, generated from
 * a {@link Layout} so that the database and the library agree bit for bit (`IMMUTABLE` / `DETERMINISTIC`; a time
 * outside the layout's life raises SQLSTATE `22008`). PostgreSQL stores 64-bit layouts as `numeric(20,0)`. See
 * docs/sql.md.
 */
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions } from '../known-options.js';
import type { Layout } from '../layout/layout.js';
import { TO_MS, checkDialect, functionSet, mysqlTime, type LayoutSql, type SqlDialect } from './functions.js';

export type { LayoutSql, SqlDialect, SqlFunction } from './functions.js';

/** Options of {@link layoutSql}. */
export interface LayoutSqlOptions {
  readonly dialect: SqlDialect;
  /** Prefix of every function name: lower-case letters, digits and `_`, starting with a letter; default `flurry_`. */
  readonly prefix?: string;
}

const PREFIX_RE = /^[a-z][a-z0-9_]{0,39}$/;
/** Function names the generated DDL uses itself (node fields may not take them). */
const RESERVED = [
  'unix_ms',
  'timestamp',
  'sequence',
  'min_id',
  'max_id',
  'min_id_ms',
  'max_id_ms',
  'now_ms',
  'next_id',
  'next_ids',
  'release_node',
  'generator',
];

/**
 * Checks a function-name prefix and returns it (default `flurry_`). Throws
 * `FLURRY_E_INVALID_OPTION` for anything but a lower-case SQL identifier start.
 *
 * @example `sqlPrefix(undefined) === 'flurry_'`
 */
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

/** Facts about the layout the generators of both dialects need, as SQL literals. */
interface Facts {
  epoch: string;
  expires: string;
  unit: string;
  tsShift: number;
  tsMask: bigint;
  maxTick: string;
  nonTime: bigint;
  range: string;
  epochIso: string;
  expiresIso: string;
}

function factsOf(layout: Layout): Facts {
  const ts = layout.timestampField;
  const tsMask = (1n << BigInt(ts.bits)) - 1n;
  const epochIso = new Date(layout.epochMs).toISOString();
  const expiresIso = layout.expiresAt.toISOString();
  return {
    epoch: String(layout.epochMs),
    expires: String(layout.expiresAt.getTime()),
    unit: String(layout.unitMs),
    tsShift: ts.shift,
    tsMask,
    maxTick: String(layout.maxTick),
    nonTime: layout.maxId & ~(tsMask << BigInt(ts.shift)),
    range: `${epochIso} (Unix ms ${layout.epochMs}, the epoch) up to, not including, ${expiresIso} (Unix ms ${layout.expiresAt.getTime()}, its end of life)`,
    epochIso,
    expiresIso,
  };
}

/**
 * The DDL of the decode and bound functions for `layout` (see the module comment).
 * Throws `FLURRY_E_INVALID_OPTION` for an unknown dialect, a bad prefix, or a node field
 * whose name would collide with a generated function (`min_id`, `timestamp`, …).
 *
 * Functions (prefix `flurry_`, `ID` the dialect's ID type): `flurry_unix_ms(ID)`,
 * `flurry_timestamp(ID)`, `flurry_<field>(ID)` per node field, `flurry_sequence(ID)`,
 * `flurry_min_id(t)`, `flurry_max_id(t)` (`timestamptz` / `DATETIME(3)` read as UTC) and
 * `flurry_min_id_ms(ms)`, `flurry_max_id_ms(ms)`.
 *
 * @example
 * ```ts
 * layoutSql(Layout.from('sonyflake'), { dialect: 'mysql', prefix: 'sf_' }).script;
 * ```
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
  return dialect === 'postgres' ? postgresSql(layout, p) : mysqlSql(layout, p);
}

function postgresSql(layout: Layout, p: string): LayoutSql {
  const x = factsOf(layout);
  const wide = layout.totalBits === 64;
  const idType = wide ? 'numeric(20,0)' : 'bigint';
  const { add, done } = functionSet('postgres', p);
  /** `(id >> shift) & mask` on the ID type. */
  const field = (shift: number, bits: number): string =>
    wide
      ? `mod(div(id, ${1n << BigInt(shift)}), ${1n << BigInt(bits)})`
      : `((id >> ${shift}) & ${(1n << BigInt(bits)) - 1n})`;
  const layoutNote = `layout ${layout.name} (${layout.toFieldsString()}, epoch ${x.epochIso}, unit ${layout.unit})`;
  add(
    'unix_ms',
    `id ${idType}`,
    'bigint',
    `SELECT (${x.epoch} + ${field(x.tsShift, layout.timestampBits)} * ${x.unit})::bigint`,
    `Unix milliseconds of an ID (the start of its tick) under the ${layoutNote}.`,
  );
  add(
    'timestamp',
    `id ${idType}`,
    'timestamptz',
    `SELECT to_timestamp(${p}unix_ms(id)::double precision / 1000)`,
    `The time of an ID (the start of its tick) under the ${layoutNote}.`,
  );
  for (const f of layout.nodeFields) {
    const t = f.bits <= 31 ? 'integer' : 'bigint';
    add(
      f.name.toLowerCase(),
      `id ${idType}`,
      t,
      `SELECT ${field(f.shift, f.bits)}::${t}`,
      `The ${f.name} node field (${f.bits} bits at bit ${f.shift}) of an ID under the ${layoutNote}.`,
    );
  }
  add(
    'sequence',
    `id ${idType}`,
    'integer',
    `SELECT ${field(layout.sequenceField.shift, layout.sequenceBits)}::integer`,
    `The sequence (${layout.sequenceBits} bits at bit ${layout.sequenceField.shift}) of an ID under the ${layoutNote}.`,
  );
  const shiftTick = wide ? `tick::numeric * ${1n << BigInt(x.tsShift)}` : `tick << ${x.tsShift}`;
  add(
    'min_id_ms',
    'ms bigint',
    idType,
    `DECLARE
  tick bigint;
BEGIN
  IF ms < ${x.epoch} OR ms >= ${x.expires} THEN
    RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = format(
      'FLURRY_E_TIME_OUT_OF_RANGE: Unix ms %s is %s; the ${layout.name} layout holds times from ${x.range}. Give a time in that range.',
      ms, CASE WHEN ms < ${x.epoch} THEN 'before the layout''s epoch' ELSE 'past the layout''s end of life' END);
  END IF;
  tick := (ms - ${x.epoch}) / ${x.unit};
  RETURN ${shiftTick};
END`,
    `The smallest ID of the Unix ms instant (rounded down to the unit) under the ${layoutNote}; SQLSTATE 22008 outside ${x.epochIso} .. ${x.expiresIso}.`,
    'LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE',
  );
  add(
    'max_id_ms',
    'ms bigint',
    idType,
    `SELECT ${p}min_id_ms(ms) ${wide ? '+' : '|'} ${x.nonTime}`,
    `The largest ID of the Unix ms instant (every field but the timestamp all ones) under the ${layoutNote}.`,
  );
  const toMs = TO_MS.postgres;
  add(
    'min_id',
    't timestamptz',
    idType,
    `SELECT ${p}min_id_ms(${toMs})`,
    `The smallest ID of the instant t (rounded down to the unit) under the ${layoutNote}: WHERE id >= ${p}min_id(from) AND id < ${p}min_id(to).`,
  );
  add(
    'max_id',
    't timestamptz',
    idType,
    `SELECT ${p}max_id_ms(${toMs})`,
    `The largest ID of the instant t (rounded down to the unit) under the ${layoutNote}.`,
  );
  return done(
    idType,
    `-- Flurry SQL functions for the ${layoutNote}; PostgreSQL 11+.\n` +
      `-- IDs are ${idType}. Generated by flurry sql --dialect postgres; see docs/sql.md.\n`,
  );
}

function mysqlSql(layout: Layout, p: string): LayoutSql {
  const x = factsOf(layout);
  const idType = 'BIGINT UNSIGNED';
  const { add, done } = functionSet('mysql', p);
  const field = (shift: number, bits: number): string => `((id >> ${shift}) & ${(1n << BigInt(bits)) - 1n})`;
  const layoutNote = `layout ${layout.name} (${layout.toFieldsString()}, epoch ${x.epochIso}, unit ${layout.unit})`;
  add(
    'unix_ms',
    `id ${idType}`,
    'BIGINT',
    `RETURN ${x.epoch} + ${field(x.tsShift, layout.timestampBits)} * ${x.unit}`,
    `Unix milliseconds of an ID (the start of its tick) under the ${layoutNote}.`,
  );
  add(
    'timestamp',
    `id ${idType}`,
    'DATETIME(3)',
    `RETURN ${mysqlTime(`${p}unix_ms(id)`)}`,
    `The UTC time of an ID (the start of its tick) under the ${layoutNote}.`,
  );
  for (const f of layout.nodeFields) {
    add(
      f.name.toLowerCase(),
      `id ${idType}`,
      f.bits <= 31 ? 'INT' : 'BIGINT',
      `RETURN ${field(f.shift, f.bits)}`,
      `The ${f.name} node field (${f.bits} bits at bit ${f.shift}) of an ID under the ${layoutNote}.`,
    );
  }
  add(
    'sequence',
    `id ${idType}`,
    'INT',
    `RETURN ${field(layout.sequenceField.shift, layout.sequenceBits)}`,
    `The sequence (${layout.sequenceBits} bits at bit ${layout.sequenceField.shift}) of an ID under the ${layoutNote}.`,
  );
  // SIGNAL's MESSAGE_TEXT holds 128 characters: the code, the time and the allowed range.
  add(
    'min_id_ms',
    'ms BIGINT',
    idType,
    `BEGIN
  IF ms < ${x.epoch} OR ms >= ${x.expires} THEN
    BEGIN
      DECLARE msg VARCHAR(128) DEFAULT LEFT(CONCAT('FLURRY_E_TIME_OUT_OF_RANGE: ms ', ms, ' not in [${x.epochIso}, ${x.expiresIso})'), 128);
      SIGNAL SQLSTATE '22008' SET MESSAGE_TEXT = msg;
    END;
  END IF;
  RETURN CAST(DIV_PLACEHOLDER AS UNSIGNED) << ${x.tsShift};
END`.replace('DIV_PLACEHOLDER', `(ms - ${x.epoch}) DIV ${x.unit}`),
    `The smallest ID of the Unix ms instant (rounded down to the unit) under the ${layoutNote}; SQLSTATE 22008 outside ${x.epochIso} .. ${x.expiresIso}.`,
  );
  add(
    'max_id_ms',
    'ms BIGINT',
    idType,
    `RETURN ${p}min_id_ms(ms) | ${x.nonTime}`,
    `The largest ID of the Unix ms instant (every field but the timestamp all ones) under the ${layoutNote}.`,
  );
  const toMs = TO_MS.mysql;
  add(
    'min_id',
    't DATETIME(3)',
    idType,
    `RETURN ${p}min_id_ms(${toMs})`,
    `The smallest ID of the UTC instant t (rounded down to the unit) under the ${layoutNote}: WHERE id >= ${p}min_id(from) AND id < ${p}min_id(to).`,
  );
  add(
    'max_id',
    't DATETIME(3)',
    idType,
    `RETURN ${p}max_id_ms(${toMs})`,
    `The largest ID of the UTC instant t (rounded down to the unit) under the ${layoutNote}.`,
  );
  return done(
    idType,
    `-- Flurry SQL functions for the ${layoutNote}; MySQL 8 / MariaDB 10.5+.\n` +
      `-- IDs are ${idType}; times are UTC DATETIME(3). Generated by flurry sql --dialect mysql; see docs/sql.md.\n`,
  );
}
