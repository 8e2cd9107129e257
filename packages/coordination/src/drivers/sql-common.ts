/**
 * What the PostgreSQL and MySQL/MariaDB registry drivers share: the registry table's layout
 * (its DDL per dialect), the table-name rule and identifier quoting. It imports no client
 * library, so loading it never needs `pg` or `mysql2`; the SQL functions of `flurry sql`
 * (`flurry_next_id()`) lease their node ID in this same table.
 *
 * The table (one row per slot ever claimed; `PRIMARY KEY (namespace, slot)`):
 *
 * | column | type | meaning |
 * |---|---|---|
 * | `namespace` | varchar(255) | the cluster (and pinned fields): `orders`, `orders/datacenter-1` — the key prefix the other registries use |
 * | `slot` | int | the slot, `0..slots-1` |
 * | `slots` | int | how many slots the namespace's layout has (the layout fingerprint: a claim with another count is refused); 0 = not recorded |
 * | `token` | varchar(64) NULL | the holder's random token; NULL = free |
 * | `expires_at` | timestamp(3) NULL | when the lease ends, on the **database server's** clock (`now()` / `CURRENT_TIMESTAMP(3)`) |
 * | `holder` | text NULL | JSON `{ id, hostname, pid, version, since, ttlMs }` of the current holder |
 * | `high_water_ms` | bigint | the highest Unix ms any holder reported (or could have issued up to, while it held the slot) |
 * | `released_cleanly` | boolean | true when the last holder released after reporting its final mark |
 * | `ttl_ms` | bigint | how long past `high_water_ms` an unclean holder may have issued unreported |
 * | `version` | bigint | bumped by every write |
 * | `updated_at` | timestamp(3) | the database's clock at the last write |
 *
 * PostgreSQL uses `timestamptz(3)` for the two timestamps, so that every session compares
 * them with `now()` in absolute time whatever its `TimeZone` setting; MySQL's `TIMESTAMP(3)`
 * is stored in UTC and converted per session the same way as `CURRENT_TIMESTAMP(3)`.
 *
 * @example
 * ```ts
 * import { registryTableDdl } from '@flurry/coordination';
 * console.log(registryTableDdl('postgres', 'flurry_nodes'));
 * ```
 */
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FlurryError, assertKnownOptions, optionNames, type Clock } from '@flurry/core';
import type { Claim, ClaimRequest, RegistryDriver } from '../driver.js';
import { registryError } from '../errors.js';
import {
  checkConnectTimeout,
  clause,
  closedError,
  exhaustedError,
  holderFields,
  HOLDERS_LISTED,
  listedHolder,
  MAX_TTL_MS,
  NO_PREVIOUS_HOLDER,
  ownClaim,
  readHolder,
  recordToStore,
  unknownClaimError,
  unreachableAdvice,
  validateClaim,
  type DriverLogger,
  type DriverPhase,
  type PreviousHolder,
} from './common.js';

/**
 * The SQL dialects of the registry table.
 *
 * @example
 * ```ts
 * const d: SqlDialect = 'mysql'; // MySQL 8 and MariaDB 10.5+
 * ```
 */
export type SqlDialect = 'postgres' | 'mysql';

/**
 * The registry table's name when the URL gives no `?table=`.
 *
 * @example
 * ```ts
 * registryTableDdl('postgres', DEFAULT_REGISTRY_TABLE);
 * ```
 */
export const DEFAULT_REGISTRY_TABLE = 'flurry_nodes';

/**
 * The columns of the registry table, in order (the drivers check that an existing table has
 * them all).
 *
 * @example
 * ```ts
 * REGISTRY_COLUMNS.includes('high_water_ms'); // true
 * ```
 */
