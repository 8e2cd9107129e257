/**
 * The SQL stores on Leaf's own table and statements; an allocation whose COMMIT is unacknowledged is never issued
 * from (docs/segments.md, "PostgreSQL and MySQL/MariaDB: Leaf's own table, unchanged").
 */
import { quoteSqlTable, sqlErrorClass, sqlPool, type SqlDialect, type SqlPool, type SqlSession } from '@flurry/core';
import { authRefused, keyUnknown, loadStoreClient, sequenceError, storeUnavailable } from '../errors.js';
import { allocationFrom, MAX_ID, type Allocation, type KeyInfo, type SegmentStore } from '../store.js';
import type { ParsedStoreUrl } from '../url.js';

/** Leaf's CREATE TABLE (its README's DDL, verbatim but for IF NOT EXISTS), in each dialect's types. */
function leafDdl(dialect: SqlDialect, table: string): string {
  const t = quoteSqlTable(dialect, table);
  if (dialect === 'postgres')
    return (
      `CREATE TABLE IF NOT EXISTS ${t} (biz_tag varchar(128) NOT NULL DEFAULT '' PRIMARY KEY, max_id bigint NOT NULL DEFAULT 1, ` +
      `step int NOT NULL, description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)`
    );
  return (
    `CREATE TABLE IF NOT EXISTS ${t} (\n` +
    "  `biz_tag` varchar(128) NOT NULL DEFAULT '',\n" +
    "  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
    '  `step` int(11) NOT NULL,\n' +
    '  `description` varchar(256) DEFAULT NULL,\n' +
    '  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n' +
    '  PRIMARY KEY (`biz_tag`)\n' +
    ') ENGINE=InnoDB'
  );
}

// Refused credentials, MySQL's 1044 (no access to the database) included.
function isAuth(pool: SqlPool, err: unknown): boolean {
  const c = sqlErrorClass(pool.dialect, err);
  return c === 'auth' || (c === 'denied' && (err as { errno?: unknown }).errno === 1044);
}

type SqlStoreOptions = { timeoutMs: number; table: string; description: string };

function errText(err: unknown): string {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return err instanceof Error ? `${typeof code === 'string' ? `${code}: ` : ''}${err.message}` : String(err);
}

/** Runs `fn` on a fresh session with a deadline; on timeout or error the session is destroyed. */
async function withSession<T>(
  pool: SqlPool,
  o: SqlStoreOptions,
  what: string,
  key: string | undefined,
  fn: (s: SqlSession, stage: { at: string }) => Promise<T>,
): Promise<T> {
  const stage = { at: 'connect' };
  let session: SqlSession | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const work = (async () => {
    session = await pool.connect();
    if (timedOut) {
      session.destroy();
      throw new Error('timed out');
    }
    return fn(session, stage);
  })();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`no answer within ${o.timeoutMs} ms`));
    }, o.timeoutMs);
  });
  try {
    const out = await Promise.race([work, deadline]);
    session?.release();
    return out;
  } catch (err) {
    work.catch(() => undefined);
    if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('FLURRY_E_')) {
      session?.release(); // a coded refusal (unknown key, existing key) after a clean rollback: the session is healthy
      throw err;
    }
    session?.destroy();
    if (isAuth(pool, err)) throw authRefused(pool.dialect, o.description, ` (${errText(err)})`);
    const cause = `(${timedOut ? `no answer within ${o.timeoutMs} ms` : errText(err)})`;
    const skipped = stage.at === 'commit' ? 'the allocation may have committed' : undefined;
    const connecting = what === 'the table check' ? pool.dialect : '';
    throw storeUnavailable(
      what,
      { store: o.description, engine: pool.dialect, key, cause, connecting, skipped, stage: stage.at },
      err,
    );
  } finally {
    clearTimeout(timer);
  }
}

function rowInfo(row: Record<string, unknown>, store: string): KeyInfo {
  const key = String(row.biz_tag);
  let maxId: bigint;
  try {
    maxId = BigInt(row.max_id as string | number | bigint);
  } catch {
    throw sequenceError('STORE_CORRUPT', `the ${store} store holds max_id ${String(row.max_id)} for key "${key}"`, {
      key,
    });
  }
  const ut = row.update_time;
  return {
    key,
    maxId,
    step: Number(row.step),
    description: typeof row.description === 'string' ? row.description : null,
    updateTime: ut instanceof Date ? ut : typeof ut === 'string' ? new Date(ut) : null,
  };
}

