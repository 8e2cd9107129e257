/** `openRegistry(url, opts)`: the backend the URL names; an engine's client is loaded only when used. */
import path from 'node:path';
import { ENGINE_CLIENTS, FlurryError, loadClient } from '@flurry/core';
import type { RegistryDriver } from './driver.js';
import type { EngineDriverOptions } from './drivers/common.js';
import { errorText, registryError } from './errors.js';
import { openFileDriver } from './drivers/file.js';
import { createStaticDriver, k8sOrdinal } from './drivers/static.js';
import type { Registry } from './lease-types.js';
import { LeaseRegistry } from './registry.js';
import { resolveRegistryOptions, type RegistryOptions } from './options.js';
import { defaultStateDir } from './state-dir.js';
import { parseRegistryUrl } from './url.js';

type Factory = (url: string, opts: EngineDriverOptions) => Promise<RegistryDriver>;

/** Each engine's driver factory (a literal `import()`, so bundlers keep its module) and its client. */
const ENGINES = {
  zookeeper: [() => import('./drivers/zookeeper.js').then((m) => m.createZooKeeperDriver), 'zookeeper'],
  'zookeeper+leaf': [() => import('./drivers/zookeeper-leaf.js').then((m) => m.createLeafDriver), 'zookeeper'],
  etcd: [() => import('./drivers/etcd.js').then((m) => m.createEtcdDriver), 'etcd'],
  redis: [() => import('./drivers/redis.js').then((m) => m.createRedisDriver), 'redis'],
  postgres: [() => import('./drivers/postgres.js').then((m) => m.createPostgresDriver), 'postgres'],
  mysql: [() => import('./drivers/mysql.js').then((m) => m.createMysqlDriver), 'mysql'],
} satisfies Record<string, [() => Promise<Factory>, keyof typeof ENGINE_CLIENTS]>;

/** Loads an engine driver factory; `FLURRY_E_REGISTRY_CLIENT_MISSING` without its client library. */
export async function loadEngineDriver(kind: keyof typeof ENGINES, redactedUrl: string): Promise<Factory> {
  const [load, client] = ENGINES[kind];
  return loadClient<Factory>(client, `the ${kind} registry (${redactedUrl})`, load, (message, pkg, err) => {
    const msg = errorText(err);
    const code = (err as NodeJS.ErrnoException).code;
    const missing = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && msg.includes(pkg);
    const text = missing ? message : `cannot load the ${kind} driver for ${redactedUrl}: ${msg}`;
    return registryError('CLIENT_MISSING', text, { url: redactedUrl, package: pkg }, err);
  });
}

/**
 * Opens a registry by URL. Rejects with a coded error naming the URL without its password: `FLURRY_E_REGISTRY_URL`,
 * `…_UNREACHABLE`, `…_AUTH`, `…_CLIENT_MISSING`, `…_OPTION`, `…_STATIC_NODE` (k8s: without a pod ordinal).
 *
 * @example
 * ```ts
 * const registry = await openRegistry('file:', { cluster: 'orders' });
 * const gen = await leasedGenerator({ registry, layout: 'twitter' });
 * ```
 */
export async function openRegistry(url: string, opts: RegistryOptions = {}): Promise<Registry> {
  const parsed = parseRegistryUrl(url);
  const o = resolveRegistryOptions(opts);
  const stateDir = o.stateDir ?? defaultStateDir();
  let driver: RegistryDriver;
  switch (parsed.kind) {
    case 'file': {
      const dir = parsed.dir ?? path.join(stateDir, 'registry');
      driver = await openFileDriver(dir, { clock: o.clock, timeoutMs: o.connectTimeoutMs, io: o.fileIo });
      break;
    }
    case 'static':
      driver = createStaticDriver({ kind: 'static', slot: parsed.slot, source: parsed.url, stateDir, clock: o.clock });
      break;
    case 'k8s': {
      const { slot, source } = k8sOrdinal(process.env);
      driver = createStaticDriver({ kind: 'k8s', slot, source, stateDir, clock: o.clock });
      break;
    }
    default: {
      const create = await loadEngineDriver(parsed.kind, parsed.redacted);
      try {
        const { clock, connectTimeoutMs, logger } = o;
        driver = await create(parsed.url, { clock, connectTimeoutMs, ...(logger ? { logger } : {}) });
      } catch (err) {
        if (err instanceof FlurryError) throw err;
        throw registryError(
          'UNREACHABLE',
          `cannot open the ${parsed.kind} registry ${parsed.redacted}: ${errorText(err)}`,
          { url: parsed.redacted },
          err,
        );
      }
    }
  }
  return new LeaseRegistry(driver, { ...o, stateDir });
}
