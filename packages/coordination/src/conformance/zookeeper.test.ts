/**
 * The registry conformance suite against a real ZooKeeper (started by the harness on a
 * free loopback port, stopped afterwards; tickTime 500 ms, sessions 1–60 s). Each test
 * uses its own cluster name, so one engine serves them all. The lease TTL (1500 ms) is the
 * holders' session timeout, which this server grants as asked.
 */
import { after } from 'node:test';
import { startEngine } from '../testing/harness.js';
import { ZkSession } from '../drivers/zookeeper-session.js';
import { runHoldersConformance } from './holders.js';
import { runConformance } from './suite.js';

const engine = await startEngine('zookeeper');
after(() => engine.stop());
// The harness returns once the port is open; ZooKeeper may need a few more seconds (under
// load) before it grants sessions. Wait for that here, not in the holders' connect timeout.
await (
  await ZkSession.open({ hosts: [engine.address], url: engine.url, sessionTimeoutMs: 10_000, connectTimeoutMs: 30_000 })
).close();

// A dead holder's session expires at (last contact + 1500 ms), rounded up to the next
// 500 ms tick: within the suite's default 2 s reclaim slack.
runConformance({ name: 'zookeeper', url: () => engine.url, engine, ttlMs: 1500 });
runHoldersConformance({ name: 'zookeeper', url: () => engine.url, engine, ttlMs: 1500 });