export const REGISTRY_COLUMNS = [
  'namespace',
  'slot',
  'slots',
  'token',
  'expires_at',
  'holder',
  'high_water_ms',
  'released_cleanly',
  'ttl_ms',
  'version',
  'updated_at',
] as const;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Whether `table` is a valid registry table name: an identifier of letters, digits and `_`
 * (not starting with a digit, at most 63 characters), optionally qualified by a schema
 * (PostgreSQL) or database (MySQL) of the same form: `flurry_nodes`, `ops.flurry_nodes`.
 *
 * @example
 * ```ts
 * validTableName('ops.flurry_nodes'); // true
 * validTableName('x; DROP TABLE y');  // false
 * ```
 */
export function validTableName(table: unknown): table is string {
  if (typeof table !== 'string') return false;
  const parts = table.split('.');
  return parts.length <= 2 && parts.every((p) => IDENT.test(p));
}

/**
 * Quotes a (valid) table name for the dialect: `"ops"."flurry_nodes"` or `` `ops`.`flurry_nodes` ``.
 * Throws `FLURRY_E_REGISTRY_URL` for an invalid name.
 *
 * @example
 * ```ts
 * quoteTable('postgres', 'ops.flurry_nodes'); // '"ops"."flurry_nodes"'
 * ```
 */
export function quoteTable(dialect: SqlDialect, table: string): string {
  if (!validTableName(table)) {
    throw registryError(
      'URL_INVALID',
      `the registry table name "${String(table)}" is invalid: use letters, digits and "_" (not starting with a digit, ` +
        `at most 63 characters), optionally prefixed by a schema: flurry_nodes or ops.flurry_nodes`,
      { table },
    );
  }
  const q = dialect === 'postgres' ? '"' : '`';
  return table
    .split('.')
    .map((p) => `${q}${p}${q}`)
    .join('.');
}

/**
 * The `CREATE TABLE IF NOT EXISTS` statement of the registry table for a dialect (the drivers
 * run it on first use; `flurry registry init URL` runs it by hand; a team whose application
 * user may not create tables runs it as an administrator). Throws `FLURRY_E_REGISTRY_URL` for
 * an invalid table name.
 *
 * @example
 * ```ts
 * const ddl = registryTableDdl('mysql', 'flurry_nodes');
 * // CREATE TABLE IF NOT EXISTS `flurry_nodes` ( `namespace` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, …
 * ```
 */
