// `flurry sql --release [--slot N]` (docs/sql.md): frees the generator's node through `<prefix>release_node()`,
// or a reservation whose DDL never ran through its row. A slot a service holds is refused.
import { quoteSqlTable, type Layout } from '@flurry/core';
import { SlotMap } from '@flurry/coordination';
import { serverError } from '../errors.js';
import { connectSql, generatorError, generatorState, sqlNow, text, type SqlConnection } from './reserve.js';

/** Options of {@link releaseSqlNode}. */
export interface ReleaseOptions {
  readonly url: string;
  /** The generator's prefix (default `flurry_`). */
  readonly prefix?: string;
  /** A reserved slot to free; with it `layout`, `cluster` and `pin` pick the namespace. */
  readonly slot?: number;
  readonly layout?: Layout;
  readonly cluster?: string;
  readonly pin?: Record<string, number>;
}

const PREFIX_RE = /^[a-z][a-z0-9_]{0,39}$/;

/** Runs `<prefix>release_node()`, turning the function's coded refusal into a coded error. */
async function callRelease(c: SqlConnection, prefix: string, at: { namespace: string; slot: number }) {
  let rows: Record<string, unknown>[];
  try {
    rows = await c.query(`SELECT ${prefix}release_node() AS hw`);
  } catch (err) {
    const msg = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    if (msg.startsWith('FLURRY_E_SQL_NODE_IN_USE'))
      throw serverError('SQL_NODE_IN_USE', msg.replace(/^FLURRY_E_SQL_NODE_IN_USE: /, ''), at);
    throw err;
  }
  return { ...at, highWaterMs: Number(rows[0]?.hw), how: 'function' as const };
}

/**
 * Frees a generator's node: the slot and its high-water mark (Unix ms) after the release, `how` it was freed (`row`: a
 * reservation whose DDL never ran); throws `FLURRY_E_SQL_NODE_IN_USE` (a lane held), `…_SQL_GENERATOR` (nothing to free), `…_USAGE`.
 */
export async function releaseSqlNode(o: ReleaseOptions) {
  const prefix = o.prefix ?? 'flurry_';
  if (!PREFIX_RE.test(prefix))
    throw serverError('USAGE', `--prefix must be lower-case letters, digits and _, starting with a letter`);
  const c = await connectSql(o.url);
  try {
    if (o.slot === undefined) {
      const st = await generatorState(c, prefix);
      if (!st)
        throw serverError(
          'SQL_GENERATOR',
          `this database has no in-database generator holding a node under the prefix ${prefix} (${prefix}generator); ` +
            'to free a reservation whose DDL never ran, give its --slot N (and --cluster); flurry status --cluster lists reservations',
        );
      return await callRelease(c, prefix, st);
    }
    if (!o.layout) throw serverError('USAGE', '--slot needs the layout of the cluster');
    const map = SlotMap.create(o.layout, o.cluster ?? 'default', o.pin ?? {});
    if (!Number.isSafeInteger(o.slot) || o.slot < 0 || o.slot >= map.slots)
      throw serverError('USAGE', `--slot must be an integer from 0 to ${map.slots - 1} (this layout's node IDs)`);
    const t = quoteSqlTable(c.dialect, c.table);
    const at = { namespace: map.namespace, slot: o.slot };
    const rows = await c.query(`SELECT token, holder, high_water_ms FROM ${t} WHERE namespace = ? AND slot = ?`, [
      map.namespace,
      o.slot,
    ]);
    const row = rows[0];
    let holder: { role?: unknown; prefix?: unknown; release?: unknown } = {};
    try {
      holder =
        typeof row?.holder === 'string'
          ? (JSON.parse(row.holder) as typeof holder)
          : ((row?.holder as typeof holder | undefined) ?? {});
    } catch {
      /* not a generator's */
    }
    if (!row || row.token === null || row.token === undefined || holder.role !== 'sql generator')
      throw serverError(
        'SQL_GENERATOR',
        `slot ${o.slot} of ${map.namespace} in ${c.table} holds no SQL generator's reservation` +
          (row?.token ? ' (a service holds it; a service frees its slot when it stops)' : ' (it is free)'),
      );
    const named =
      typeof holder.prefix === 'string'
        ? holder.prefix
        : /^SELECT ([a-z][a-z0-9_]*)release_node\(\)$/.exec(text(holder.release))?.[1];
    const owner = named && PREFIX_RE.test(named) ? named : prefix;
    const st = await generatorState(c, owner);
    // Installed: its function fences the lanes first (and refuses while a session holds one).
    if (st && st.token === text(row.token)) return await callRelease(c, owner, at);
    // Not installed: nothing was issued under this token (a new set-up writes a new token, so
    // this one can never be installed later); the row's high-water mark is the floor.
    const pg = c.dialect === 'postgres';
    await c.query(
      `UPDATE ${t} SET token = NULL, expires_at = NULL, holder = NULL, released_cleanly = ${pg ? 'true' : 'TRUE'}, ttl_ms = 0, ` +
        `version = version + 1, updated_at = ${sqlNow(c)} WHERE namespace = ? AND slot = ? AND token = ?`,
      [map.namespace, o.slot, row.token],
    );
    return { ...at, highWaterMs: Number(row.high_water_ms), how: 'row' as const };
  } catch (err) {
    throw generatorError(c, err, "releasing an in-database generator's node");
  } finally {
    await c.close().catch(() => undefined);
  }
}
