/** `flurry sql`: SQL functions that decode, bound and issue IDs in the database (see {@link SQL_HELP}, docs/sql.md). */
import { layoutSql, uuidSql, type Layout, type LayoutSql, type SqlDialect } from '@flurry/core';
import { parseNodePins } from '../../layout-choice.js';
import { releaseSqlNode, reserveSqlNode } from '../../sql/reserve.js';
import { serverError } from '../../errors.js';
import { allStrings, flagsOf, hasFlag, lastString, refuseFlags, type ParsedCommandLine } from '../args.js';
import { command, layoutOf, LAYOUT_FLAGS, write, type CliIo } from '../io.js';

const FLAGS = {
  ...LAYOUT_FLAGS,
  ...flagsOf('string', 'dialect', 'prefix'),
  generate: { type: 'boolean' },
  ...flagsOf('string', 'registry', 'cluster', 'node'),
  ...flagsOf('boolean', 'apply', 'release'),
  ...flagsOf('string', 'slot', 'max-wait-ms', 'lanes'),
  uuid: { type: 'boolean' },
  ...flagsOf('string', 'node-bits', 'sequence-bits'),
} as const;

export const SQL_HELP = `Usage: flurry sql --dialect postgres|mysql [--layout PRESET | --fields SPEC [--epoch ISO|ms] [--unit 1ms|10ms|1s]] [--prefix flurry_]

Prints the DDL of SQL functions for the layout (names start with the prefix, default flurry_):
  flurry_unix_ms(id), flurry_timestamp(id), flurry_<field>(id) per node field, flurry_sequence(id)
  flurry_min_id(t), flurry_max_id(t), flurry_min_id_ms(ms), flurry_max_id_ms(ms)
IMMUTABLE (PostgreSQL) / DETERMINISTIC (MySQL): WHERE id >= flurry_min_id('2026-11-01Z')
AND id < flurry_min_id('2026-12-01Z') is a range scan on the primary key. A time outside the
layout's life raises SQLSTATE 22008 (FLURRY_E_TIME_OUT_OF_RANGE). MySQL takes and returns
BIGINT UNSIGNED and UTC DATETIME(3); PostgreSQL bigint, or numeric(20,0) for 64-bit layouts.
The mysql script uses DELIMITER (for the mysql/mariadb client). See docs/sql.md.

UUIDv7 columns:
  flurry sql --uuid --dialect postgres|mysql [--prefix flurry_] [--node-bits 16] [--sequence-bits 22]
prints flurry_uuid_unix_ms(u), flurry_uuid_timestamp(u), flurry_uuid_node(u),
flurry_uuid_sequence(u) (NULL for a UUID that is not v7), flurry_uuid_min_at(t),
flurry_uuid_max_at(t) and their _ms forms: WHERE id >= flurry_uuid_min_at('2026-11-01Z') AND
id < flurry_uuid_min_at('2026-12-01Z') is a range scan on a uuid (PostgreSQL) or BINARY(16)
(MySQL) primary key; MySQL adds _text forms for CHAR(36) columns (flurry_uuid_unix_ms_text,
flurry_uuid_timestamp_text, flurry_uuid_min_at_text, flurry_uuid_max_at_text).

In-database generation:
  flurry sql --generate --registry postgres://user:pw@host/db[?table=flurry_nodes] [--cluster NAME]
             [--node FIELD=VALUE] [--layout P | --fields …] [--prefix flurry_] [--max-wait-ms 1000]
             [--lanes N] [--apply]
with --apply reserves a free node ID of the cluster in the registry table (the one flurry
serve --registry postgres://… / mysql://… leases from; holder "sql generator") and runs the
functions above plus a state table <prefix>generator, <prefix>next_id() (PostgreSQL also
<prefix>next_ids(n)) and <prefix>release_node(), which frees the node. Without --apply it is
a preview: it reserves nothing and prints that DDL for the slot free now (its token holds no
lease: run --apply to install). The sequence field is split into --lanes sub-ranges (default
up to 16, each at least 16 IDs per tick); each session takes a lane of its own, the last lane
is shared by the rest. The dialect follows the URL. It prints how to key a table with it:
PostgreSQL id bigint PRIMARY KEY DEFAULT flurry_next_id(); MySQL/MariaDB, which take no
stored function in a DEFAULT, a BEFORE INSERT trigger.

  flurry sql --release --registry URL [--prefix flurry_]
             [--slot N [--cluster NAME] [--node FIELD=VALUE] [--layout P | --fields …]]
frees the generator's node: SELECT <prefix>release_node() of this database's generator, refused
(FLURRY_E_SQL_NODE_IN_USE) while another session holds a lane; --slot N frees the SQL
generator reservation of that slot (through its functions when installed, else the row).
`;

