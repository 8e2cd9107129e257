/**
 * The registry conformance suite against a real ZooKeeper through the Leaf-compatible
 * registry (`zookeeper+leaf://`). The Leaf name is the suite's cluster (a fresh one per
 * test, so worker IDs start at 0 each time); the local worker-ID caches and lock files go
 * to a temporary directory.
 *
 * In Leaf's scheme a worker ID belongs to an address (`ip:port`) for good: it is never
 * recycled to another address. The suite is therefore run three times:
 *
 * 1. every holder with its own address: 16 distinct worker IDs, exhaustion (4 worker IDs,
 *    6 addresses: the 5th and 6th address get numbers that do not fit), the engine killed
 *    and restarted, and zero duplicates at full speed;
 * 2. "SIGKILL": the victim and the taker share one address (the victim's restarted
 *    service), the filler has another: the taker gets the dead holder's worker ID only
 *    after its session expired;
 * 3. "high-water": every holder has the same address, one after the other, so each gets
 *    the same worker ID and must respect the stored timestamp (Leaf's start-up check).
 *
 * Skipped, because Leaf's scheme does not promise them:
 * - "SIGKILL"/"high-water" with distinct addresses: a dead holder's worker ID never goes
 *   to another address (run 2 and 3 instead);
 * - "SIGSTOP": the taker must be another process taking the paused holder's worker ID,
 *   i.e. with the same address; on one host the paused process still owns that address
 *   (and its lock file), so nothing may take it. The cross-host case (the ephemeral node
 *   expires, the woken holder is told LEASE_LOST) is tested in drivers/zookeeper-leaf.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { startEngine } from '../testing/harness.js';
import { ZkSession } from '../drivers/zookeeper-session.js';
import { runHoldersConformance } from './holders.js';
import { runConformance } from './suite.js';

const engine = await startEngine('zookeeper');
const cacheDir = mkdtempSync(path.join(tmpdir(), 'flurry-conf-leaf-cache-'));
after(async () => {
  await engine.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});
// The harness returns once the port is open; ZooKeeper may need a few more seconds (under
// load) before it grants sessions.
await (
  await ZkSession.open({ hosts: [engine.address], url: engine.url, sessionTimeoutMs: 10_000, connectTimeoutMs: 30_000 })
).close();

const url = (): string => `zookeeper+leaf://${engine.address}?cacheDir=${encodeURIComponent(cacheDir)}`;
const NOT_RECYCLED = "Leaf never gives a worker ID to another address; run below with the dead holder's own address";
const SIGSTOP =
  'on one host a paused holder still owns its address (and lock file), so no process may take its worker ID; the cross-host case is in drivers/zookeeper-leaf.test.ts';

runConformance({
  name: 'zookeeper+leaf, one address per holder',
  url,
  engine,
  ttlMs: 1500,
  holderConfig: (i) => ({ holderAddress: `127.0.0.1:${20_000 + i}` }),
  skip: { sigkill: NOT_RECYCLED, sigstop: SIGSTOP, 'high-water': NOT_RECYCLED },
});

// Spawn order of the SIGKILL test: victim (0), filler (1), taker (2, the victim restarted).
runConformance({
  name: "zookeeper+leaf, the dead holder's address comes back",
  url,
  ttlMs: 1500,
  holderConfig: (i) => ({ holderAddress: i === 1 ? '127.0.0.2:8080' : '127.0.0.1:8080' }),
  skip: {
    distinct: 'run above',
    exhausted: 'run above',
    sigstop: SIGSTOP,
    'engine-restart': 'run above',
    'high-water': 'run below',
    'no-duplicates': 'run above',
  },
});

runConformance({
  name: 'zookeeper+leaf, one address restarted',
  url,
  ttlMs: 1500,
  holderConfig: () => ({ holderAddress: '127.0.0.1:8080' }),
  skip: {
    distinct: 'run above',
    exhausted: 'run above',
    sigkill: 'run above',
    sigstop: SIGSTOP,
    'engine-restart': 'run above',
    'no-duplicates': 'run above',
  },
});

runHoldersConformance({
  name: 'zookeeper+leaf',
  url,
  engine,
  ttlMs: 1500,
  holderConfig: (i) => ({ holderAddress: `127.0.0.1:${21_000 + i}` }),
});
