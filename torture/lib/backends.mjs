// Registry backends under torture and the engines behind them (real servers started by
// the coordination package's harness on free loopback ports, one of each per run).
import { existsSync } from 'node:fs';
import { dist, tempDir } from './util.mjs';

/**
 * Every registry backend, in report order.
 * @example for (const b of ALL_BACKENDS) console.log(b);
 */
export const ALL_BACKENDS = ['file', 'zookeeper', 'zookeeper+leaf', 'etcd', 'redis', 'postgres', 'mariadb'];

/**
 * Backends whose store is a SQL database (started with the harness's `startDatabase`, reached
 * through a `postgres://` or `mysql://` registry URL on a table of their own).
 * @example DATABASES.has('mariadb'); // true
 */
export const DATABASES = new Set(['postgres', 'mariadb']);

/**
 * The engine a backend needs (null for the embedded file registry).
 * @example engineOf('zookeeper+leaf'); // 'zookeeper'
 */
export const engineOf = (backend) =>
  ({
    file: null,
    zookeeper: 'zookeeper',
    'zookeeper+leaf': 'zookeeper',
    etcd: 'etcd',
    redis: 'redis',
    postgres: 'postgres',
    mariadb: 'mariadb',
  })[backend];

/**
 * Starts engines on demand and hands out registry URLs.
 * @example const engines = new Engines(console.error); const url = await engines.url('redis'); await engines.stopAll();
 */
export class Engines {
  constructor(log) {
    this.log = log;
    this.started = new Map(); // kind -> Promise<RunningEngine>
    this.harness = null;
  }

  async loadHarness() {
    if (!this.harness) {
      if (!existsSync(dist.testing))
        throw new Error(`the engine harness is not built (${dist.testing}); run npm run build`);
      this.harness = await import(dist.testing);
    }
    return this.harness;
  }

  /** The running engine of `kind`, started once (in the background when `prefetch`). */
  engine(kind) {
    if (!this.started.has(kind)) {
      const p = (async () => {
        const h = await this.loadHarness();
        const t0 = performance.now();
        const e = DATABASES.has(kind) ? await h.startDatabase(kind) : await h.startEngine(kind);
        this.log(`engine ${kind} up on ${e.address} in ${Math.round(performance.now() - t0)} ms`);
        return e;
      })();
      p.catch(() => undefined);
      this.started.set(kind, p);
    }
    return this.started.get(kind);
  }

  /** A private engine (for fault scenarios that kill and stall it); the caller stops it. */
  async privateEngine(kind) {
    const h = await this.loadHarness();
    return DATABASES.has(kind) ? h.startDatabase(kind) : h.startEngine(kind);
  }

  /** A registry URL for `backend`; file registries get a fresh directory each call. */
  async url(backend, engine) {
    if (backend === 'file') return `file:${tempDir('file-registry')}`;
    const e = engine ?? (await this.engine(engineOf(backend)));
    if (backend === 'zookeeper+leaf') return e.url.replace(/^zookeeper:/, 'zookeeper+leaf:');
    // The database's URL (mysql:// for MariaDB) on a table of the torture run's own.
    if (DATABASES.has(backend)) return `${e.url}?table=flurry_torture`;
    return e.url;
  }

  async stopAll() {
    for (const p of this.started.values()) {
      try {
        const e = await p;
        await e.stop();
      } catch {
        /* failed to start or already gone */
      }
    }
    this.started.clear();
  }
}
