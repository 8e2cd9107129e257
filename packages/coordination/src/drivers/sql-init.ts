/** `flurry registry init URL`'s library side: create and check a SQL registry's table, or print its DDL. */
import { systemClock, SQL_SCHEMES } from '@flurry/core';
import { registryError } from '../errors.js';
import { loadEngineDriver } from '../open-registry.js';
import { registryTableDdl } from './sql-common.js';
import { parseSqlUrl } from '../url.js';

/** What {@link initSqlRegistry} did (`url` without its password). */
export interface SqlRegistryInit {
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

/** The DDL (`CREATE TABLE IF NOT EXISTS …`) of a SQL registry URL's table, without connecting; `FLURRY_E_REGISTRY_URL` for anything else. */
export function sqlRegistryDdl(url: string): string {
  const p = sqlOnly(url);
  return registryTableDdl(p.dialect, p.table);
}

/** Connects to the SQL registry of `url`, creates its table if missing and checks its columns (registry error codes). */
export async function initSqlRegistry(url: string, opts: { connectTimeoutMs?: number } = {}): Promise<SqlRegistryInit> {
  const p = sqlOnly(url);
  const create = await loadEngineDriver(p.dialect, p.redacted);
  const driver = await create(url, { clock: systemClock, connectTimeoutMs: opts.connectTimeoutMs ?? 5000 });
  await driver.close();
  return { url: p.redacted, dialect: p.dialect, table: p.table, ddl: registryTableDdl(p.dialect, p.table) };
}
