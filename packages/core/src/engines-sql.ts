// The one pool and session layer over `pg` and `mysql2/promise` that the SQL registries, the SQL segment stores and
// `flurry sql` use (docs/architecture.md, "Engine access"). The caller loads the client (`loadClient` with its own
// `import()`) and hands the module in, so core imports no client and keeps no runtime dependency.
import type { SqlDialect } from './sql/ddl.js';

/** How a SQL connection uses TLS: not at all, without certificate checks, or checked against the system CAs. */
export type SqlSslMode = 'disable' | 'require' | 'verify-full';

/** One statement's result, the same for both clients. */
export interface SqlResult {
  readonly rows: Record<string, unknown>[];
  /** Rows inserted, updated or deleted (or selected). */
  readonly affected: number;
  /** The column names of a SELECT. */
  readonly fields: string[];
}

/** A connection checked out of a {@link SqlPool}; statements take `?` placeholders (numbered `$1…` for `pg`). */
export interface SqlSession {
  query(sql: string, params?: readonly unknown[]): Promise<SqlResult>;
  /** Gives the connection back, or drops it if a statement failed without the server's answer (timeout, lost socket). */
  release(): void;
  /** Drops the connection at once (the server rolls an open transaction back). */
  destroy(): void;
}

/** A pool of one engine's connections. */
export interface SqlPool {
  readonly dialect: SqlDialect;
  connect(): Promise<SqlSession>;
  end(): Promise<void>;
}

/** Where and how a {@link SqlPool} connects. */
export interface SqlPoolOptions {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  /** Absent: the client's default. */
  readonly sslmode?: SqlSslMode | undefined;
  readonly size: number;
  readonly connectTimeoutMs: number;
  /** A client-side bound on each statement. */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL's `application_name`. */
  readonly application?: string;
  /** MySQL: sessions and the client's dates in UTC. */
  readonly utc?: boolean;
  /** Statements run once on each new connection. */
  readonly init?: readonly string[];
  /** A connection broke (idle or checked out); the failing statement reports it too. */
  readonly onError?: (err: Error) => void;
}

type Listen = { on(event: 'error', f: (err: Error) => void): unknown };
type PgClient = Listen & {
  query(
    sql: string,
    params: unknown[],
  ): Promise<{ rows: object[]; rowCount: number | null; fields: { name: string }[] }>;
  release(destroy?: boolean): void;
  connection?: { stream?: { destroy(): void } };
};
type MyConn = {
  query(o: object): Promise<[unknown, { name: string }[] | undefined]>;
  release(): void;
  destroy(): void;
  connection: Listen;
};
type Pool<C> = Listen & { end(): Promise<void>; connect(): Promise<C>; getConnection(): Promise<C> };

/** A pool over the loaded `pg` or `mysql2/promise` module (its namespace or default export) for `dialect`. */
export function sqlPool(dialect: SqlDialect, client: unknown, o: SqlPoolOptions): SqlPool {
  const lib = ((client as { default?: unknown }).default ?? client) as Record<string, never>;
  const onError = o.onError ?? (() => undefined);
  const pg = dialect === 'postgres';
  const init = [...(o.utc && !pg ? ["SET time_zone = '+00:00'"] : []), ...(o.init ?? [])];
  const pool = driverPool(lib, pg, o);
  pool.on('error', onError); // an idle connection broke: the pool drops it and the next use reconnects
  const known = new WeakSet<object>();
  // An error the server sent (a SQL error) leaves the connection usable; any other breaks it.
  const fromServer = (err: unknown): boolean =>
    pg
      ? err instanceof (lib.DatabaseError as unknown as new () => Error)
      : typeof (err as { errno?: unknown }).errno === 'number' &&
        (err as { sqlState?: unknown }).sqlState !== undefined;
  return {
    dialect,
    async connect() {
      const conn = await (pg ? pool.connect() : pool.getConnection());
      const listener: Listen = pg ? (conn as PgClient) : (conn as MyConn).connection;
      let broken = false;
      let done = false;
      const end = (drop: boolean): void => {
        if (done) return;
        done = true;
        if (!pg) return drop ? (conn as MyConn).destroy() : conn.release();
        if (drop) (conn as PgClient).connection?.stream?.destroy();
        (conn as PgClient).release(drop);
      };
      const session: SqlSession = {
        async query(sql, params = []) {
          try {
            if (!pg) {
              const [res, fields] = await (conn as MyConn).query({
                sql,
                values: params,
                ...(o.statementTimeoutMs !== undefined && { timeout: Math.ceil(o.statementTimeoutMs) }),
              });
              const rows = Array.isArray(res) ? (res as Record<string, unknown>[]) : [];
              const affected = Array.isArray(res) ? res.length : (res as { affectedRows: number }).affectedRows;
              return { rows, affected, fields: (fields ?? []).map((f) => f.name) };
            }
            let n = 0;
            const r = await (conn as PgClient).query(
              sql.replace(/\?/g, () => `$${++n}`),
              params as unknown[],
            );
            return {
              rows: r.rows as Record<string, unknown>[],
              affected: r.rowCount ?? 0,
              fields: r.fields.map((f) => f.name),
            };
          } catch (err) {
            if (!fromServer(err)) broken = true;
            throw err;
          }
        },
        release: () => end(broken),
        destroy: () => end(true),
      };
      if (!known.has(listener)) {
        // Without a listener, a checked-out connection whose socket breaks would crash the process.
        listener.on('error', onError);
        try {
          for (const s of init) await session.query(s);
        } catch (err) {
          session.release();
          throw err;
        }
        known.add(listener);
      }
      return session;
    },
    end: () => pool.end(),
  };
}

/** The `pg` Pool or the `mysql2` pool, with the TLS mode, size, timeouts and keep-alive of `o`. */
function driverPool(lib: Record<string, never>, pg: boolean, o: SqlPoolOptions): Pool<PgClient | MyConn> {
  const tls = o.sslmode === undefined || (o.sslmode === 'disable' && !pg) ? undefined : o.sslmode;
  const common = { host: o.host, port: o.port, database: o.database, user: o.user, password: o.password };
  const timeout = Math.ceil(o.connectTimeoutMs);
  return pg
    ? new (lib.Pool as new (c: object) => Pool<PgClient>)({
        ...common,
        ...(tls && { ssl: tls !== 'disable' && { rejectUnauthorized: tls === 'verify-full', servername: o.host } }),
        max: o.size,
        idleTimeoutMillis: 30_000,
        connectionTimeoutMillis: timeout,
        ...(o.statementTimeoutMs !== undefined && { query_timeout: Math.ceil(o.statementTimeoutMs) }),
        ...(o.application !== undefined && { application_name: o.application }),
        keepAlive: true,
        allowExitOnIdle: true,
      })
    : (lib.createPool as (c: object) => Pool<MyConn>)({
        ...common,
        ...(tls && { ssl: { rejectUnauthorized: tls === 'verify-full' } }),
        connectionLimit: o.size,
        idleTimeout: 30_000,
        connectTimeout: timeout,
        enableKeepAlive: true,
        supportBigNumbers: true,
        bigNumberStrings: true,
        ...(o.utc && { timezone: 'Z' }),
      });
}
