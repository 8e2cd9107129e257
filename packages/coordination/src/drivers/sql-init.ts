/**
 * `flurry registry init URL`'s library side: creates the registry table of a `postgres://`
 * or `mysql://` registry (if it does not exist) and checks its columns, or returns the DDL to
 * hand to an administrator when the application's user may not create tables.
 */
import { systemClock, SQL_SCHEMES } from '@flurry/core';
import { registryError } from '../errors.js';
import { loadEngineDriver } from '../open-registry.js';
import { registryTableDdl } from './sql-common.js';
import { parseSqlUrl } from '../url.js';

/** What {@link initSqlRegistry} did. */
export interface SqlRegistryInit {
  /** The URL without its password. */
  readonly url: string;
  readonly dialect: 'postgres' | 'mysql';
  readonly table: string;
  readonly ddl: string;
}

function sqlOnly(url: string): ReturnType<typeof parseSqlUrl> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || SQL_SCHEMES[scheme] === undefined) {
    throw registryError(
      'URL_INVALID',
      `registry init applies to SQL registries only (postgres://, postgresql://, mysql://, mariadb://); ` +
        `${scheme === undefined ? 'the URL has no scheme' : `"${scheme}:" registries need no table`}`,
      { scheme },
    );
  }
  return parseSqlUrl(url);
}

/**
 * The DDL of a SQL registry URL's table, without connecting (for `flurry registry init --print`).
 * Throws `FLURRY_E_REGISTRY_URL` for anything but a valid SQL registry URL.
 *
 * @example
 * ```ts
 * sqlRegistryDdl('mysql://app@db/orders?table=flurry_nodes'); // 'CREATE TABLE IF NOT EXISTS `flurry_nodes` (…'
 * ```
 */
export function sqlRegistryDdl(url: string): string {
  const p = sqlOnly(url);
  return registryTableDdl(p.dialect, p.table);
}

/**
 * Connects to the SQL registry of `url`, creates its table if it does not exist (`CREATE TABLE
 * IF NOT EXISTS`) and checks that it has every registry column. Rejects with the registry's
 * coded errors (`FLURRY_E_REGISTRY_URL`, `…_AUTH`, `…_UNREACHABLE`, `…_CORRUPT`,
 * `…_CLIENT_MISSING`), never showing the password.
 *
 * @example
 * ```ts
 * await initSqlRegistry('mysql://admin:pw@127.0.0.1:3306/orders', { connectTimeoutMs: 5000 });
 * ```
 */
export async function initSqlRegistry(url: string, opts: { connectTimeoutMs?: number } = {}): Promise<SqlRegistryInit> {
  const p = sqlOnly(url);
  const create = await loadEngineDriver(p.dialect, p.redacted);
  const driver = await create(url, { clock: systemClock, connectTimeoutMs: opts.connectTimeoutMs ?? 5000 });
  await driver.close();
  return { url: p.redacted, dialect: p.dialect, table: p.table, ddl: registryTableDdl(p.dialect, p.table) };
}
