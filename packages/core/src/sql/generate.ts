// SQL that issues IDs inside the database under a node ID leased in the registry table: each session takes a lane (a
// sub-range of the sequence) with an advisory lock, and every call checks the lease token (fencing). See docs/sql.md.
import { validTableName } from '../engines.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions } from '../known-options.js';
import type { Layout } from '../layout/layout.js';
import { sqlPrefix } from './ddl.js';
import { sqlScript } from './functions.js';
import { generatorConsts, type GeneratorSql, type GeneratorSqlOptions } from './generate-shared.js';

export { GENERATOR_RESERVE_MS, type GeneratorSql, type GeneratorSqlOptions } from './generate-shared.js';
import { mysqlGenerator } from './generate-mysql.js';
import { postgresGenerator } from './generate-postgres.js';

/**
 * The default lane count of a layout: the largest power of two up to 16 that leaves every lane at least 16 IDs per tick
 * (twitter: 16 lanes of 256; a 2-bit sequence: 1 lane of 4).
 */
export function generatorLanes(layout: Layout): number {
  let lanes = 1;
  while (lanes < 16 && (layout.maxSequence + 1) / (lanes * 2) >= 16) lanes *= 2;
  return lanes;
}

function bad(what: string, message: string, value: unknown): FlurryError {
  return new FlurryError(ErrorCode.INVALID_OPTION, message, { [what]: String(value) });
}

/** The generator DDL for a leased node; `FLURRY_E_INVALID_OPTION` for a bad table, token, slot, floor or wait bound. */
export function generatorSql(layout: Layout, o: GeneratorSqlOptions): GeneratorSql {
  assertKnownOptions(
    o,
    ['dialect', 'prefix', 'registryTable', 'namespace', 'slot', 'token', 'nodeBits', 'floorMs', 'maxWaitMs', 'lanes'],
    'generatorSql options',
  );
  const p = sqlPrefix(o.prefix);
  if (o.dialect !== 'postgres' && o.dialect !== 'mysql')
    throw bad('dialect', `Unknown SQL dialect ${JSON.stringify(o.dialect)}; use postgres or mysql.`, o.dialect);
  if (!validTableName(o.registryTable))
    throw bad(
      'registryTable',
      `The registry table ${JSON.stringify(o.registryTable)} is not a table name; use letters, digits and _ (optionally schema.table).`,
      o.registryTable,
    );
  if (typeof o.token !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.token))
    throw bad('token', 'The lease token must be 1 to 64 letters, digits, - or _.', o.token);
  if (!Number.isSafeInteger(o.slot) || o.slot < 0)
    throw bad('slot', `slot must be an integer from 0, got ${o.slot}.`, o.slot);
  if (typeof o.namespace !== 'string' || o.namespace.length === 0 || o.namespace.length > 255)
    throw bad('namespace', 'The namespace must be 1 to 255 characters.', o.namespace);
  if (!Number.isSafeInteger(o.floorMs) || o.floorMs < 0)
    throw bad('floorMs', `floorMs must be whole Unix ms from 0, got ${o.floorMs}.`, o.floorMs);
  const maxWaitMs = o.maxWaitMs ?? 1000;
  if (!Number.isSafeInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > 60_000)
    throw bad('maxWaitMs', `maxWaitMs must be an integer from 0 to 60000, got ${maxWaitMs}.`, maxWaitMs);
  if (typeof o.nodeBits !== 'bigint' || o.nodeBits < 0n || o.nodeBits > layout.maxId)
    throw bad('nodeBits', 'nodeBits must be layout.nodeBits(node).', o.nodeBits);
  const lanes = o.lanes ?? generatorLanes(layout);
  const most = Math.min(1024, layout.maxSequence + 1);
  if (!Number.isSafeInteger(lanes) || lanes < 1 || (lanes & (lanes - 1)) !== 0 || lanes > most)
    throw bad(
      'lanes',
      `lanes must be a power of two from 1 to ${most} (the sequence field's size), got ${lanes}.`,
      lanes,
    );
  const c = generatorConsts(layout, o, p, maxWaitMs, lanes);
  const { functions, statements } = o.dialect === 'postgres' ? postgresGenerator(c) : mysqlGenerator(c);
  const header =
    `-- Flurry in-database generator for the layout ${layout.name} (${layout.toFieldsString()}); node slot ${o.slot} of ${o.namespace}\n` +
    `-- leased in ${o.registryTable}; ${lanes} lane(s) of ${c.laneSize} IDs per tick. Free it with: SELECT ${p}release_node();  See docs/sql.md.\n`;
  return { functions, statements, script: sqlScript(o.dialect, header, statements), lanes, laneSize: c.laneSize };
}
