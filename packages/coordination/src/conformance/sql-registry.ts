/**
 * What the PostgreSQL and MySQL conformance files share: the test database seen as a
 * conformance engine (kill/restart for the engine-restart test).
 *
 * @example
 * ```ts
 * const db = await startDatabase('postgres');
 * runConformance({ name: 'postgres', url: () => db.url, engine: asConformanceEngine(db) });
 * ```
 */
import type { RunningEngine } from '../testing/harness.js';
import type { RunningDatabase } from '../testing/databases.js';

/**
 * A running test database as the conformance suite's engine (the suite only kills, restarts
 * and looks at the process).
 *
 * @example
 * ```ts
 * runConformance({ name: 'mysql', url: () => db.url, engine: asConformanceEngine(db) });
 * ```
 */
export function asConformanceEngine(db: RunningDatabase): RunningEngine {
  return {
    kind: db.kind as unknown as RunningEngine['kind'],
    port: db.port,
    url: db.url,
    address: db.address,
    dataDir: db.dataDir,
    get process() {
      return db.process;
    },
    kill: () => db.kill(),
    restart: () => db.restart(),
    pause: () => db.pause(),
    resume: () => db.resume(),
    stop: () => db.stop(),
  };
}
