/** The lease driver of the PostgreSQL and MySQL/MariaDB registries, on core's SQL pool. */
import { randomHex, sqlErrorClass, sqlPool, type SqlErrorClass, type SqlPool, type SqlSession } from '@flurry/core';
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { errorText, registryError } from '../errors.js';
import {
  checkDriverOptions,
  clause,
  ENGINE_DRIVER_OPTION_NAMES,
  EngineDriverBase,
  pickHolder,
  jsonObject,
  type EngineClaimState,
  type EngineFailure,
  type EngineDriverOptions,
  type HighWaterRecord,
} from './common.js';
import {
  holderFromRow,
  quoteTable,
  REGISTRY_COLUMNS,
  registryStatements,
  registryTableDdl,
  type SqlDialect,
} from './sql-table.js';
import { parseSqlUrl, type SqlUrl } from '../url.js';
import { FLURRY_VERSION } from '../version.js';

export * from './sql-table.js';

export interface SqlDriverOptions extends EngineDriverOptions {
  /** Create the table when it is missing (default true). */
  readonly createTable?: boolean;
}

/** The engine's {@link SqlErrorClass}, with a duplicate key, an existing table and a deadlock all a lost `race`. */
export function sqlFailure(
  dialect: SqlDialect,
  err: unknown,
): Exclude<SqlErrorClass, 'duplicate' | 'exists' | 'conflict'> | 'race' {
  const c = sqlErrorClass(dialect, err);
  return c === 'duplicate' || c === 'exists' || c === 'conflict' ? 'race' : c;
}

interface SqlClaimState extends EngineClaimState {
  /** The holder JSON's fields; each renewal rewrites it with its own wall clock (`renewedAtMs`). */
  readonly holder: Record<string, unknown>;
}

const SQL_ENGINES = { postgres: 'PostgreSQL', mysql: 'MySQL' } as const;

/** At most this many slots are tried per scan (a lost race moves on to the next free one). */
const TRIES_PER_SCAN = 32;

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't';
}

/** One row per slot, conditional statements on the database's clock (docs/node-ids.md, "`postgres://` and `mysql://`"). */
export class SqlRegistryDriver extends EngineDriverBase<SqlClaimState, SqlPool, SqlUrl> implements RegistryDriver {
  readonly kind = this.parsed.dialect;
  protected readonly engineName = SQL_ENGINES[this.kind];
  private readonly sql = registryStatements(this.kind, quoteTable(this.kind, this.parsed.table));

  private async withConn<T>(fn: (conn: SqlSession) => Promise<T>): Promise<T> {
    const session = await this.client.connect();
    try {
      return await fn(session);
    } finally {
      session.release();
    }
  }

  protected failure(err: unknown, what: string): EngineFailure {
    const u = this.parsed;
    const msg = errorText(err).split('\n')[0];
    const user = `user "${u.user ?? '(default)'}"`;
    const why = `while trying to ${what} (${clause(msg)})`;
    const known: Partial<Record<string, EngineFailure>> = {
      auth: [
        'AUTH',
        `${this.where} refused the credentials of ${user} ${why}; check the user and password in the URL (the password is never shown)`,
      ],
      denied: [
        'AUTH',
        `${this.where} denied ${user} a privilege ${why}. The user needs SELECT, INSERT and UPDATE on ${u.table}; if it may not create tables, ` +
          `create it once with "flurry registry init URL" as an administrator (the DDL is in docs/node-ids.md)`,
      ],
      'no-database': [
        'URL_INVALID',
        `${this.where}: the database "${u.database}" does not exist (${clause(msg)}); create it or fix the URL`,
      ],
      schema: [
        'CORRUPT',
        `the table ${u.table} in ${this.where} does not fit the Flurry registry layout ${why}. ` +
          `Point ?table= at a registry table (created by "flurry registry init URL") or drop and recreate it`,
      ],
    };
    const failure = sqlFailure(this.kind, err);
    const at = `${u.host}:${u.port}`;
    return (
      known[failure === 'no-table' ? 'schema' : failure] ?? { tried: `${at}, database ${u.database}`, at, message: msg }
    );
  }

