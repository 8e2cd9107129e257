/**
 * The PostgreSQL registry driver, on `pg` (node-postgres): node-ID leases as rows of a table
 * (see {@link SqlRegistryDriver} in sql-common.ts for the table and the statements). Lease
 * expiry is judged by the **database server's clock** (`now()`), so the holders' clock skew
 * does not matter; a renewal only succeeds while the token matches and the lease has not
 * expired. PostgreSQL commits durably before it acknowledges (unless `synchronous_commit` is
 * off), and a synchronous standby keeps that promise across a failover; an asynchronous one
 * can lose the last claims like Redis can.
 *
 * Connections come from a small pool (4); each statement is bounded by `connectTimeoutMs`
 * on the client side (`query_timeout`), and a connection whose statement timed out or broke
 * is destroyed, so a restarted server is reconnected to on the next call.
 *
 * URLs: `postgres://[user[:password]@]host[:port]/database[?table=name&sslmode=…]`.
 */
import pg from 'pg';
import { openSqlDriver, type SqlDriverOptions, type SqlEngine, type SqlResult } from './sql-common.js';
import { startSqlFactory } from './sql-factory.js';

function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof pg.DatabaseError && typeof code === 'string' ? code : undefined;
}

/**
 * Connects to PostgreSQL and returns a registry driver (the table is created on first use
 * unless `createTable: false`). Rejects with `FLURRY_E_REGISTRY_URL`, `…_AUTH`,
 * `…_UNREACHABLE` or `…_CORRUPT`, naming the URL without its password.
 */
export async function createPostgresDriver(url: string | URL, opts: SqlDriverOptions) {
  const { url: parsed, address } = startSqlFactory(url, opts, 'postgres', 'createPostgresDriver');
  const pool = new pg.Pool({
    ...address,
    ...(parsed.sslmode === 'disable'
      ? { ssl: false }
      : { ssl: { rejectUnauthorized: parsed.sslmode === 'verify-full', servername: parsed.host } }),
    max: 4,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: Math.ceil(opts.connectTimeoutMs),
    query_timeout: Math.ceil(opts.connectTimeoutMs),
    application_name: 'flurry-registry',
    keepAlive: true,
  });
  // An idle connection that breaks (server restarted) is dropped by the pool; only log it.
  pool.on('error', (err: Error) => {
    opts.logger?.warn({ url: parsed.redacted, err: err.message }, 'PostgreSQL connection error');
  });
  const listening = new WeakSet<pg.PoolClient>();
  const engine: SqlEngine = {
    dialect: 'postgres',
    name: 'PostgreSQL',
    url: parsed,
    async withConn(fn) {
      const client = await pool.connect();
      if (!listening.has(client)) {
        // A checked-out connection whose socket breaks (server killed) emits 'error' on the
        // client, which the pool only handles while the client is idle: without a listener
        // the process would crash. The failure surfaces on the query, which destroys it.
        listening.add(client);
        client.on('error', (err: Error) => {
          opts.logger?.warn({ url: parsed.redacted, err: err.message }, 'PostgreSQL connection error');
        });
      }
      let broken: Error | undefined;
      try {
        return await fn({
          async query(sql, params): Promise<SqlResult> {
            let n = 0;
            try {
              const r = await client.query(
                sql.replace(/\?/g, () => `$${++n}`),
                params as unknown[],
              );
              return {
                rows: r.rows as Record<string, unknown>[],
                affected: r.rowCount ?? 0,
                fields: r.fields.map((f) => f.name),
              };
            } catch (err) {
              if (sqlState(err) === undefined) broken = err instanceof Error ? err : new Error(String(err));
              throw err;
            }
          },
        });
      } finally {
        client.release(broken);
      }
    },
    async end() {
      await pool.end();
    },
  };
  return openSqlDriver(engine, opts);
}
