/**
 * The SQL stores (PostgreSQL, MySQL/MariaDB) on Leaf's own `leaf_alloc` table, allocating with Leaf's
 * transaction statement for statement; an allocation whose COMMIT is unacknowledged is never issued from
 * (docs/segments.md, "PostgreSQL and MySQL/MariaDB: Leaf's own table, unchanged").
 */
import { quoteSqlTable, sqlErrorClass, type SqlDialect, type SqlPool, type SqlSession } from '@flurry/core';
import { sequenceError } from '../errors.js';
import { allocationFrom, MAX_ID, type Allocation, type KeyInfo, type SegmentStore } from '../store.js';

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

/** Options every SQL store takes. */
export interface SqlStoreOptions {
  timeoutMs: number;
  createTable: boolean;
  table: string;
  /** The URL without password, for messages. */
  description: string;
}

function errText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return `${typeof code === 'string' ? `${code}: ` : ''}${err.message}`;
  }
  return String(err);
}

/** Runs `fn` on a fresh session with a deadline; on timeout or error the session is destroyed. */
async function withSession<T>(
  pool: SqlPool,
  o: SqlStoreOptions,
  what: string,
  fn: (s: SqlSession, stage: { at: string; skipped?: { start: string; end: string } }) => Promise<T>,
  key?: string,
): Promise<T> {
  const stage: { at: string; skipped?: { start: string; end: string } } = { at: 'connect' };
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
    if (isAuth(pool, err)) {
      throw sequenceError(
        'AUTH',
        `the ${pool.dialect} store ${o.description} refused the credentials (${errText(err)}); check the user and password in the URL`,
        { store: o.description },
      );
    }
    const outcomeUnknown = stage.at === 'commit';
    throw sequenceError(
      'STORE_UNAVAILABLE',
      `the ${pool.dialect} store ${o.description} did not complete ${what}${key !== undefined ? ` for key "${key}"` : ''} ` +
        `(${timedOut ? `no answer within ${o.timeoutMs} ms` : errText(err)})` +
        (outcomeUnknown ? '; the allocation may have committed, so its range is skipped' : '') +
        (what === 'the table check'
          ? `; check that ${pool.dialect} runs there and is reachable from this host, then retry (an outage, not bad input)`
          : '; numbers keep coming from memory while any are buffered; retry later'),
      {
        store: o.description,
        stage: stage.at,
        outcomeUnknown,
        retryAfterMs: 1000,
        ...(key !== undefined ? { key } : {}),
      },
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
  const step = Number(row.step);
  const ut = row.update_time;
  return {
    key,
    maxId,
    step,
    description: typeof row.description === 'string' ? row.description : null,
    updateTime: ut instanceof Date ? ut : typeof ut === 'string' ? new Date(ut) : null,
  };
}

/**
 * Opens a SQL store: checks the connection and the table (creating Leaf's table when `createTable` and it is
 * missing).
 */
export async function openSqlStore(pool: SqlPool, o: SqlStoreOptions): Promise<SegmentStore> {
  const t = quoteSqlTable(pool.dialect, o.table);
  const columns = `SELECT biz_tag, max_id, step, description, update_time FROM ${t}`;
  try {
    await withSession(pool, o, 'the table check', async (s) => {
      try {
        await s.query(`${columns} WHERE 1 = 0`, []);
        return;
      } catch (err) {
        if (!o.createTable) throw tableError(err);
      }
      // A fresh session: a failed statement aborts a PostgreSQL transaction block (not used here, but keep it plain).
      let ddlError: unknown;
      try {
        await s.query(leafDdl(pool.dialect, o.table), []);
      } catch (err) {
        // Several processes opening at once race on CREATE TABLE IF NOT EXISTS (PostgreSQL then reports a
        // duplicate type or key); the check below decides whether the table is there.
        if (isAuth(pool, err)) throw err;
        ddlError = err;
      }
      try {
        await s.query(`${columns} WHERE 1 = 0`, []);
      } catch (err) {
        throw tableError(ddlError ?? err);
      }
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

  let closed = false;
  const open = (): void => {
    if (closed) throw sequenceError('CLOSED', `the ${pool.dialect} store ${o.description} was closed`);
  };

  return {
    kind: pool.dialect,
    description: o.description,
    async allocate(key: string, step?: number): Promise<Allocation> {
      open();
      return withSession(
        pool,
        o,
        'an allocation',
        async (s, stage) => {
          await s.query('BEGIN', []);
          stage.at = 'update';
          // Leaf's statements (IDAllocMapper.updateMaxId / updateMaxIdByCustomStep, getLeafAlloc), unchanged.
          const upd =
            step === undefined
              ? await s.query(`UPDATE ${t} SET max_id = max_id + step WHERE biz_tag = ?`, [key])
              : await s.query(`UPDATE ${t} SET max_id = max_id + ? WHERE biz_tag = ?`, [step, key]);
          if (upd.affected === 0) {
            await s.query('ROLLBACK', []);
            throw sequenceError(
              'KEY_UNKNOWN',
              `the sequence key "${key}" does not exist in ${o.table} (${o.description}); create it first ` +
                `(sequences.create or flurry sequences create), or turn autoCreate on`,
              { key },
            );
          }
          stage.at = 'select';
          const sel = await s.query(`SELECT biz_tag, max_id, step FROM ${t} WHERE biz_tag = ?`, [key]);
          const row = sel.rows[0];
          if (!row) throw new Error(`the row of "${key}" vanished inside the transaction`);
          const info = rowInfo(row, pool.dialect);
          const a = allocationFrom(key, info.maxId, step ?? info.step, pool.dialect);
          stage.skipped = { start: a.start.toString(), end: a.end.toString() };
          stage.at = 'commit';
          await s.query('COMMIT', []);
          return a;
        },
        key,
      );
    },
    async create(key, c) {
      open();
      return withSession(
        pool,
        o,
        'a key creation',
        async (s) => {
          try {
            await s.query(
              `INSERT INTO ${t} (biz_tag, max_id, step, description, update_time) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)`,
              [key, c.start.toString(), c.step, c.description],
            );
          } catch (err) {
            if (sqlErrorClass(pool.dialect, err) === 'duplicate') {
              throw sequenceError('KEY_EXISTS', `the sequence key "${key}" already exists in ${o.table}`, { key });
            }
            throw err;
          }
          const sel = await s.query(`${columns} WHERE biz_tag = ?`, [key]);
          return rowInfo(sel.rows[0], pool.dialect);
        },
        key,
      );
    },
    async show(key) {
      open();
      return withSession(
        pool,
        o,
        'a key lookup',
        async (s) => {
          const sel = await s.query(`${columns} WHERE biz_tag = ?`, [key]);
          return sel.rows[0] ? rowInfo(sel.rows[0], pool.dialect) : undefined;
        },
        key,
      );
    },
    async list() {
      open();
      return withSession(pool, o, 'the key listing', async (s) => {
        const sel = await s.query(`${columns} ORDER BY biz_tag`, []);
        return sel.rows.map((r) => rowInfo(r, pool.dialect));
      });
    },
    async handBack(key, segmentEnd, firstUnused) {
      open();
      if (firstUnused >= segmentEnd || segmentEnd > MAX_ID) return false;
      return withSession(
        pool,
        o,
        'a hand-back',
        async (s) => {
          const r = await s.query(`UPDATE ${t} SET max_id = ? WHERE biz_tag = ? AND max_id = ?`, [
            firstUnused.toString(),
            key,
            segmentEnd.toString(),
          ]);
          return r.affected === 1;
        },
        key,
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