export function registryTableDdl(dialect: SqlDialect, table: string): string {
  const t = quoteTable(dialect, table);
  if (dialect === 'postgres') {
    return [
      `CREATE TABLE IF NOT EXISTS ${t} (`,
      `  namespace varchar(255) NOT NULL,`,
      `  slot integer NOT NULL CHECK (slot >= 0),`,
      `  slots integer NOT NULL DEFAULT 0,`,
      `  token varchar(64) NULL,`,
      `  expires_at timestamptz(3) NULL,`,
      `  holder text NULL,`,
      `  high_water_ms bigint NOT NULL DEFAULT 0,`,
      `  released_cleanly boolean NOT NULL DEFAULT true,`,
      `  ttl_ms bigint NOT NULL DEFAULT 0,`,
      `  version bigint NOT NULL DEFAULT 0,`,
      `  updated_at timestamptz(3) NOT NULL DEFAULT now(),`,
      `  PRIMARY KEY (namespace, slot)`,
      `)`,
    ].join('\n');
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (`,
    '  `namespace` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,',
    '  `slot` INT NOT NULL,',
    '  `slots` INT NOT NULL DEFAULT 0,',
    '  `token` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,',
    '  `expires_at` TIMESTAMP(3) NULL DEFAULT NULL,',
    '  `holder` TEXT NULL,',
    '  `high_water_ms` BIGINT NOT NULL DEFAULT 0,',
    '  `released_cleanly` BOOLEAN NOT NULL DEFAULT TRUE,',
    '  `ttl_ms` BIGINT NOT NULL DEFAULT 0,',
    '  `version` BIGINT NOT NULL DEFAULT 0,',
    '  `updated_at` TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),',
    '  PRIMARY KEY (`namespace`, `slot`)',
    ') ENGINE=InnoDB',
  ].join('\n');
}

/**
 * One result of a statement, the same for both clients.
 *
 * @example
 * ```ts
 * const r: SqlResult = await conn.query('SELECT 1 AS one', []);
 * r.rows[0].one; // 1
 * ```
 */
export interface SqlResult {
  readonly rows: Record<string, unknown>[];
  /** Rows inserted, updated or deleted. */
  readonly affected: number;
  /** Column names of a SELECT. */
  readonly fields: string[];
}

/**
 * A connection as the shared driver uses it: statements with `?` placeholders (the PostgreSQL
 * adapter numbers them `$1…`).
 *
 * @example
 * ```ts
 * await conn.query('UPDATE t SET version = version + 1 WHERE namespace = ?', ['orders']);
 * ```
 */
export interface SqlConn {
  query(sql: string, params: readonly unknown[]): Promise<SqlResult>;
}

/**
 * What a client adapter (postgres.ts, mysql.ts) gives the shared driver.
 *
 * @example
 * ```ts
 * const engine: SqlEngine = { dialect: 'postgres', name: 'PostgreSQL', url, withConn, classify, end };
 * ```
 */
export interface SqlEngine {
  readonly dialect: SqlDialect;
  /** As messages show it: 'PostgreSQL', 'MySQL'. */
  readonly name: string;
  /** The parsed URL. */
  readonly url: SqlUrlLike;
  /**
   * Runs `fn` on one pooled connection; a connection whose statement failed for a reason
   * other than a plain SQL error (timeout, broken socket) is destroyed, not reused.
   */
  withConn<T>(fn: (conn: SqlConn) => Promise<T>): Promise<T>;
  /** What kind of failure a client error is. */
  classify(err: unknown): SqlFailure;
  /** Closes the pool. */
  end(): Promise<void>;
}

/**
 * The parts of a parsed SQL URL the shared driver needs.
 *
 * @example
 * ```ts
 * const u: SqlUrlLike = { host: '127.0.0.1', port: 5432, database: 'orders', table: 'flurry_nodes', redacted };
 * ```
 */
export interface SqlUrlLike {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user?: string;
  readonly table: string;
  readonly redacted: string;
}

/**
 * Kinds of client failures: refused credentials, missing privilege, no such table or
 * database, a lost race (deadlock, serialization, duplicate key), a statement the table does
 * not fit (a table of another layout), or the engine unreachable (everything else).
 *
 * @example
 * ```ts
 * if (engine.classify(err) === 'auth') throw authError;
 * ```
 */
export type SqlFailure = 'auth' | 'denied' | 'no-table' | 'no-database' | 'race' | 'schema' | 'unreachable';

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

const FLURRY_VERSION = readVersion();

interface SqlClaimState {
  readonly namespace: string;
  readonly slot: number;
  readonly holderId: string;
  readonly prev: PreviousHolder;
}

interface SlotRow {
  slot: number;
  slots: number;
  live: boolean;
  holder: string | null;
}

/** At most this many slots are tried per scan (a lost race moves on to the next free one). */
const TRIES_PER_SCAN = 32;
const SCANS = 3;

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't';
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/**
 * The statements of one dialect on one table (`?` placeholders).
 */
function statements(dialect: SqlDialect, t: string) {
  const pg = dialect === 'postgres';
  const now = pg ? 'now()' : 'CURRENT_TIMESTAMP(3)';
  const plusMs = pg
    ? `now() + (?::float8 * interval '1 millisecond')`
    : 'CURRENT_TIMESTAMP(3) + INTERVAL (? * 1000) MICROSECOND';
  const big = pg ? '?::bigint' : '?';
  const bool = pg ? '?::boolean' : '?';
  const c = (name: string): string => (pg ? name : `\`${name}\``);
  return {
    probe: `SELECT * FROM ${t} WHERE 1 = 0`,
    scan:
      `SELECT ${c('slot')} AS slot, ${c('slots')} AS slots, (${c('token')} IS NOT NULL AND ${c('expires_at')} > ${now}) AS live, ` +
      `${c('holder')} AS holder FROM ${t} WHERE ${c('namespace')} = ?`,
    readSlot:
      `SELECT ${c('slots')} AS slots, (${c('token')} IS NOT NULL AND ${c('expires_at')} > ${now}) AS live, ` +
      `${c('high_water_ms')} AS high_water_ms, ${c('released_cleanly')} AS released_cleanly, ${c('ttl_ms')} AS ttl_ms, ` +
      `${c('version')} AS version FROM ${t} WHERE ${c('namespace')} = ? AND ${c('slot')} = ?`,
    // namespace, slot, slots, token, ttl, holder, hw, ttl_ms
    insert:
      // MySQL: INSERT IGNORE, not ON DUPLICATE KEY UPDATE slot = slot: mysql2 connects with
      // CLIENT_FOUND_ROWS, under which a duplicate key "updated" to its own values still
      // reports 1 affected row, so two claimers racing for a new slot both believed they
      // had inserted it (the loser was caught only by the settle renewal: LEASE_LOST).
      `INSERT ${pg ? '' : 'IGNORE '}INTO ${t} (${['namespace', 'slot', 'slots', 'token', 'expires_at', 'holder', 'high_water_ms', 'released_cleanly', 'ttl_ms', 'version', 'updated_at'].map(c).join(', ')}) ` +
      `VALUES (?, ?, ?, ?, ${plusMs}, ?, ${big}, false, ${big}, 1, ${now}) ` +
      (pg ? 'ON CONFLICT (namespace, slot) DO NOTHING' : ''),
    // slots, token, ttl, holder, hw, ttl_ms, namespace, slot, version read
    take:
      `UPDATE ${t} SET ${c('slots')} = ?, ${c('token')} = ?, ${c('expires_at')} = ${plusMs}, ${c('holder')} = ?, ` +
      `${c('high_water_ms')} = GREATEST(${c('high_water_ms')}, ${big}), ${c('released_cleanly')} = false, ${c('ttl_ms')} = ${big}, ` +
      `${c('version')} = ${c('version')} + 1, ${c('updated_at')} = ${now} WHERE ${c('namespace')} = ? AND ${c('slot')} = ? ` +
      `AND ${c('version')} = ${big} AND (${c('token')} IS NULL OR ${c('expires_at')} <= ${now})`,
    // ttl, hw, ttl_ms, namespace, slot, token
    renew:
      `UPDATE ${t} SET ${c('expires_at')} = ${plusMs}, ${c('high_water_ms')} = GREATEST(${c('high_water_ms')}, ${big}), ` +
      `${c('released_cleanly')} = false, ${c('ttl_ms')} = ${big}, ${c('version')} = ${c('version')} + 1, ${c('updated_at')} = ${now} ` +
      `WHERE ${c('namespace')} = ? AND ${c('slot')} = ? AND ${c('token')} = ? AND ${c('expires_at')} > ${now}`,
    // hw, clean, ttl_ms, namespace, slot, token
    release:
      `UPDATE ${t} SET ${c('token')} = NULL, ${c('expires_at')} = NULL, ${c('holder')} = NULL, ` +
      `${c('high_water_ms')} = GREATEST(${c('high_water_ms')}, ${big}), ${c('released_cleanly')} = ${bool}, ${c('ttl_ms')} = ${big}, ` +
      `${c('version')} = ${c('version')} + 1, ${c('updated_at')} = ${now} ` +
      `WHERE ${c('namespace')} = ? AND ${c('slot')} = ? AND ${c('token')} = ? AND ${c('expires_at')} > ${now}`,
  };
}

/**
 * The lease driver shared by the PostgreSQL and MySQL registries; the client adapters give it
 * an {@link SqlEngine}. Each row of the registry table is one slot of one namespace:
 *
 * - **claim**: one scan of the namespace's rows (`live` judged with the database's clock), then
 *   for the preferred slot and then free slots from a random start: read the row (no lock) and
 *   take it with one conditional statement — `INSERT … ON CONFLICT DO NOTHING` when absent, or
 *   `UPDATE … WHERE version = read AND (token IS NULL OR expires_at <= now())` — writing an
 *   *unclean* mark of at least the claimer's wall clock, so a holder that dies before its first
 *   renewal still leaves a floor. No claimer ever locks a live row, so a claimer stalled
 *   mid-claim never delays the holder's renewal.
 * - **renew**: `UPDATE … WHERE token = ours AND expires_at > now()`: no row → `FLURRY_E_LEASE_LOST`
 *   (fencing: an expired lease is never extended, even if nobody took it yet).
 * - **release**: the same condition; stores the final mark (clean when it covers the previous
 *   holder's window) and frees the row (`token = NULL`).
 * Marks follow the etcd and Redis rule (`recordToStore` in common.ts).
 *
 * @example
 * ```ts
 * const driver = await openSqlDriver(engine, { clock: systemClock, connectTimeoutMs: 5000 });
 * ```
 */
export class SqlRegistryDriver implements RegistryDriver {
  readonly kind: string;
  readonly url: string;
  private closed = false;
  private readonly states = new Map<string, SqlClaimState>();
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly engine: SqlEngine,
    private readonly opts: SqlDriverOptions,
  ) {
    this.kind = engine.dialect;
    this.url = engine.url.redacted;
    this.sql = statements(engine.dialect, quoteTable(engine.dialect, engine.url.table));
  }

  private get where(): string {
    return `${this.engine.name} at ${this.url}`;
  }

  /** Turns a client error into a coded FlurryError (never containing the password). @internal */
  toError(err: unknown, what: string, phase: DriverPhase, extra: Record<string, unknown> = {}): FlurryError {
    if (err instanceof FlurryError) return err;
    const u = this.engine.url;
    const details = { url: this.url, operation: what, ...extra };
    const msg = firstLine(err);
    switch (this.engine.classify(err)) {
      case 'auth':
        return registryError(
          'AUTH',
          `${this.where} refused the credentials of user "${u.user ?? '(default)'}" while trying to ${what} (${clause(msg)}); ` +
            'check the user and password in the URL (the password is never shown)',
          details,
          err,
        );
      case 'denied':
        return registryError(
          'AUTH',
          `${this.where} denied user "${u.user ?? '(default)'}" a privilege while trying to ${what} (${clause(msg)}). ` +
            `The user needs SELECT, INSERT and UPDATE on ${u.table}; if it may not create tables, create it once with ` +
            `"flurry registry init URL" as an administrator (the DDL is in docs/node-ids.md)`,
          details,
          err,
        );
      case 'no-database':
        return registryError(
          'URL_INVALID',
          `${this.where}: the database "${u.database}" does not exist (${clause(msg)}); create it or fix the URL`,
          details,
          err,
        );
      case 'schema':
      case 'no-table':
        return registryError(
          'CORRUPT',
          `the table ${u.table} in ${this.where} does not fit the Flurry registry layout while trying to ${what} (${clause(msg)}). ` +
            `Point ?table= at a registry table (created by "flurry registry init URL") or drop and recreate it`,
          details,
          err,
        );
      default:
        return registryError(
          'UNREACHABLE',
          `${this.where} could not be reached while trying to ${what} (tried ${u.host}:${u.port}, database ${u.database}): ` +
            `${clause(msg)}. ${unreachableAdvice(this.engine.name, `${u.host}:${u.port}`, phase)}`,
          details,
          err,
        );
    }
  }

  /**
   * Checks that the table exists with every registry column; creates it when it does not
   * (`CREATE TABLE IF NOT EXISTS`). Called once when the driver opens.
   */
  async prepare(create: boolean): Promise<void> {
    const u = this.engine.url;
    const probe = async (): Promise<string[] | undefined> => {
      try {
        return (await this.engine.withConn((c) => c.query(this.sql.probe, []))).fields;
      } catch (err) {
        if (this.engine.classify(err) === 'no-table') return undefined;
        throw err;
      }
    };
    let fields = await probe();
    if (fields === undefined) {
      if (!create)
        throw registryError(
          'CORRUPT',
          `the registry table ${u.table} does not exist in ${this.where}; create it with "flurry registry init URL"`,
          { url: this.url, table: u.table },
        );
      try {
        await this.engine.withConn((c) => c.query(registryTableDdl(this.engine.dialect, u.table), []));
      } catch (err) {
        // Several processes creating the table at once: one wins, the others see it below.
        if (this.engine.classify(err) !== 'race') throw err;
      }
      fields = await probe();
      if (fields === undefined)
        throw registryError('CORRUPT', `the registry table ${u.table} could not be created in ${this.where}`, {
          url: this.url,
        });
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

  private assertOpen(): void {
    if (this.closed) throw closedError(this.engine.name, this.url);
  }

  private layoutError(req: ClaimRequest, stored: number): FlurryError {
    return registryError(
      'CORRUPT',
      `namespace "${req.namespace}" in ${this.where} (table ${this.engine.url.table}) belongs to a layout with ${stored} node IDs, ` +
        `but this layout leases ${req.slots}: another layout of the same cluster must not share its node IDs. Use another cluster name ` +
        `or table, or delete the namespace's rows once no process of the old layout runs`,
      { url: this.url, namespace: req.namespace, storedSlots: stored, slots: req.slots },
    );
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    this.assertOpen();
    validateClaim(req, MAX_TTL_MS);
    if (req.slots > 2 ** 31) throw registryError('OPTION', `slots must be at most 2^31 (got ${req.slots})`, {});
    const token = randomBytes(16).toString('hex');
    try {
      return await this.claimWithToken(req, token);
    } catch (err) {
      throw this.toError(err, `claim a slot of "${req.namespace}"`, 'claim');
    }
  }

  private async scan(req: ClaimRequest): Promise<SlotRow[]> {
    const r = await this.engine.withConn((c) => c.query(this.sql.scan, [req.namespace]));
    const rows = r.rows.map((row) => ({
      slot: Number(row.slot),
      slots: Number(row.slots),
      live: truthy(row.live),
      holder: typeof row.holder === 'string' ? row.holder : null,
    }));
    const other = rows.find((row) => row.slots !== 0 && row.slots !== req.slots);
    if (other) throw this.layoutError(req, other.slots);
    return rows;
  }

  private async claimWithToken(req: ClaimRequest, token: string): Promise<Claim> {
    const pref = req.preferredSlot;
    if (pref !== undefined && Number.isSafeInteger(pref) && pref >= 0 && pref < req.slots) {
      const c = await this.tryClaimSlot(req, pref, token);
      if (c) return c;
    }
    let rows: SlotRow[] = [];
    for (let scan = 0; scan < SCANS; scan++) {
      rows = await this.scan(req);
      const live = new Set(rows.filter((r) => r.live && r.slot < req.slots).map((r) => r.slot));
      if (live.size >= req.slots) break;
      const start = req.slots > 1 ? randomInt(0, Math.min(req.slots, 2 ** 47)) : 0;
      let tries = 0;
      // Walks from a random start, skipping live slots: at most live.size + TRIES_PER_SCAN steps.
      for (let i = 0; i < req.slots && tries < TRIES_PER_SCAN; i++) {
        const slot = (start + i) % req.slots;
        if (live.has(slot)) continue;
        tries++;
        const c = await this.tryClaimSlot(req, slot, token);
        if (c) return c;
      }
    }
    const held = rows.filter((r) => r.live && r.slot < req.slots).sort((a, b) => a.slot - b.slot);
    const holders = held
      .slice(0, HOLDERS_LISTED)
      .map((r) => listedHolder(r.slot, r.holder === null ? {} : readHolder(r.holder)));
    throw exhaustedError(this.where, this.url, req, held.length, holders);
  }

  /**
   * Takes one slot, or returns undefined when it is held (or another claimer was faster). Never
   * locks a live row (a claimer stalled mid-claim must not hold up the holder's renewals): the
   * row is read without a lock, then taken by one conditional statement — an `INSERT` that does
   * nothing if the row exists, or an `UPDATE` only if the row is still free or expired and its
   * `version` is still the one read (so the previous holder's mark used is the current one).
   */
  private async tryClaimSlot(req: ClaimRequest, slot: number, token: string): Promise<Claim | undefined> {
    const clock = this.opts.clock;
    const holderJson = JSON.stringify({
      ...holderFields(req.holder),
      version: FLURRY_VERSION,
      since: new Date(clock.now()).toISOString(),
      ttlMs: req.ttlMs,
    });
    let prev: PreviousHolder | undefined;
    try {
      prev = await this.engine.withConn(async (c) => {
        const found = await c.query(this.sql.readSlot, [req.namespace, slot]);
        if (found.rows.length === 0) {
          const p = { ...NO_PREVIOUS_HOLDER };
          const rec = recordToStore(p, 0, req.ttlMs, req.holder.id, clock, false);
          const ins = await c.query(this.sql.insert, [
            req.namespace,
            slot,
            req.slots,
            token,
            req.ttlMs,
            holderJson,
            rec.highWaterMs,
            rec.ttlMs,
          ]);
          return ins.affected === 1 ? p : undefined; // 0: inserted by another claimer meanwhile
        }
        const row = found.rows[0];
        const stored = Number(row.slots);
        if (stored !== 0 && stored !== req.slots) throw this.layoutError(req, stored);
        if (truthy(row.live)) return undefined;
        const p: PreviousHolder = {
          highWaterMs: Number(row.high_water_ms),
          releasedCleanly: truthy(row.released_cleanly),
          ttlMs: Number(row.ttl_ms),
        };
        const rec = recordToStore(p, 0, req.ttlMs, req.holder.id, clock, false);
        const upd = await c.query(this.sql.take, [
          req.slots,
          token,
          req.ttlMs,
          holderJson,
          rec.highWaterMs,
          rec.ttlMs,
          req.namespace,
          slot,
          String(row.version),
        ]);
        return upd.affected === 1 ? p : undefined; // 0: taken or changed by another claimer meanwhile
      });
    } catch (err) {
      if (this.engine.classify(err) === 'race') return undefined;
      throw err;
    }
    if (!prev) return undefined;
    this.states.set(token, { namespace: req.namespace, slot, holderId: req.holder.id, prev });
    return { slot, token, highWaterMs: prev.highWaterMs, releasedCleanly: prev.releasedCleanly };
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = ownClaim(this.states, claim);
    if (!s) throw unknownClaimError(`this ${this.engine.name} driver holds no claim with that token`, claim, this.url);
    if (!Number.isSafeInteger(opts.ttlMs) || opts.ttlMs < 1 || opts.ttlMs > MAX_TTL_MS) {
      throw registryError('OPTION', `renew ttlMs must be an integer in 1..${MAX_TTL_MS} (got ${String(opts.ttlMs)})`, {
        ttlMs: opts.ttlMs,
      });
    }
    const rec = recordToStore(s.prev, opts.highWaterMs, opts.ttlMs, s.holderId, this.opts.clock, false);
    let affected: number;
    try {
      affected = (
        await this.engine.withConn((c) =>
          c.query(this.sql.renew, [opts.ttlMs, rec.highWaterMs, rec.ttlMs, s.namespace, s.slot, claim.token]),
        )
      ).affected;
    } catch (err) {
      throw this.toError(err, `renew slot ${claim.slot} of "${s.namespace}"`, 'renew', { slot: claim.slot });
    }
    if (affected !== 1) {
      this.states.delete(claim.token);
      throw registryError(
        'LEASE_LOST',
        `slot ${claim.slot} of "${s.namespace}" in ${this.where} expired (by the database's clock) or is held by another token; stop issuing and claim again`,
        { url: this.url, slot: claim.slot, namespace: s.namespace },
      );
    }
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = ownClaim(this.states, claim);
    if (!s) return; // already released or lost
    const rec = recordToStore(s.prev, opts.highWaterMs, 0, s.holderId, this.opts.clock, true);
    let affected: number;
    try {
      affected = (
        await this.engine.withConn((c) =>
          c.query(this.sql.release, [
            rec.highWaterMs,
            rec.releasedCleanly,
            rec.ttlMs,
            s.namespace,
            s.slot,
            claim.token,
          ]),
        )
      ).affected;
    } catch (err) {
      throw this.toError(err, `release slot ${claim.slot} of "${s.namespace}"`, 'release', { slot: claim.slot });
    }
    this.states.delete(claim.token);
    if (affected !== 1) {
      this.opts.logger?.warn(
        { url: this.url, slot: s.slot, namespace: s.namespace },
        `${this.engine.name} release: the slot was no longer ours (lease expired); the final high-water mark was not stored`,
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.states.clear();
    await this.engine.end().catch(() => undefined);
  }
}

/**
 * Options of the SQL driver factories (given by `openRegistry`).
 *
 * @example
 * ```ts
 * const opts: SqlDriverOptions = { clock: systemClock, connectTimeoutMs: 5000 };
 * ```
 */
export interface SqlDriverOptions {
  /** Wall time for the high-water marks (the same clock as the generator). */
  clock: Clock;
  /** Bound on connecting and on each statement, in ms. */
  connectTimeoutMs: number;
  logger?: DriverLogger;
  /** Create the table when it is missing (default true). */
  createTable?: boolean;
}

const SQL_DRIVER_OPTION_NAMES = optionNames<SqlDriverOptions>({
  clock: true,
  connectTimeoutMs: true,
  logger: true,
  createTable: true,
});

/**
 * Checks the options of a SQL driver factory before it connects: unknown keys
 * (`FLURRY_E_UNKNOWN_OPTION`, naming the closest known one) and the connect timeout
 * (`FLURRY_E_REGISTRY_OPTION`).
 *
 * @example
 * ```ts
 * checkSqlDriverOptions({ clock: systemClock, connectTimeoutMs: 5000 }, 'createPostgresDriver');
 * ```
 */
export function checkSqlDriverOptions(opts: SqlDriverOptions, factory: string): void {
  assertKnownOptions(opts, SQL_DRIVER_OPTION_NAMES, `${factory} options`);
  checkConnectTimeout(opts.connectTimeoutMs);
}

/**
 * Opens the shared SQL driver on an engine: checks (and creates, unless
 * `createTable: false`) the registry table. On failure the pool is closed and a coded error
 * thrown (`FLURRY_E_REGISTRY_AUTH`, `…_UNREACHABLE`, `…_URL`, `…_CORRUPT`).
 *
 * @example
 * ```ts
 * const driver = await openSqlDriver(engine, { clock: systemClock, connectTimeoutMs: 5000 });
 * ```
 */
export async function openSqlDriver(engine: SqlEngine, opts: SqlDriverOptions): Promise<SqlRegistryDriver> {
  checkSqlDriverOptions(opts, engine.dialect === 'postgres' ? 'createPostgresDriver' : 'createMysqlDriver');
  const driver = new SqlRegistryDriver(engine, opts);
  try {
    await driver.prepare(opts.createTable !== false);
  } catch (err) {
    await driver.close();
    throw driver.toError(err, 'connect and check the registry table', 'connect', {
      host: engine.url.host,
      port: engine.url.port,
    });
  }
  opts.logger?.info({ url: driver.url, table: engine.url.table }, `connected to ${engine.name}`);
  return driver;
}