/** Reads `--dialect`: `postgres` (also `postgresql`, `pg`) or `mysql` (also `mariadb`). */
export function sqlDialect(value: string | undefined): SqlDialect {
  const v = (value ?? '').toLowerCase();
  if (v === 'postgres' || v === 'postgresql' || v === 'pg') return 'postgres';
  if (v === 'mysql' || v === 'mariadb') return 'mysql';
  throw serverError(
    'USAGE',
    value === undefined
      ? 'flurry sql needs --dialect postgres or --dialect mysql (mysql also covers MariaDB)'
      : `unknown --dialect "${value.slice(0, 24)}"; use postgres or mysql (mysql also covers MariaDB)`,
  );
}

export const sqlCommand = command(FLAGS, SQL_HELP, async (args, io) => {
  if (args.positionals.length > 0)
    throw serverError('USAGE', `flurry sql takes no positional arguments (got "${args.positionals[0].slice(0, 24)}")`);
  if (hasFlag(args, 'uuid')) return uuidCommand(args, io);
  refuseFlags(args, ['node-bits', 'sequence-bits'], 'goes with --uuid (the UUIDv7 functions)');
  if (hasFlag(args, 'release')) return releaseCommand(args, io);
  const layout = layoutOf(args);
  const prefix = lastString(args, 'prefix');
  if (args.values.slot !== undefined) throw serverError('USAGE', '--slot goes with --release');
  if (!hasFlag(args, 'generate')) {
    const generateOnly = ['registry', 'cluster', 'node', 'apply', 'max-wait-ms', 'lanes'];
    refuseFlags(args, generateOnly, 'goes with --generate (the in-database generator)');
    return write(io.stdout, layoutSql(layout, { dialect: sqlDialect(lastString(args, 'dialect')), prefix }).script);
  }
  const url = registryOf(io, args, '--generate', 'the registry table that leases the node');
  const wait = lastString(args, 'max-wait-ms');
  if (wait !== undefined && !/^\d{1,5}$/.test(wait))
    throw serverError('USAGE', `--max-wait-ms must be an integer from 0 to 60000, got "${wait.slice(0, 24)}"`);
  const lanes = lastString(args, 'lanes');
  const maxLanes = Math.min(1024, layout.maxSequence + 1);
  const n = Number(lanes); // a power of two: one bit set
  if (lanes !== undefined && (!/^\d{1,4}$/.test(lanes) || n < 1 || (n & (n - 1)) !== 0 || n > maxLanes))
    throw serverError(
      'USAGE',
      `--lanes must be a power of two from 1 to ${maxLanes} (this layout's sequence size), got "${lanes.slice(0, 24)}"`,
    );
  const r = await reserveSqlNode({
    url,
    layout,
    ...slotOf(io, args, layout),
    prefix,
    apply: hasFlag(args, 'apply'),
    maxWaitMs: wait === undefined ? undefined : Number(wait),
    lanes: lanes === undefined ? undefined : n,
  });
  const dialect = lastString(args, 'dialect');
  if (dialect !== undefined && sqlDialect(dialect) !== r.decode.dialect)
    throw serverError('USAGE', `--dialect ${dialect} does not match the --registry URL (${r.decode.dialect})`);
  const head = r.reserved
    ? `-- Reserved slot ${r.slot} of ${r.namespace} (node ${JSON.stringify(r.node)}); IDs start after Unix ms ${r.floorMs}.\n`
    : `-- Preview: nothing was reserved. Slot ${r.slot} of ${r.namespace} (node ${JSON.stringify(r.node)}) is free now; IDs would start after Unix ms ${r.floorMs}.\n` +
      `-- Run again with --apply to reserve a slot and install this; run as is, its token holds no lease and next_id() raises FLURRY_E_LEASE_LOST.\n`;
  const lanesLine = `-- ${r.ddl.lanes} lane(s) of ${r.ddl.laneSize} IDs per tick (one per session, the last shared).\n`;
  const applied = `-- Applied ${r.decode.statements.length + r.ddl.statements.length} statements.\n`;
  const tail = hasFlag(args, 'apply') ? applied : r.decode.script + r.ddl.script;
  await write(io.stdout, head + usageComment(r.decode) + lanesLine + tail);
});

