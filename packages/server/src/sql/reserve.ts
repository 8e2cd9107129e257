// `flurry sql --generate [--apply]` (docs/sql.md): claims a free slot of the cluster for the in-database
// generator and builds (with `apply`: runs) its DDL; without `apply` a preview that writes nothing.
// `flurry sql --release [--slot N]`: frees the generator's node through `<prefix>release_node()`, or a
// reservation whose DDL never ran through its row. A slot a service holds is refused.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  FlurryError,
  generatorSql,
  layoutSql,
  loadClient,
  quoteSqlTable,
  redactLoosely,
  sqlErrorClass,
  sqlPool,
  SQL_SCHEMES,
  type Layout,
} from '@flurry/core';
import { SlotMap, parseSqlUrl, registryError, registryTableDdl, type SqlUrl } from '@flurry/coordination';
import { serverError } from '../errors.js';

const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/** One connection for a SQL registry URL; throws `FLURRY_E_USAGE`, `…_REGISTRY_AUTH` or `…_REGISTRY_UNREACHABLE` (no password shown). */
export async function connectSql(url: string) {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1].toLowerCase() ?? '';
  if (SQL_SCHEMES[scheme] === undefined) {
    throw serverError(
      'USAGE',
      `the --registry URL ${redactLoosely(url)} is not a database URL; the in-database generator needs postgres://… or mysql://…`,
    );
  }
  let u: SqlUrl;
  try {
    u = parseSqlUrl(url);
  } catch (err) {
    throw serverError('USAGE', (err as Error).message);
  }
  const { dialect, table, redacted } = u;
  const client = await loadClient(
    dialect,
    `flurry sql (${redacted})`,
    (): Promise<unknown> => (dialect === 'postgres' ? import('pg') : import('mysql2/promise')),
    (message: string, pkg: string, err: unknown) =>
      registryError('CLIENT_MISSING', message, { url: redacted, package: pkg }, err),
  );
  const pool = sqlPool(dialect, client, { ...u, size: 1, connectTimeoutMs: 10_000, application: 'flurry-sql' });
  try {
    const session = await pool.connect();
    return {
      dialect,
      table,
      redacted,
      query: async (sql: string, params: readonly unknown[] = []) => (await session.query(sql, params)).rows,
      async close() {
        session.release();
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    const msg = firstLine(err).replaceAll(u.password ?? '\u0000', '***');
    // Refused credentials are bad input (exit 2); anything else is the database not answering (exit 1, retry).
    const kind = sqlErrorClass(dialect, err);
    if (kind === 'auth' || kind === 'denied') {
      throw registryError(
        'AUTH',
        `${redacted} refused the credentials (${msg}); check the user and password in the URL (never shown)`,
      );
    }
    throw registryError(
      'UNREACHABLE',
      `cannot connect to ${redacted}: ${msg}; check the host and port, or retry once the database answers`,
    );
  }
}

/** One connection over `pg` or `mysql2` (`?` parameters) to the registry `table` (`?table=`); `redacted`: the URL without its password. */
type SqlConnection = Awaited<ReturnType<typeof connectSql>>;

/** A column's value as text ('' for anything that is not a string or number). */
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** The node this database's generator under `prefix` holds, if it holds one. */
async function generatorState(
  c: SqlConnection,
  prefix: string,
): Promise<{ namespace: string; slot: number; token: string } | undefined> {
  const [r] = await c
    .query(`SELECT namespace, slot, token FROM ${prefix}generator WHERE id = 1`)
    .catch(() => [] as Record<string, unknown>[]);
  if (!r || r.token === null || r.token === undefined) return undefined;
  return { namespace: String(r.namespace), slot: Number(r.slot), token: text(r.token) };
}

/** A coded error as it is; anything else as `FLURRY_E_SQL_GENERATOR` naming the database and what was being done. */
function generatorError(c: SqlConnection, err: unknown, doing: string): Error {
  if (err instanceof FlurryError) return err;
  return serverError('SQL_GENERATOR', `${c.redacted}: ${firstLine(err)} (while ${doing})`);
}

interface ReserveOptions {
  readonly url: string;
  readonly layout: Layout;
  /** The cluster (namespace prefix) shared with `flurry serve --cluster`; default `default`. */
  readonly cluster?: string;
  /** Pinned node fields (a `datacenter` defaults to 0), as `flurry serve --node`. */
  readonly pin?: Record<string, number>;
  readonly prefix?: string;
  readonly maxWaitMs?: number;
  /** Lanes of the sequence field (a power of two; default `generatorLanes(layout)`). */
  readonly lanes?: number;
  /** Reserve the slot and run the DDL in the database (else a preview: nothing is written). */
  readonly apply?: boolean;
}

const truthy = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't';

/** The lease token of a preview's DDL: no registry row ever holds it (real tokens are 32 hex digits). */
const PREVIEW_TOKEN = 'preview';

/** The first Unix ms a new holder of a registry row may issue after: its high-water mark, plus its TTL after an unclean release. */
const floorOf = (row: Record<string, unknown>): number =>
  Number(row.high_water_ms) + (truthy(row.released_cleanly) ? 0 : Number(row.ttl_ms));

const sqlNow = (c: SqlConnection): string => (c.dialect === 'postgres' ? 'now()' : 'CURRENT_TIMESTAMP(3)');

/** `FLURRY_E_SQL_GENERATOR` when a generator already holds a node, no slot is free or fits, or the database is down. */
export async function reserveSqlNode(o: ReserveOptions) {
  const map = SlotMap.create(o.layout, o.cluster ?? 'default', o.pin ?? {});
  const prefix = o.prefix ?? 'flurry_';
  const c = await connectSql(o.url);
  const t = quoteSqlTable(c.dialect, c.table);
  try {
    if (o.apply) await c.query(registryTableDdl(c.dialect, c.table));
    const state = await generatorState(c, prefix);
    if (state) {
      throw serverError(
        'SQL_GENERATOR',
        `this database already has an in-database generator (${prefix}generator) holding slot ${state.slot} of ${state.namespace}; ` +
          `run SELECT ${prefix}release_node() first, or use another --prefix`,
      );
    }
    const token = o.apply ? randomBytes(16).toString('hex') : PREVIEW_TOKEN;
    for (let attempt = 0; attempt < 5; attempt++) {
      const rows = await c
        .query(
          `SELECT slot, slots, (token IS NOT NULL AND expires_at > ${sqlNow(c)}) AS live, high_water_ms, released_cleanly, ttl_ms FROM ${t} WHERE namespace = ?`,
          [map.namespace],
        )
        .catch((err: unknown) => {
          if (!o.apply && sqlErrorClass(c.dialect, err) === 'no-table') return [] as Record<string, unknown>[]; // a preview creates nothing
          throw err;
        });
      const other = rows.find((r) => Number(r.slots) !== 0 && Number(r.slots) !== map.slots);
      if (other) {
        throw serverError(
          'SQL_GENERATOR',
          `namespace "${map.namespace}" in ${c.table} belongs to a layout with ${String(other.slots)} node IDs, but this layout has ${map.slots}; use another --cluster or table`,
        );
      }
      const live = new Set(rows.filter((r) => truthy(r.live)).map((r) => Number(r.slot)));
      let slot = -1;
      for (let s = 0; s < map.slots && slot < 0; s++) if (!live.has(s)) slot = s;
      if (slot < 0) {
        throw serverError(
          'SQL_GENERATOR',
          `all ${map.slots} node IDs of "${map.namespace}" in ${c.table} are held; free one (stop a holder, or flurry sql --release --slot N for a SQL generator's reservation) or use another --cluster`,
        );
      }
      const at = { o, c, map, prefix, slot, token };
      if (!o.apply) {
        const row = rows.find((r) => Number(r.slot) === slot);
        return reservation(at, row ? floorOf(row) : 0);
      }
      if (!rows.some((r) => Number(r.slot) === slot)) {
        await c.query(
          c.dialect === 'postgres'
            ? `INSERT INTO ${t} (namespace, slot, slots) VALUES (?, ?, ?) ON CONFLICT (namespace, slot) DO NOTHING`
            : `INSERT IGNORE INTO ${t} (namespace, slot, slots) VALUES (?, ?, ?)`,
          [map.namespace, slot, map.slots],
        );
      }
      const floorMs = await claimSlot(at);
      if (floorMs === undefined) continue; // lost a race: scan again
      const r = reservation(at, floorMs);
      for (const s of [...r.decode.statements, ...r.ddl.statements]) await c.query(s);
      return r;
    }
    throw serverError(
      'SQL_GENERATOR',
      `could not reserve a slot of "${map.namespace}" in 5 attempts (other holders kept taking them); retry`,
    );
  } catch (err) {
    throw generatorError(c, err, 'reserving a node for the in-database generator');
  } finally {
    await c.close().catch(() => undefined);
  }
}

/** A free slot found for the generator, and what reserving it needs. */
type SlotAt = { o: ReserveOptions; c: SqlConnection; map: SlotMap; prefix: string; slot: number; token: string };

// Takes the slot in one transaction (undefined when another holder took it first) and resolves to the floor,
// which becomes the row's high-water mark: a release before the DDL ran leaves the next holder after it.
async function claimSlot({ c, map, prefix, slot, token }: SlotAt): Promise<number | undefined> {
  const pgsql = c.dialect === 'postgres';
  const t = quoteSqlTable(c.dialect, c.table);
  const holder = JSON.stringify({
    id: `sql-generator-${token.slice(0, 8)}`,
    role: 'sql generator',
    hostname: hostname(),
    pid: process.pid,
    version: '0.1.0',
    since: new Date().toISOString(),
    ttlMs: null,
    release: `SELECT ${prefix}release_node()`,
    prefix,
  });
  const far = pgsql ? "timestamptz '9999-12-31 00:00:00+00'" : 'FROM_UNIXTIME(2147483000)';
  await c.query('BEGIN');
  try {
    const cur = await c.query(
      `SELECT (token IS NOT NULL AND expires_at > ${sqlNow(c)}) AS live, high_water_ms, released_cleanly, ttl_ms FROM ${t} WHERE namespace = ? AND slot = ? FOR UPDATE`,
      [map.namespace, slot],
    );
    if (cur.length === 0 || truthy(cur[0].live)) {
      await c.query('ROLLBACK');
      return undefined;
    }
    const floorMs = floorOf(cur[0]);
    await c.query(
      `UPDATE ${t} SET slots = ?, token = ?, expires_at = ${far}, holder = ?, released_cleanly = ${pgsql ? 'false' : 'FALSE'}, ttl_ms = 0, ` +
        `high_water_ms = ?, version = version + 1, updated_at = ${sqlNow(c)} WHERE namespace = ? AND slot = ?`,
      [map.slots, token, holder, floorMs, map.namespace, slot],
    );
    await c.query('COMMIT');
    return floorMs;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The slot's node, and the decode and generator DDL (in run order) that issue IDs only after `floorMs`. */
function reservation({ o, c, map, prefix, slot, token }: SlotAt, floorMs: number) {
  const node = map.toNode(slot);
  const decode = layoutSql(o.layout, { dialect: c.dialect, prefix });
  const ddl = generatorSql(o.layout, {
    dialect: c.dialect,
    prefix,
    registryTable: c.table,
    namespace: map.namespace,
    slot,
    token,
    nodeBits: o.layout.nodeBits(node),
    floorMs,
    maxWaitMs: o.maxWaitMs,
    lanes: o.lanes,
  });
  return { reserved: o.apply === true, namespace: map.namespace, slot, node, token, floorMs, decode, ddl };
}

/** Options of {@link releaseSqlNode}: a reserved `slot` to free, whose namespace `layout`, `cluster` and `pin` pick. */
type ReleaseOptions = Pick<ReserveOptions, 'url' | 'prefix' | 'cluster' | 'pin'> & { slot?: number; layout?: Layout };

const PREFIX_RE = /^[a-z][a-z0-9_]{0,39}$/;

/** Runs `<prefix>release_node()`, turning the function's coded refusal into a coded error. */
async function callRelease(c: SqlConnection, prefix: string, at: { namespace: string; slot: number }) {
  let rows: Record<string, unknown>[];
  try {
    rows = await c.query(`SELECT ${prefix}release_node() AS hw`);
  } catch (err) {
    const msg = firstLine(err);
    if (msg.startsWith('FLURRY_E_SQL_NODE_IN_USE'))
      throw serverError('SQL_NODE_IN_USE', msg.replace(/^FLURRY_E_SQL_NODE_IN_USE: /, ''), at);
    throw err;
  }
  return { ...at, highWaterMs: Number(rows[0]?.hw), how: 'function' as const };
}

/** The freed slot, its high-water mark and `how` (`row`: the DDL never ran); `…_SQL_NODE_IN_USE` while a lane is held. */
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
    const [row] = await c.query(`SELECT token, holder, high_water_ms FROM ${t} WHERE namespace = ? AND slot = ?`, [
      map.namespace,
      o.slot,
    ]);
    let holder: { role?: unknown; prefix?: unknown; release?: unknown } = {};
    try {
      holder = ((typeof row?.holder === 'string' ? JSON.parse(row.holder) : row?.holder) as typeof holder | null) ?? {};
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