/** Checks that the table has Leaf's columns, creating it first when missing and `createTable`; ends the pool on failure. */
async function checkTable(pool: SqlPool, o: SqlStoreOptions, columns: string, createTable: boolean): Promise<void> {
  try {
    await withSession(pool, o, 'the table check', undefined, async (s) => {
      const check = (): Promise<unknown> => s.query(`${columns} WHERE 1 = 0`, []);
      const missing = await check().then(
        () => false,
        (err: unknown) => {
          if (!createTable) throw tableError(err);
          return true;
        },
      );
      if (!missing) return;
      // Several processes opening at once race on CREATE TABLE IF NOT EXISTS (PostgreSQL then reports a
      // duplicate type or key); the check below decides whether the table is there.
      let ddlError: unknown;
      await s.query(leafDdl(pool.dialect, o.table), []).catch((err: unknown) => {
        if (isAuth(pool, err)) throw err;
        ddlError = err;
      });
      await check().catch((err: unknown) => {
        throw tableError(ddlError ?? err);
      });
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  function tableError(err: unknown): Error {
    if (isAuth(pool, err)) return err as Error;
    return sequenceError(
      'STORE_CORRUPT',
      `the table ${o.table} in ${o.description} is missing or lacks Leaf's columns biz_tag, max_id, step, description, update_time ` +
        `(${errText(err)}); create it with Leaf's DDL (docs/segments.md) or let Flurry create it (createTable: true)`,
      { store: o.description, table: o.table },
    );
  }
}

/** Opens a SQL store: the client, the connection, the table (created when missing and `createTable`). */
export async function openSqlStore(
  p: Extract<ParsedStoreUrl, { kind: 'postgres' | 'mysql' }>,
  { timeoutMs, createTable }: { timeoutMs: number; createTable: boolean },
): Promise<SegmentStore> {
  const load = (): Promise<unknown> => (p.kind === 'postgres' ? import('pg') : import('mysql2/promise'));
  const client = await loadStoreClient(p.kind, p.redacted, load);
  const pool = sqlPool(p.kind, client, { ...p, size: p.poolSize, connectTimeoutMs: timeoutMs });
  const o: SqlStoreOptions = { timeoutMs, table: p.table, description: p.redacted };
  const t = quoteSqlTable(pool.dialect, o.table);
  const columns = `SELECT biz_tag, max_id, step, description, update_time FROM ${t}`;
  await checkTable(pool, o, columns, createTable);

  let closed = false;
  const run = async <T>(
    what: string,
    key: string | undefined,
    fn: (s: SqlSession, stage: { at: string }) => Promise<T>,
  ) => {
    if (closed) throw sequenceError('CLOSED', `the ${pool.dialect} store ${o.description} was closed`);
    return withSession(pool, o, what, key, fn);
  };

  return {
    kind: pool.dialect,
    description: o.description,
    allocate: (key, step) =>
      run('an allocation', key, async (s, stage): Promise<Allocation> => {
        await s.query('BEGIN', []);
        stage.at = 'update';
        // Leaf's statements (IDAllocMapper.updateMaxId / updateMaxIdByCustomStep, getLeafAlloc), unchanged.
        const upd =
          step === undefined
            ? await s.query(`UPDATE ${t} SET max_id = max_id + step WHERE biz_tag = ?`, [key])
            : await s.query(`UPDATE ${t} SET max_id = max_id + ? WHERE biz_tag = ?`, [step, key]);
        if (upd.affected === 0) {
          await s.query('ROLLBACK', []);
          throw keyUnknown(key, `${o.table} (${o.description})`);
        }
        stage.at = 'select';
        const sel = await s.query(`SELECT biz_tag, max_id, step FROM ${t} WHERE biz_tag = ?`, [key]);
        const row = sel.rows[0];
        if (!row) throw new Error(`the row of "${key}" vanished inside the transaction`);
        const info = rowInfo(row, pool.dialect);
        const a = allocationFrom(key, info.maxId, step ?? info.step, pool.dialect);
        stage.at = 'commit';
        await s.query('COMMIT', []);
        return a;
      }),
    create: (key, c) =>
      run('a key creation', key, async (s) => {
        const insert = `INSERT INTO ${t} (biz_tag, max_id, step, description, update_time) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)`;
        await s.query(insert, [key, c.start.toString(), c.step, c.description]).catch((err: unknown) => {
          if (sqlErrorClass(pool.dialect, err) !== 'duplicate') throw err;
          throw sequenceError('KEY_EXISTS', `the sequence key "${key}" already exists in ${o.table}`, { key });
        });
        const sel = await s.query(`${columns} WHERE biz_tag = ?`, [key]);
        return rowInfo(sel.rows[0], pool.dialect);
      }),
    show: (key) =>
      run('a key lookup', key, async (s) => {
        const sel = await s.query(`${columns} WHERE biz_tag = ?`, [key]);
        return sel.rows[0] ? rowInfo(sel.rows[0], pool.dialect) : undefined;
      }),
    list: () =>
      run('the key listing', undefined, async (s) =>
        (await s.query(`${columns} ORDER BY biz_tag`, [])).rows.map((r) => rowInfo(r, pool.dialect)),
      ),
    async handBack(key, segmentEnd, firstUnused) {
      if (!closed && (firstUnused >= segmentEnd || segmentEnd > MAX_ID)) return false;
      return run('a hand-back', key, async (s) => {
        const args = [firstUnused.toString(), key, segmentEnd.toString()];
        return (await s.query(`UPDATE ${t} SET max_id = ? WHERE biz_tag = ? AND max_id = ?`, args)).affected === 1;
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