async function releaseCommand(args: ParsedCommandLine, io: CliIo): Promise<void> {
  const layout = layoutOf(args);
  refuseFlags(args, ['generate', 'apply', 'max-wait-ms', 'lanes', 'dialect'], 'does not go with --release');
  const url = registryOf(io, args, '--release', "the generator's database");
  const rawSlot = lastString(args, 'slot');
  if (rawSlot !== undefined && !/^\d{1,7}$/.test(rawSlot))
    throw serverError('USAGE', `--slot must be a node ID's slot, an integer from 0; got "${rawSlot.slice(0, 24)}"`);
  if (rawSlot === undefined && (args.values.cluster !== undefined || args.values.node !== undefined))
    throw serverError('USAGE', '--cluster and --node go with --slot (which reservation to free)');
  const r = await releaseSqlNode({
    url,
    prefix: lastString(args, 'prefix'),
    ...(rawSlot !== undefined ? { slot: Number(rawSlot), layout, ...slotOf(io, args, layout) } : {}),
  });
  await write(
    io.stdout,
    `-- Released slot ${r.slot} of ${r.namespace}; its high-water mark is Unix ms ${r.highWaterMs}` +
      (r.how === 'row' ? ' (a reservation whose generator was never installed).\n' : '.\n'),
  );
}

/** `--registry` (or FLURRY_REGISTRY) of `flurry sql --generate|--release`. */
function registryOf(io: CliIo, args: ParsedCommandLine, mode: string, what: string): string {
  const url = lastString(args, 'registry') ?? (io.env.FLURRY_REGISTRY || undefined);
  if (url === undefined)
    throw serverError('USAGE', `flurry sql ${mode} needs --registry postgres://… or mysql://… (${what})`);
  return url;
}

/** The cluster (`--cluster` or FLURRY_CLUSTER) and node pins (`--node`) that name a slot. */
function slotOf(io: CliIo, args: ParsedCommandLine, layout: Layout) {
  const cluster = lastString(args, 'cluster') ?? (io.env.FLURRY_CLUSTER || undefined);
  return { cluster, pin: parseNodePins(allStrings(args, 'node'), layout) };
}

/** `flurry sql --uuid`: the UUIDv7 functions (docs/sql.md, "UUIDv7 columns"). */
async function uuidCommand(args: ParsedCommandLine, io: CliIo): Promise<void> {
  const notUuid = [...Object.keys(LAYOUT_FLAGS), 'generate', 'release', 'registry', 'cluster', 'node'];
  const why = 'does not go with --uuid (the UUIDv7 functions need no layout and no registry)';
  refuseFlags(args, [...notUuid, 'apply', 'slot', 'max-wait-ms', 'lanes'], why);
  const bits = (name: string, min: number, max: number): number | undefined => {
    const v = lastString(args, name);
    if (v === undefined) return undefined;
    if (!/^\d{1,2}$/.test(v) || Number(v) < min || Number(v) > max)
      throw serverError('USAGE', `--${name} must be an integer from ${min} to ${max}, got "${v.slice(0, 24)}"`);
    return Number(v);
  };
  const ddl = uuidSql({
    nodeBits: bits('node-bits', 1, 48),
    sequenceBits: bits('sequence-bits', 12, 42),
    dialect: sqlDialect(lastString(args, 'dialect')),
    prefix: lastString(args, 'prefix'),
  });
  return write(io.stdout, ddl.script);
}

/** The `--` lines on using the generator: an example table `t` keyed by it, and how to free the node. */
// MySQL/MariaDB take no stored function in a column DEFAULT (MariaDB ERROR 1901): a BEFORE INSERT trigger fills it.
function usageComment(sql: Pick<LayoutSql, 'dialect' | 'prefix' | 'idType'>): string {
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
