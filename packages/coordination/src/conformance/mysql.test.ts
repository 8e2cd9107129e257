/**
 * The registry conformance suite against a real MariaDB (started by the harness on a free
 * loopback port, stopped afterwards), through a `mysql://` registry URL. Each test uses its own
 * cluster name, so one table serves them all.
 */
import { after } from 'node:test';
import { startDatabase } from '../testing/databases.js';
import { runHoldersConformance } from './holders.js';
import { runConformance } from './suite.js';
import { asConformanceEngine, runSqlRegistryTests } from './sql-registry.js';

const db = await startDatabase('mariadb');
after(() => db.stop());

runConformance({
  name: 'mysql',
  url: () => `${db.url}?table=flurry_conformance`,
  engine: asConformanceEngine(db),
  // A database answers slower than etcd or Redis on a loaded machine (first connection,
  // transaction, fsync): leases twice as long as the default 1500 ms, every bound follows.
  ttlMs: 3_000,
});
runSqlRegistryTests('mysql', db);
runHoldersConformance({
  name: 'mysql',
  url: () => `${db.url}?table=flurry_holders`,
  engine: asConformanceEngine(db),
  ttlMs: 3_000,
});
