/**
 * `holders()` of the Leaf-scheme driver: Flurry holders while their `flurry-live` node exists,
 * Leaf (Java) servers while their node was written by someone else within
 * {@link LEAF_JAVA_LIVE_MS}. Timing: docs/node-ids.md ("Listing holders").
 */
import type { HolderRecord } from '../driver.js';
import { jsonObject, pickHolder } from './common.js';
import type { ZkSession } from './zookeeper-client.js';
import type { ZkHoldersQuery } from './zookeeper-common.js';
import { numberOr, updatedStamp, zkTimeMs } from './zookeeper-holders.js';
import { parseEndpoint, parseLeafNodeName, parseMeta } from './zookeeper-leaf-names.js';

/**
 * How recently a Leaf (Java) server must have written its node to be listed: two of its 3 s
 * reports (Leaf's own ZooKeeper session is 6 s).
 */
const LEAF_JAVA_LIVE_MS = 6000;

/** Lists the live holders of one Leaf `name` under `q.dir` (`<prefix>/snowflake/<name>`; see the module comment). */
export async function readLeafHolders(session: ZkSession, q: ZkHoldersQuery): Promise<HolderRecord[]> {
  const [forever, live] = await Promise.all([
    session.getChildren(`${q.dir}/forever`, q.opTimeoutMs),
    session.getChildren(`${q.dir}/flurry-live`, q.opTimeoutMs),
  ]);
  const liveSet = new Set(live);
  const nodes = forever
    .map(parseLeafNodeName)
    .filter((n): n is NonNullable<typeof n> => n !== null)
    .sort((a, b) => a.workerId - b.workerId);
  const out = await Promise.all(
    nodes.map(async (n): Promise<HolderRecord | undefined> => {
      const flurry = liveSet.has(n.address);
      const nodePath = `${q.dir}/forever/${n.name}`;
      const [node, liveNode, meta] = await Promise.all([
        session.getData(nodePath, q.opTimeoutMs),
        flurry ? session.getData(`${q.dir}/flurry-live/${n.address}`, q.opTimeoutMs) : Promise.resolve(null),
        session.getData(`${q.dir}/flurry-meta/${n.address}`, q.opTimeoutMs),
      ]);
      if (!node) return undefined;
      const since = Math.max(0, q.now() - zkTimeMs(node.stat.mtime));
      if (!flurry && since >= LEAF_JAVA_LIVE_MS) return undefined; // an address not served now
      // Without a Flurry holder, the node's last writer was Flurry (released, or its session
      // ended) when the meta record matches the node's version: not a Leaf server.
      if (!flurry && meta && parseMeta(meta.data)?.foreverVersion === node.stat.version) return undefined;
      if (flurry && !liveNode) return undefined; // its session ended meanwhile
      const v = jsonObject(liveNode?.data.toString('utf8'));
      const sessionTimeoutMs = numberOr(v.sessionTimeoutMs);
      const mark = Math.max(
        parseEndpoint(node.data, nodePath, q.url),
        (meta && parseMeta(meta.data)?.highWaterMs) || 0,
      );
      return {
        slot: n.workerId,
        holder: flurry ? { address: n.address, ...pickHolder(v) } : { address: n.address, version: 'leaf' },
        heldSinceMs: numberOr(v.claimedAt),
        renewedAtMs: updatedStamp(meta?.data),
        sinceRenewalMs: since,
        sinceRenewalErrorMs: null,
        expiresInMs: flurry && sessionTimeoutMs !== null ? Math.max(0, sessionTimeoutMs - since) : null,
        ttlMs: null,
        highWaterMs: mark,
      };
    }),
  );
  return out.filter((h): h is HolderRecord => h !== undefined);
}