  /** Checks that the table exists with every registry column; creates it when it does not and `create`. */
  async prepare(create: boolean): Promise<void> {
    const u = this.parsed;
    const probe = async (): Promise<string[] | undefined> => {
      try {
        return (await this.withConn((c) => c.query(this.sql.probe, []))).fields;
      } catch (err) {
        if (sqlFailure(this.kind, err) === 'no-table') return undefined;
        throw err;
      }
    };
    let fields = await probe();
    if (fields === undefined && create) {
      try {
        await this.withConn((c) => c.query(registryTableDdl(this.kind, u.table), []));
      } catch (err) {
        // Several processes creating the table at once: one wins, the others see it below.
        if (sqlFailure(this.kind, err) !== 'race') throw err;
      }
      fields = await probe();
    }
    if (fields === undefined) {
      const why = create ? 'could not be created in' : 'does not exist in';
      const advice = create ? '' : '; create it with "flurry registry init URL"';
      const details = create ? { url: this.url } : { url: this.url, table: u.table };
      throw registryError('CORRUPT', `the registry table ${u.table} ${why} ${this.where}${advice}`, details);
    }
    const have = new Set(fields.map((f) => f.toLowerCase()));
    const missing = REGISTRY_COLUMNS.filter((col) => !have.has(col));
    if (missing.length > 0) {
      throw registryError(
        'CORRUPT',
        `the table ${u.table} in ${this.where} is not a Flurry registry table: it has no column${missing.length === 1 ? '' : 's'} ` +
          `${missing.join(', ')}. Use ?table= to name another table (a new one is created on first use), or create it with "flurry registry init URL"`,
        { url: this.url, table: u.table, missing },
      );
    }
  }

  /** Refuses a row of another layout of the namespace (another slot count). */
  private checkLayout(req: ClaimRequest, row: Record<string, unknown> | undefined): void {
    const stored = Number(row?.slots ?? 0);
    if (stored === 0 || stored === req.slots) return;
    throw registryError(
      'CORRUPT',
      `namespace "${req.namespace}" in ${this.where} (table ${this.parsed.table}) belongs to a layout with ${stored} node IDs, ` +
        `but this layout leases ${req.slots}: another layout of the same cluster must not share its node IDs. Use another cluster name ` +
        `or table, or delete the namespace's rows once no process of the old layout runs`,
      { url: this.url, namespace: req.namespace, storedSlots: stored, slots: req.slots },
    );
  }

  protected claimSlot(req: ClaimRequest): Promise<Claim> {
    if (req.slots > 2 ** 31) throw registryError('OPTION', `slots must be at most 2^31 (got ${req.slots})`, {});
    const token = randomHex(16);
    const live = async () => {
      const rows = (await this.withConn((c) => c.query(this.sql.scan, [req.namespace]))).rows;
      rows.forEach((r) => this.checkLayout(req, r));
      const held = rows.filter((r) => truthy(r.live) && Number(r.slot) < req.slots);
      return new Map(held.map((r) => [Number(r.slot), jsonObject(typeof r.holder === 'string' ? r.holder : null)]));
    };
    return this.scanClaim(req, TRIES_PER_SCAN, (slot) => this.tryClaimSlot(req, slot, token), live);
  }

  /** Takes one slot without locking a live row (read, then a conditional INSERT or versioned UPDATE), or undefined. */
  private async tryClaimSlot(req: ClaimRequest, slot: number, token: string): Promise<Claim | undefined> {
    const claimedAt = this.opts.clock.now();
    const holder = {
      ...pickHolder(req.holder),
      version: FLURRY_VERSION,
      since: new Date(claimedAt).toISOString(),
      ttlMs: req.ttlMs,
    };
    const holderJson = JSON.stringify({ ...holder, renewedAtMs: claimedAt });
    try {
      return await this.withConn(async (c) => {
        const row = (await c.query(this.sql.readSlot, [req.namespace, slot])).rows[0];
        this.checkLayout(req, row);
        if (row && truthy(row.live)) return undefined;
        const [p, rec] = this.firstRecord(
          req,
          row && {
            highWaterMs: Number(row.high_water_ms),
            releasedCleanly: truthy(row.released_cleanly),
            ttlMs: Number(row.ttl_ms),
          },
        );
        const mark = [holderJson, rec.highWaterMs, rec.ttlMs];
        const args = row
          ? [req.slots, token, req.ttlMs, ...mark, req.namespace, slot, String(row.version)]
          : [req.namespace, slot, req.slots, token, req.ttlMs, ...mark];
        const written = await c.query(row ? this.sql.take : this.sql.insert, args);
        // 0 rows: taken, changed or inserted by another claimer meanwhile.
        return written.affected === 1 ? this.claimed(token, req, slot, p, { holder }) : undefined;
      });
    } catch (err) {
      if (sqlFailure(this.kind, err) === 'race') return undefined;
      throw err;
    }
  }

  protected async renewSlot(s: SqlClaimState, rec: HighWaterRecord, token: string, ttlMs: number) {
    const holder = JSON.stringify({ ...s.holder, renewedAtMs: rec.updatedAtMs });
    const args = [ttlMs, rec.highWaterMs, rec.ttlMs, holder, s.namespace, s.slot, token];
    const ours = (await this.withConn((c) => c.query(this.sql.renew, args))).affected === 1;
    return ours ? undefined : "expired (by the database's clock) or is held by another token";
  }

  protected async releaseSlot(s: SqlClaimState, rec: HighWaterRecord, token: string): Promise<boolean> {
    const args = [rec.highWaterMs, rec.releasedCleanly, rec.ttlMs, s.namespace, s.slot, token];
    return (await this.withConn((c) => c.query(this.sql.release, args))).affected === 1;
  }

  protected async readHolders(namespace: string): Promise<HolderRecord[]> {
    return (await this.withConn((c) => c.query(this.sql.holders, [namespace]))).rows.map(holderFromRow);
  }

  protected async disconnect(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/** Opens the registry driver of `dialect` on its loaded client and checks (or creates) the registry table. */
export async function createSqlDriver(
  dialect: SqlDialect,
  client: unknown,
  url: string | URL,
  opts: SqlDriverOptions,
): Promise<SqlRegistryDriver> {
  const factory = dialect === 'postgres' ? 'createPostgresDriver' : 'createMysqlDriver';
  checkDriverOptions(opts, factory, [...ENGINE_DRIVER_OPTION_NAMES, 'createTable']);
  const parsed = parseSqlUrl(typeof url === 'string' ? url : url.href);
  if (parsed.dialect !== dialect)
    throw registryError('URL_INVALID', `${parsed.redacted} is not a ${dialect}:// URL`, { url: parsed.redacted });
  const name = SQL_ENGINES[dialect];
  // A small pool; a connection whose bounded statement timed out or broke is dropped (a restart reconnects).
  const pool = sqlPool(dialect, client, {
    ...parsed,
    size: 4,
    connectTimeoutMs: opts.connectTimeoutMs,
    statementTimeoutMs: opts.connectTimeoutMs,
    application: 'flurry-registry',
    utc: true,
    init: dialect === 'mysql' ? ['SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'] : [],
    onError: (err) => opts.logger?.warn({ url: parsed.redacted, err: err.message }, `${name} connection error`),
  });
  const driver = new SqlRegistryDriver(pool, parsed, opts);
  const extra = { host: parsed.host, port: parsed.port };
  const check = () => driver.prepare(opts.createTable !== false);
  return driver.opened(check, 'connect and check the registry table', extra, { table: parsed.table });
}
